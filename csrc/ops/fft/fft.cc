// FFT lowerings (see fft.h).
#include "ops/fft/fft.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "ops/common/lowering.h"

namespace ops {

using shlo::DType;
using shlo::Shape;
using shlo::Type;

namespace {

// Moves `dims` (in order) to the end; returns the permutation used.
std::vector<int64_t> dims_last(int64_t rank, const std::vector<int64_t>& dims) {
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
  perm.insert(perm.end(), dims.begin(), dims.end());
  return perm;
}

std::vector<int64_t> inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

bool identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

Value transpose_if(Builder& b, Value x, const std::vector<int64_t>& perm) {
  return identity(perm) ? x : b.transpose(x, perm);
}

// One stablehlo.fft over the trailing len(lengths) dims (1 to 3 of them).
Value xla_fft(Builder& b, Value x, const char* kind, const std::vector<int64_t>& lengths, DType out_dtype) {
  Shape out = x.shape();
  std::string k(kind);
  if (k == "RFFT") out.back() = lengths.back() / 2 + 1;
  if (k == "IRFFT") out.back() = lengths.back();
  return b.op1(hlo::kFft, {x}, Type{out_dtype, out},
               std::string("fft_type = #stablehlo<fft_type ") + kind + ">, fft_length = " + shlo::i64_array(lengths));
}

// Complex FFT / IFFT of x over dims, in groups of at most three (XLA's limit).
Value c2c_raw(Builder& b, Value x, const std::vector<int64_t>& dims, bool forward) {
  for (size_t start = 0; start < dims.size(); start += 3) {
    std::vector<int64_t> group(dims.begin() + start, dims.begin() + std::min(dims.size(), start + 3));
    std::vector<int64_t> perm = dims_last(x.rank(), group);
    Value t = transpose_if(b, x, perm);
    std::vector<int64_t> lengths(t.shape().end() - group.size(), t.shape().end());
    t = xla_fft(b, t, forward ? "FFT" : "IFFT", lengths, x.dtype());
    x = transpose_if(b, t, inverse(perm));
  }
  return x;
}

// Multiplies a complex or real x by a real factor.
Value scale(Builder& b, Value x, double factor) {
  if (factor == 1.0) return x;
  Value f = b.constant(shlo::is_complex(x.dtype()) ? real_of(x.dtype()) : x.dtype(), factor, x.shape());
  if (shlo::is_complex(x.dtype())) f = b.convert(f, x.dtype());
  return b.mul(x, f);
}

// The factor PyTorch's normalization asks for, times n when XLA's inverse
// transform has already divided by n.
double norm_factor(int64_t normalization, double n, bool xla_inverse) {
  double f = normalization == 1 ? 1.0 / std::sqrt(n) : normalization == 2 ? 1.0 / n : 1.0;
  return xla_inverse ? f * n : f;
}

double signal_size(const Shape& shape, const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(shape[d]);
  return n;
}

}  // namespace

Value fft_c2c(Builder& b, Value x, const std::vector<int64_t>& dims, int64_t normalization, bool forward) {
  if (dims.empty() || shlo::numel(x.shape()) == 0) return x;
  Value y = c2c_raw(b, x, dims, forward);
  return scale(b, y, norm_factor(normalization, signal_size(x.shape(), dims), !forward));
}

Value fft_r2c(Builder& b, Value x, const std::vector<int64_t>& dims, int64_t normalization, bool onesided) {
  DType c = complex_of(x.dtype());
  double n = signal_size(x.shape(), dims);
  if (!onesided) return scale(b, c2c_raw(b, b.convert(x, c), dims, true), norm_factor(normalization, n, false));
  // RFFT over the last dim, then complex FFTs over the others.
  int64_t last = dims.back();
  std::vector<int64_t> perm = dims_last(x.rank(), {last});
  Value t = transpose_if(b, x, perm);
  t = xla_fft(b, t, "RFFT", {t.shape().back()}, c);
  Value y = transpose_if(b, t, inverse(perm));
  std::vector<int64_t> rest(dims.begin(), dims.end() - 1);
  if (!rest.empty()) y = c2c_raw(b, y, rest, true);
  return scale(b, y, norm_factor(normalization, n, false));
}

Value fft_c2r(Builder& b, Value x, const std::vector<int64_t>& dims, int64_t normalization, int64_t last_dim_size) {
  std::vector<int64_t> rest(dims.begin(), dims.end() - 1);
  Value y = rest.empty() ? x : c2c_raw(b, x, rest, false);
  int64_t last = dims.back();
  // IRFFT reads last_dim_size / 2 + 1 inputs along the last dim.
  int64_t need = last_dim_size / 2 + 1;
  if (y.shape()[last] != need) {
    Shape lo(y.rank(), 0), hi = y.shape();
    if (hi[last] > need) {
      hi[last] = need;
      y = b.slice(y, lo, hi, Shape(y.rank(), 1));
    } else {
      Shape pad_hi(y.rank(), 0);
      pad_hi[last] = need - y.shape()[last];
      y = b.pad(y, b.zero(y.dtype()), Shape(y.rank(), 0), pad_hi, Shape(y.rank(), 0));
    }
  }
  std::vector<int64_t> perm = dims_last(y.rank(), {last});
  Value t = transpose_if(b, y, perm);
  t = xla_fft(b, t, "IRFFT", {last_dim_size}, real_of(x.dtype()));
  Value r = transpose_if(b, t, inverse(perm));
  Shape out_shape = r.shape();
  return scale(b, r, norm_factor(normalization, signal_size(out_shape, dims), true));
}

}  // namespace ops
