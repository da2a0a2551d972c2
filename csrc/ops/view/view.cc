#include "ops/view/view.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "ops/common/lowering.h"

namespace ops {

namespace {

// A view is "decomposable" when its non-trivial dims, ordered by stride,
// nest: each stride divides the next larger one and each dim fits inside it.
// Then flat[offset : offset + span] reshaped to `parent` holds the view as
// the leading corner of every dim, read by a plain slice; that covers
// transposes, narrow, select, step slicing, diagonal and expand.
struct Plan {
  bool ok = false;
  std::vector<int64_t> dims;  // view dims with size > 1 and stride != 0, by stride desc
  shlo::Shape parent;         // reshape of the span
  shlo::Shape corner;         // slice limits inside parent
  int64_t span = 1;
};

Plan plan_of(const StridedView& v) {
  Plan p;
  for (size_t i = 0; i < v.sizes.size(); ++i)
    if (v.sizes[i] != 1 && v.strides[i] != 0) p.dims.push_back(static_cast<int64_t>(i));
  for (size_t i = 0; i < v.sizes.size(); ++i)
    if (v.strides[i] < 0) return p;
  std::stable_sort(p.dims.begin(), p.dims.end(), [&](int64_t a, int64_t b) { return v.strides[a] > v.strides[b]; });
  if (p.dims.empty()) {
    p.ok = true;
    p.parent = {1};
    p.corner = {1};
    return p;
  }
  for (size_t j = 1; j < p.dims.size(); ++j) {
    int64_t outer = v.strides[p.dims[j - 1]], inner = v.strides[p.dims[j]];
    if (inner == outer || outer % inner != 0 || v.sizes[p.dims[j]] * inner > outer) return p;
  }
  p.parent.push_back(v.sizes[p.dims[0]]);
  p.corner.push_back(v.sizes[p.dims[0]]);
  for (size_t j = 1; j < p.dims.size(); ++j) {
    p.parent.push_back(v.strides[p.dims[j - 1]] / v.strides[p.dims[j]]);
    p.corner.push_back(v.sizes[p.dims[j]]);
  }
  int64_t last = v.strides[p.dims.back()];
  if (last != 1) {
    p.parent.push_back(last);
    p.corner.push_back(1);
  }
  p.span = v.sizes[p.dims[0]] * v.strides[p.dims[0]];
  p.ok = true;
  return p;
}

// Flat storage extended so that a runtime-offset slice of `span` never
// reads past the end (dynamic_slice would clamp the start instead).
Value padded(Builder& b, Value flat, const StridedView& v, int64_t span) {
  if (v.fits) return flat;
  return b.pad(flat, b.zero(flat.dtype()), {0}, {span}, {0});
}

// offset + sum_i iota_i * stride_i, as s64 of shape sizes.
Value element_indices(Builder& b, Value offset, const StridedView& v) {
  shlo::Type t{shlo::DType::S64, v.sizes};
  Value idx = b.broadcast_in_dim(offset, v.sizes, {});
  for (size_t i = 0; i < v.sizes.size(); ++i) {
    if (v.sizes[i] == 1 || v.strides[i] == 0) continue;
    Value io = b.iota(t, static_cast<int64_t>(i));
    idx = b.add(idx, b.mul(io, b.constant(shlo::DType::S64, static_cast<double>(v.strides[i]), v.sizes)));
  }
  return idx;
}

}  // namespace

int64_t StridedView::span() const {
  Plan p = plan_of(*this);
  if (p.ok) return p.span;
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) extent += (sizes[i] - 1) * std::max<int64_t>(strides[i], 0);
  return extent;
}

Value reinterpret_flat(Builder& b, Value flat, shlo::DType to) {
  shlo::DType from = flat.dtype();
  if (from == to) return flat;
  // Complex storage is interleaved (real, imag) pairs of its component
  // float: split or join the pairs, then reinterpret the floats.
  if (shlo::is_complex(from)) {
    shlo::DType part = from == shlo::DType::C64 ? shlo::DType::F32 : shlo::DType::F64;
    int64_t n = flat.shape()[0];
    Value re = b.reshape(b.op1(hlo::kReal, {flat}, shlo::Type{part, {n}}), {n, 1});
    Value im = b.reshape(b.op1(hlo::kImag, {flat}, shlo::Type{part, {n}}), {n, 1});
    return reinterpret_flat(b, b.reshape(b.concatenate({re, im}, 1), {2 * n}), to);
  }
  if (shlo::is_complex(to)) {
    shlo::DType part = to == shlo::DType::C64 ? shlo::DType::F32 : shlo::DType::F64;
    Value f = reinterpret_flat(b, flat, part);
    int64_t m = f.shape()[0] / 2;
    if (2 * m != f.shape()[0]) f = b.slice(f, {0}, {2 * m}, {1});
    Value pairs = b.reshape(f, {m, 2});
    Value re = b.reshape(b.slice(pairs, {0, 0}, {m, 1}, {1, 1}), {m});
    Value im = b.reshape(b.slice(pairs, {0, 1}, {m, 2}, {1, 1}), {m});
    return b.op1(hlo::kComplex, {re, im}, shlo::Type{to, {m}});
  }
  if (from == shlo::DType::PRED) return reinterpret_flat(b, b.convert(flat, shlo::DType::U8), to);
  if (to == shlo::DType::PRED) {
    Value u8 = reinterpret_flat(b, flat, shlo::DType::U8);
    return b.compare(shlo::Cmp::NE, u8, b.constant(shlo::DType::U8, 0, u8.shape()));
  }
  int64_t n = flat.shape()[0];
  size_t fs = shlo::dtype_size(from), ts = shlo::dtype_size(to);
  if (fs == ts) return b.bitcast_convert(flat, shlo::Type{to, {n}});
  if (fs > ts) {
    int64_t k = static_cast<int64_t>(fs / ts);
    Value wide = b.bitcast_convert(flat, shlo::Type{to, {n, k}});
    return b.reshape(wide, {n * k});
  }
  int64_t k = static_cast<int64_t>(ts / fs);
  int64_t m = n / k;
  if (m * k != n) flat = b.slice(flat, {0}, {m * k}, {1});
  return b.bitcast_convert(b.reshape(flat, {m, k}), shlo::Type{to, {m}});
}

Value read_view(Builder& b, Value flat, Value offset, const StridedView& v) {
  if (shlo::numel(v.sizes) == 0) return b.constant(flat.dtype(), 0, v.sizes);
  Plan p = plan_of(v);
  if (!p.ok) {
    Value idx = b.reshape(element_indices(b, offset, v), {shlo::numel(v.sizes), 1});
    Value g = b.gather(flat, idx, {}, {0}, {0}, 1, {1}, {shlo::numel(v.sizes)});
    return b.reshape(g, v.sizes);
  }
  Value region = b.dynamic_slice(padded(b, flat, v, p.span), {offset}, {p.span});
  Value r = b.reshape(region, p.parent);
  r = b.slice(r, shlo::Shape(p.parent.size(), 0), p.corner, shlo::Shape(p.parent.size(), 1));
  // Drop the trailing unit dim, then restore the view's dim order.
  shlo::Shape sorted_sizes;
  for (int64_t d : p.dims) sorted_sizes.push_back(v.sizes[d]);
  r = b.reshape(r, sorted_sizes);
  std::vector<int64_t> by_index(p.dims);
  std::sort(by_index.begin(), by_index.end());
  std::vector<int64_t> perm;
  for (int64_t d : by_index) perm.push_back(std::find(p.dims.begin(), p.dims.end(), d) - p.dims.begin());
  r = b.transpose(r, perm);
  // Size-1 and stride-0 (expanded) dims come back by broadcasting.
  return b.broadcast_in_dim(r, v.sizes, by_index);
}

Value write_view(Builder& b, Value flat, Value offset, Value value, const StridedView& v) {
  if (shlo::numel(v.sizes) == 0) return flat;
  Plan p = plan_of(v);
  if (!p.ok) {
    int64_t n = shlo::numel(v.sizes);
    Value idx = b.reshape(element_indices(b, offset, v), {n, 1});
    return b.scatter(flat, idx, b.reshape(value, {n}), {}, {0}, {0}, 1, "");
  }
  // Expanded dims alias one element: the last write wins, as on the CPU.
  shlo::Shape lo(v.sizes.size(), 0), hi(v.sizes), one(v.sizes.size(), 1);
  for (size_t i = 0; i < v.sizes.size(); ++i)
    if (v.strides[i] == 0 && v.sizes[i] > 1) lo[i] = v.sizes[i] - 1;
  Value x = b.slice(value, lo, hi, one);
  std::vector<int64_t> by_index(p.dims);
  std::sort(by_index.begin(), by_index.end());
  shlo::Shape kept;
  for (int64_t d : by_index) kept.push_back(v.sizes[d]);
  x = b.reshape(x, kept);
  std::vector<int64_t> perm;
  for (int64_t d : p.dims) perm.push_back(std::find(by_index.begin(), by_index.end(), d) - by_index.begin());
  x = b.transpose(x, perm);
  x = b.reshape(x, p.corner);
  Value base = padded(b, flat, v, p.span);
  Value region = b.reshape(b.dynamic_slice(base, {offset}, {p.span}), p.parent);
  std::vector<Value> zeros(p.parent.size(), b.constant(shlo::DType::S64, 0));
  region = b.dynamic_update_slice(region, x, zeros);
  base = b.dynamic_update_slice(base, b.reshape(region, {p.span}), {offset});
  if (!v.fits) base = b.slice(base, {0}, {v.storage_numel}, {1});
  return base;
}

}  // namespace ops
