#include "ops/upsample/upsample.h"

#include "ops/indexing/indexing.h"

namespace ops {

using shlo::Builder;
using shlo::DType;
using shlo::Shape;
using shlo::Value;

namespace {

// How one dim maps its outputs to inputs: 1 for an identity, k > 1 when
// out[o] = x[o / k] (a repeat), 0 when only a gather expresses it.
int64_t repeat_factor(const std::vector<int64_t>& src, int64_t in) {
  const int64_t out = static_cast<int64_t>(src.size());
  if (out % in != 0) return 0;
  const int64_t k = out / in;
  for (int64_t o = 0; o < out; ++o)
    if (src[o] != o / k) return 0;
  return k;
}

bool half(DType d) { return d == DType::BF16 || d == DType::F16; }

}  // namespace

Value resample_nearest(Builder& b, Value x, const std::vector<std::vector<int64_t>>& src) {
  const int64_t first = x.rank() - static_cast<int64_t>(src.size());
  for (size_t j = 0; j < src.size(); ++j) {
    const int64_t d = first + static_cast<int64_t>(j);
    const int64_t in = x.shape()[d];
    const int64_t k = repeat_factor(src[j], in);
    if (k == 1) continue;
    if (k > 1) {
      // [.., in, ..] -> [.., in, k, ..] -> [.., in * k, ..]
      Shape wide = x.shape();
      wide.insert(wide.begin() + d + 1, k);
      std::vector<int64_t> dims;
      for (int64_t i = 0; i < x.rank(); ++i) dims.push_back(i <= d ? i : i + 1);
      Shape out = x.shape();
      out[d] = in * k;
      x = b.reshape(b.broadcast_in_dim(x, wide, dims), out);
    } else {
      x = index_select(b, x, d, b.constant_i64(src[j]));
    }
  }
  return x;
}

Value resample_nearest_backward(Builder& b, Value grad, const std::vector<std::vector<int64_t>>& src,
                                const Shape& in_shape) {
  const DType dt = grad.dtype();
  Value g = half(dt) ? b.convert(grad, DType::F32) : grad;
  const int64_t first = g.rank() - static_cast<int64_t>(src.size());
  for (int64_t j = static_cast<int64_t>(src.size()) - 1; j >= 0; --j) {
    const int64_t d = first + j;
    const int64_t in = in_shape[d];
    const int64_t k = repeat_factor(src[j], in);
    if (k == 1) continue;
    if (k > 1) {
      Shape split = g.shape();
      split[d] = in;
      split.insert(split.begin() + d + 1, k);
      g = b.reduce(b.reshape(g, split), b.zero(g.dtype()), {d + 1}, "add");
    } else {
      Shape zs = g.shape();
      zs[d] = in;
      g = index_scatter(b, b.constant(g.dtype(), 0, zs), d, b.constant_i64(src[j]), g, Combine::Add, false);
    }
  }
  return half(dt) ? b.convert(g, dt) : g;
}

}  // namespace ops
