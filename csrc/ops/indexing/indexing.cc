// Lowerings of gather / scatter, the index_* family, advanced indexing,
// take, masked_scatter and embedding backward (see indexing.h).
#include "ops/indexing/indexing.h"

#include <algorithm>

#include "ops/common/lowering.h"
#include "ops/elementwise/elementwise.h"

namespace ops {

using shlo::DType;
using shlo::Shape;
using shlo::Type;

namespace {

std::vector<int64_t> range(int64_t n) {
  std::vector<int64_t> r(n);
  for (int64_t i = 0; i < n; ++i) r[i] = i;
  return r;
}

int64_t max_extent(const Shape& s) {
  int64_t m = 1;
  for (int64_t d : s) m = std::max(m, d);
  return m;
}

// idx converted to the index type it; negatives wrapped by `size` if wrap.
Value to_index(Builder& b, Value idx, DType it, int64_t size, bool wrap) {
  Value v = b.convert(idx, it);
  if (!wrap || !shlo::is_signed_int(idx.dtype())) return v;
  Value neg = b.compare(shlo::Cmp::LT, v, b.constant(it, 0, v.shape()));
  return b.select(neg, b.add(v, b.constant(it, static_cast<double>(size), v.shape())), v);
}

// The scatter body for a combine mode; booleans combine logically.
std::string body_of(Combine c, DType t) {
  bool pred = t == DType::PRED;
  switch (c) {
    case Combine::Replace:
      return "";
    case Combine::Add:
      return pred ? "or" : "add";
    case Combine::Mul:
      return pred ? "and" : "multiply";
    case Combine::Max:
      return pred ? "or" : "maximum";
    case Combine::Min:
      return pred ? "and" : "minimum";
  }
  return "";
}

// The scatter combine of a reduction (Sum and Mean add).
Combine combine_of(ReduceKind r) {
  switch (r) {
    case ReduceKind::Prod:
      return Combine::Mul;
    case ReduceKind::Amax:
      return Combine::Max;
    case ReduceKind::Amin:
      return Combine::Min;
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      break;
  }
  return Combine::Add;
}

// The 0-d value a combine leaves unchanged: where targets start when self
// is left out of the reduction.
Value identity_of(Builder& b, Combine c, DType t) {
  switch (c) {
    case Combine::Mul:
      return b.constant(t, 1);
    case Combine::Max:
      return b.lowest(t);
    case Combine::Min:
      return b.highest(t);
    default:
      return b.zero(t);
  }
}

// Full coordinates for gather/scatter along dim: [idx.shape..., rank] where
// component d is the element's own position for d != dim and idx for dim.
Value full_indices(Builder& b, Value idx, int64_t dim) {
  int64_t n = idx.rank();
  Shape s = idx.shape();
  s.push_back(1);
  std::vector<Value> parts;
  for (int64_t d = 0; d < n; ++d) parts.push_back(d == dim ? b.reshape(idx, s) : b.iota(Type{idx.dtype(), s}, d));
  return b.concatenate(parts, n);
}

Value splat_to(Builder& b, Value scalar, const Shape& shape) { return b.broadcast_in_dim(scalar, shape, {}); }

// Positions of the non-indexed dims of x inside the advanced-indexing result.
std::vector<int64_t> offset_dims_of(int64_t rank, const std::vector<int64_t>& dims, int64_t m) {
  int64_t k = static_cast<int64_t>(dims.size());
  bool consecutive = dims.back() - dims.front() == k - 1;
  int64_t out_rank = rank - k + m;
  std::vector<int64_t> off;
  if (consecutive) {
    for (int64_t i = 0; i < dims.front(); ++i) off.push_back(i);
    for (int64_t i = dims.front() + m; i < out_rank; ++i) off.push_back(i);
  } else {
    for (int64_t i = m; i < out_rank; ++i) off.push_back(i);
  }
  return off;
}

// The [B..., k] coordinate tensor of advanced indexing.
Value stacked_indices(Builder& b, const Shape& xs, const std::vector<int64_t>& dims, const std::vector<Value>& idx,
                      const Shape& B) {
  DType it = index_type(max_extent(xs));
  Shape s = B;
  s.push_back(1);
  std::vector<Value> parts;
  for (size_t i = 0; i < idx.size(); ++i) {
    Value v = to_index(b, idx[i], it, xs[dims[i]], true);
    parts.push_back(b.reshape(b.broadcast_to(v, B), s));
  }
  return b.concatenate(parts, static_cast<int64_t>(B.size()));
}

}  // namespace

DType index_type(int64_t extent) { return extent < (int64_t{1} << 31) ? DType::S32 : DType::S64; }

Value gather_dim(Builder& b, Value x, int64_t dim, Value idx) {
  if (x.rank() == 0 || idx.rank() == 0) {
    Shape out = idx.shape();
    Value xx = x.rank() == 0 ? b.reshape(x, {1}) : x;
    Value ii = idx.rank() == 0 ? b.reshape(idx, Shape(xx.rank(), 1)) : idx;
    return b.reshape(gather_dim(b, xx, dim, ii), out);
  }
  int64_t n = x.rank();
  if (shlo::numel(idx.shape()) == 0) return b.constant(x.dtype(), 0, idx.shape());
  Value ind = full_indices(b, to_index(b, idx, index_type(max_extent(x.shape())), 0, false), dim);
  std::vector<int64_t> all = range(n);
  return b.gather(x, ind, {}, all, all, n, Shape(n, 1), idx.shape());
}

Value scatter_dim(Builder& b, Value x, int64_t dim, Value idx, Value src, Combine c) {
  if (x.rank() == 0 || idx.rank() == 0) {
    Value xx = x.rank() == 0 ? b.reshape(x, {1}) : x;
    Value ii = idx.rank() == 0 ? b.reshape(idx, Shape(xx.rank(), 1)) : idx;
    // Only src's first element can be read when the index has one element.
    Value ss = src.rank() == 0
                   ? src
                   : b.reshape(b.slice(src, Shape(src.rank(), 0), Shape(src.rank(), 1), Shape(src.rank(), 1)),
                               Shape(xx.rank(), 1));
    return b.reshape(scatter_dim(b, xx, dim, ii, ss, c), x.shape());
  }
  int64_t n = x.rank();
  if (shlo::numel(idx.shape()) == 0 || shlo::numel(x.shape()) == 0) return x;
  // The CPU sums f16 and bf16 targets in f32 and rounds once: summed in
  // their own dtype, a target hit by many updates drifted by an ulp of its
  // larger partial sums (f16: 0.003 off in a result of 0.05).
  if (c == Combine::Add && opmath(x.dtype()) != x.dtype())
    return from_opmath(b, scatter_dim(b, to_opmath(b, x), dim, idx, to_opmath(b, src), c), x.dtype());
  Value upd = b.convert(src, x.dtype());
  if (upd.rank() == 0) {
    upd = splat_to(b, upd, idx.shape());
  } else if (upd.shape() != idx.shape()) {
    upd = b.slice(upd, Shape(n, 0), idx.shape(), Shape(n, 1));
  }
  Value ind = full_indices(b, to_index(b, idx, index_type(max_extent(x.shape())), 0, false), dim);
  std::vector<int64_t> all = range(n);
  return b.scatter(x, ind, upd, {}, all, all, n, body_of(c, x.dtype()));
}

Value scatter_reduce(Builder& b, Value x, int64_t dim, Value idx, Value src, ReduceKind reduce, bool include_self) {
  DType t = x.dtype();
  Combine c = combine_of(reduce);
  Value base = x;
  if (!include_self) {
    // Targets start from the reduction's identity so only src contributes.
    base = scatter_dim(b, x, dim, idx, identity_of(b, c, t), Combine::Replace);
  }
  Value r = scatter_dim(b, base, dim, idx, src, c);
  if (reduce != ReduceKind::Mean) return r;
  Value cnt = scatter_dim(b, b.constant(t, include_self ? 1 : 0, x.shape()), dim, idx, b.constant(t, 1), Combine::Add);
  Value one = b.constant(t, 1, x.shape());
  cnt = b.select(b.compare(shlo::Cmp::EQ, cnt, b.constant(t, 0, x.shape())), one, cnt);
  return shlo::is_float(t) ? b.div(r, cnt) : div(b, r, cnt, "floor");
}

Value index_select(Builder& b, Value x, int64_t dim, Value idx) {
  if (x.rank() == 0) {
    Value r = index_select(b, b.reshape(x, {1}), 0, b.reshape(idx, {shlo::numel(idx.shape())}));
    return b.reshape(r, {});
  }
  if (idx.rank() == 0) idx = b.reshape(idx, {1});
  Shape out = x.shape();
  out[dim] = idx.shape()[0];
  if (shlo::numel(out) == 0) return b.constant(x.dtype(), 0, out);
  Value ii = to_index(b, idx, index_type(x.shape()[dim]), 0, false);
  std::vector<int64_t> off;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (d != dim) off.push_back(d);
  Shape slice = x.shape();
  slice[dim] = 1;
  return b.gather(x, ii, off, {dim}, {dim}, 1, slice, out);
}

Value index_scatter(Builder& b, Value x, int64_t dim, Value idx, Value src, Combine c, bool wrap) {
  if (x.rank() == 0) {
    int64_t L = shlo::numel(idx.shape());
    Value ss = src.rank() == 0 ? src : b.reshape(src, {L});
    return b.reshape(index_scatter(b, b.reshape(x, {1}), 0, b.reshape(idx, {L}), ss, c, wrap), {});
  }
  if (idx.rank() == 0) idx = b.reshape(idx, {1});
  Shape us = x.shape();
  us[dim] = idx.shape()[0];
  if (shlo::numel(us) == 0) return x;
  Value upd = b.convert(src, x.dtype());
  upd = upd.rank() == 0 ? splat_to(b, upd, us) : b.reshape(upd, us);
  Value ii = to_index(b, idx, index_type(x.shape()[dim]), x.shape()[dim], wrap);
  std::vector<int64_t> win;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (d != dim) win.push_back(d);
  return b.scatter(x, ii, upd, win, {dim}, {dim}, 1, body_of(c, x.dtype()));
}

// One index (a KV cache's decoding step) writes its elements into x read
// flat: the scatter's result is then the flat storage value itself, which
// XLA updates in place in a donated buffer while the readers of the new
// tensor see it through a free reshape. Written along `dim` instead (a
// scatter XLA turns into a dynamic_update_slice), the update is fused into
// both the reshape to the storage and each reader, and the whole tensor is
// copied several times per call.
Value index_copy(Builder& b, Value x, int64_t dim, Value idx, Value src) {
  if (x.rank() == 0 || shlo::numel(idx.shape()) != 1)
    return index_scatter(b, x, dim, idx, src, Combine::Replace, false);
  const int64_t n = x.shape()[dim], total = shlo::numel(x.shape());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= x.shape()[d];
  for (int64_t d = dim + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  if (outer * inner == 0) return x;
  DType it = index_type(total + 1);
  Type grid{it, {outer, inner}};
  Value i = b.reshape(b.convert(idx, DType::S64), {});
  Value start = b.mul(b.convert(i, it), b.constant(it, static_cast<double>(inner)));
  Value pos = b.add(
      b.add(b.mul(b.iota(grid, 0), b.constant(it, static_cast<double>(n * inner), {outer, inner})), b.iota(grid, 1)),
      b.broadcast_in_dim(start, {outer, inner}, {}));
  // An index outside [0, n) writes nothing (as the scatter along dim
  // would), so the range check's error never comes with another row changed.
  Value valid = logical_and(b, b.compare(shlo::Cmp::GE, i, b.constant(DType::S64, 0)),
                            b.compare(shlo::Cmp::LT, i, b.constant(DType::S64, static_cast<double>(n))));
  pos = b.select(b.broadcast_in_dim(valid, {outer, inner}, {}), pos,
                 b.constant(it, static_cast<double>(total), {outer, inner}));
  Value upd = b.reshape(b.convert(src, x.dtype()), {outer * inner});
  Value r = b.scatter(b.reshape(x, {total}), b.reshape(pos, {outer * inner, 1}), upd, {}, {0}, {0}, 1, "");
  return b.reshape(r, x.shape());
}

Value index_add(Builder& b, Value x, int64_t dim, Value idx, Value src, Value alpha) {
  Value s = b.convert(src, x.dtype());
  Value a = b.broadcast_in_dim(b.convert(alpha, x.dtype()), s.shape(), {});
  s = x.dtype() == DType::PRED ? logical_and(b, s, a) : b.mul(s, a);
  return index_scatter(b, x, dim, idx, s, Combine::Add, false);
}

Value index_reduce(Builder& b, Value x, int64_t dim, Value idx, Value src, ReduceKind reduce, bool include_self) {
  DType t = x.dtype();
  Combine c = combine_of(reduce);
  Value base = x;
  if (!include_self) {
    // The indexed slots restart from the reduction's identity.
    base = index_scatter(b, x, dim, idx, b.broadcast_in_dim(identity_of(b, c, t), src.shape(), {}), Combine::Replace,
                         false);
  }
  Value r = index_scatter(b, base, dim, idx, src, c, false);
  if (reduce != ReduceKind::Mean) return r;
  Value cnt = index_scatter(b, b.constant(t, include_self ? 1 : 0, x.shape()), dim, idx, b.constant(t, 1, src.shape()),
                            Combine::Add, false);
  cnt = b.select(b.compare(shlo::Cmp::EQ, cnt, b.constant(t, 0, cnt.shape())), b.constant(t, 1, cnt.shape()), cnt);
  return shlo::is_float(t) ? b.div(r, cnt) : div(b, r, cnt, "floor");
}

Shape advanced_index_shape(const Shape& x, const std::vector<int64_t>& dims, const Shape& B) {
  int64_t k = static_cast<int64_t>(dims.size());
  bool consecutive = dims.back() - dims.front() == k - 1;
  Shape out;
  if (consecutive) {
    for (int64_t i = 0; i < dims.front(); ++i) out.push_back(x[i]);
    out.insert(out.end(), B.begin(), B.end());
    for (int64_t i = dims.back() + 1; i < static_cast<int64_t>(x.size()); ++i) out.push_back(x[i]);
  } else {
    out = B;
    for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i)
      if (std::find(dims.begin(), dims.end(), i) == dims.end()) out.push_back(x[i]);
  }
  return out;
}

Value advanced_index(Builder& b, Value x, const std::vector<int64_t>& dims, const std::vector<Value>& idx,
                     const Shape& B) {
  Shape out = advanced_index_shape(x.shape(), dims, B);
  if (shlo::numel(out) == 0) return b.constant(x.dtype(), 0, out);
  Value ind = stacked_indices(b, x.shape(), dims, idx, B);
  Shape slice = x.shape();
  for (int64_t d : dims) slice[d] = 1;
  int64_t m = static_cast<int64_t>(B.size());
  return b.gather(x, ind, offset_dims_of(x.rank(), dims, m), dims, dims, m, slice, out);
}

Value advanced_index_put(Builder& b, Value x, const std::vector<int64_t>& dims, const std::vector<Value>& idx,
                         const Shape& B, Value values, bool accumulate) {
  Shape out = advanced_index_shape(x.shape(), dims, B);
  if (shlo::numel(out) == 0) return x;
  Value ind = stacked_indices(b, x.shape(), dims, idx, B);
  Value upd = b.broadcast_to(b.convert(values, x.dtype()), out);
  int64_t m = static_cast<int64_t>(B.size());
  return b.scatter(x, ind, upd, offset_dims_of(x.rank(), dims, m), dims, dims, m,
                   body_of(accumulate ? Combine::Add : Combine::Replace, x.dtype()));
}

Value take(Builder& b, Value x, Value idx) {
  Value flat = b.reshape(x, {shlo::numel(x.shape())});
  return advanced_index(b, flat, {0}, {idx}, idx.shape());
}

Value embedding_backward(Builder& b, Value grad, Value idx, int64_t num_weights, int64_t padding_idx,
                         bool scale_grad_by_freq) {
  int64_t N = shlo::numel(idx.shape());
  int64_t D = grad.rank() == 0 ? 1 : grad.shape().back();
  DType out_t = grad.dtype();
  // Half types accumulate in f32 so many small updates to one row keep precision.
  DType acc = opmath(out_t);
  Value g = b.convert(b.reshape(grad, {N, D}), acc);
  DType it = index_type(num_weights);
  Value i = b.convert(b.reshape(idx, {N}), it);
  if (padding_idx >= 0) {
    Value keep = b.compare(shlo::Cmp::NE, i, b.constant(it, static_cast<double>(padding_idx), {N}));
    g = b.select(b.broadcast_in_dim(keep, {N, D}, {0}), g, b.constant(acc, 0, {N, D}));
  }
  if (scale_grad_by_freq) {
    Value counts =
        index_scatter(b, b.constant(acc, 0, {num_weights}), 0, i, b.constant(acc, 1, {N}), Combine::Add, false);
    Value c = index_select(b, counts, 0, i);
    g = b.div(g, b.broadcast_in_dim(c, {N, D}, {0}));
  }
  Value r = index_scatter(b, b.constant(acc, 0, {num_weights, D}), 0, i, g, Combine::Add, false);
  return b.convert(r, out_t);
}

Value prefix_sum(Builder& b, Value x) {
  int64_t n = x.shape()[0];
  for (int64_t s = 1; s < n; s *= 2) {
    Value shifted = b.pad(b.slice(x, {0}, {n - s}, {1}), b.zero(x.dtype()), {s}, {0}, {0});
    x = b.add(x, shifted);
  }
  return x;
}

Value masked_scatter(Builder& b, Value x, Value mask, Value src) {
  int64_t N = shlo::numel(x.shape()), S = shlo::numel(src.shape());
  if (N == 0 || S == 0) return x;
  Value m = b.reshape(b.broadcast_to(mask, x.shape()), {N});
  DType it = index_type(std::max(N, S));
  // The k-th true position (in row-major order) takes src's k-th element.
  Value pos = b.sub(prefix_sum(b, b.convert(m, it)), b.constant(it, 1, {N}));
  pos = b.clamp(b.constant(it, 0, {N}), pos, b.constant(it, static_cast<double>(S - 1), {N}));
  Value vals = index_select(b, b.reshape(b.convert(src, x.dtype()), {S}), 0, pos);
  return b.reshape(b.select(m, vals, b.reshape(x, {N})), x.shape());
}

Value min_and_sum(Builder& b, Value x) {
  int64_t N = shlo::numel(x.shape());
  Value flat = b.convert(b.reshape(x, {N}), DType::S64);
  Value mn = b.reduce(flat, b.highest(DType::S64), {0}, "minimum");
  Value sum = b.reduce(flat, b.zero(DType::S64), {0}, "add");
  return b.concatenate({b.reshape(mn, {1}), b.reshape(sum, {1})}, 0);
}

Value repeat_interleave_indices(Builder& b, Value repeats, int64_t total) {
  int64_t n = shlo::numel(repeats.shape());
  if (total == 0 || n == 0) return b.constant(DType::S64, 0, {total});
  DType it = index_type(std::max(n, total) + 1);
  // Group i ends at prefix[i]; counting the group ends at or before each
  // output position gives the group it belongs to.
  Value ends = prefix_sum(b, b.convert(b.reshape(repeats, {n}), it));
  Value marks = index_scatter(b, b.constant(it, 0, {total + 1}), 0, ends, b.constant(it, 1, {n}), Combine::Add, false);
  Value idx = prefix_sum(b, b.slice(marks, {0}, {total}, {1}));
  return b.convert(idx, DType::S64);
}

}  // namespace ops
