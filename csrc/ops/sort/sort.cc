#include "ops/sort/sort.h"

#include <algorithm>
#include <tuple>

#include "ops/common/lowering.h"
#include "ops/indexing/indexing.h"
#include "ops/scan/scan.h"

namespace ops {

using shlo::DType;
using shlo::Shape;
using shlo::Type;

namespace {

// a < b where NaN is larger than every number (and equal to itself).
Value less(Builder& b, Value a, Value c) {
  Value lt = b.compare(shlo::Cmp::LT, a, c);
  if (!shlo::is_float(a.dtype())) return lt;
  return logical_or(b, lt, logical_and(b, is_nan(b, c), logical_not(b, is_nan(b, a))));
}

// Stable sort of (keys, iota) along dim; returns (sorted keys, permutation).
std::pair<Value, Value> sort_with_iota(Builder& b, Value x, int64_t dim, bool descending) {
  Value io = b.iota(Type{index_type(x.shape()[dim]), x.shape()}, dim);
  auto r = b.sort({x, io}, dim, [descending](Builder& bb, const std::vector<Value>& a) {
    return std::vector<Value>{descending ? less(bb, a[1], a[0]) : less(bb, a[0], a[1])};
  });
  return {r[0], r[1]};
}

Shape kept(const Shape& s, int64_t dim) {
  Shape r = s;
  r[dim] = 1;
  return r;
}

Value slice_dim(Builder& b, Value x, int64_t dim, int64_t start, int64_t limit) {
  Shape lo(x.rank(), 0), hi = x.shape();
  lo[dim] = start;
  hi[dim] = limit;
  return b.slice(x, lo, hi, Shape(x.rank(), 1));
}

// Row-major coordinates (s64[n, rank]) of flat positions pos (s64[n]).
Value unravel(Builder& b, Value pos, const Shape& shape) {
  int64_t n = pos.shape()[0], rank = static_cast<int64_t>(shape.size());
  std::vector<Value> cols;
  int64_t stride = 1;
  std::vector<int64_t> strides(rank);
  for (int64_t d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape[d];
  }
  for (int64_t d = 0; d < rank; ++d) {
    Value c = b.div(pos, b.constant(DType::S64, static_cast<double>(strides[d]), {n}));
    c = b.binary("remainder", c, b.constant(DType::S64, static_cast<double>(shape[d]), {n}));
    cols.push_back(b.reshape(c, {n, 1}));
  }
  return b.concatenate(cols, 1);
}

// Flat positions of x's nonzero elements first (row-major), then the rest.
Value nonzero_first(Builder& b, Value x) {
  int64_t N = shlo::numel(x.shape());
  Value flat = b.reshape(x, {N});
  Value zero = b.compare(shlo::Cmp::EQ, flat, b.constant(flat.dtype(), 0, {N}));
  auto perm = sort_with_iota(b, b.convert(zero, DType::S32), 0, false).second;
  return b.convert(perm, DType::S64);
}

}  // namespace

std::pair<Value, Value> sort(Builder& b, Value x, int64_t dim, bool descending) {
  if (x.rank() == 0) return {x, b.zero(DType::S64)};
  if (shlo::numel(x.shape()) == 0) return {x, b.constant(DType::S64, 0, x.shape())};
  auto [v, i] = sort_with_iota(b, x, dim, descending);
  return {v, b.convert(i, DType::S64)};
}

std::pair<Value, Value> topk(Builder& b, Value x, int64_t k, int64_t dim, bool largest) {
  if (x.rank() == 0) return sort(b, x, 0, largest);
  auto [v, i] = sort(b, x, dim, largest);
  return {slice_dim(b, v, dim, 0, k), slice_dim(b, i, dim, 0, k)};
}

std::pair<Value, Value> kthvalue(Builder& b, Value x, int64_t k, int64_t dim) {
  if (x.rank() == 0) return {x, b.zero(DType::S64)};
  auto [v, i] = sort(b, x, dim, false);
  return {slice_dim(b, v, dim, k - 1, k), slice_dim(b, i, dim, k - 1, k)};
}

std::pair<Value, Value> median(Builder& b, Value x, int64_t dim, bool ignore_nan) {
  if (x.rank() == 0) return {x, b.zero(DType::S64)};
  int64_t n = x.shape()[dim];
  auto [v, i] = sort(b, x, dim, false);
  Shape ks = kept(x.shape(), dim);
  DType it = DType::S64;
  Value pos = b.constant(it, static_cast<double>((n - 1) / 2), ks);
  if (shlo::is_float(x.dtype())) {
    // NaNs sort last, in their original order.
    Value nans = b.reshape(b.reduce(b.convert(is_nan(b, x), it), b.zero(it), {dim}, "add"), ks);
    Value nv = b.constant(it, static_cast<double>(n), ks);
    if (ignore_nan) {
      // (valid - 1) / 2 truncates to 0 when every value is NaN.
      pos = b.div(b.sub(b.sub(nv, nans), b.constant(it, 1, ks)), b.constant(it, 2, ks));
    } else {
      Value any = b.compare(shlo::Cmp::GT, nans, b.constant(it, 0, ks));
      pos = b.select(any, b.sub(nv, nans), pos);
    }
  }
  return {gather_dim(b, v, dim, pos), gather_dim(b, i, dim, pos)};
}

std::pair<Value, Value> mode(Builder& b, Value x, int64_t dim) {
  if (x.rank() == 0) return {x, b.zero(DType::S64)};
  const int64_t n = x.shape()[dim];
  // Stably sorted, equal values lie together with their indices ascending:
  // the end of a run holds its value's last index.
  auto [v, i] = sort(b, x, dim, false);
  const DType it = DType::S64;
  Value pos = b.iota(Type{it, x.shape()}, dim);
  // Where each run starts, carried along it by a running max; a position's
  // run length so far is then its distance from that start, plus one.
  Value starts = b.constant(DType::PRED, 1, kept(x.shape(), dim));
  if (n > 1) {
    Value differs = b.compare(shlo::Cmp::NE, slice_dim(b, v, dim, 1, n), slice_dim(b, v, dim, 0, n - 1));
    starts = b.concatenate({starts, differs}, dim);
  }
  Value start = cum_extreme(b, b.select(starts, pos, b.constant(it, 0, x.shape())), dim, true).first;
  Value length = b.sub(pos, start);
  // The first longest run ends at the first position reaching the longest
  // length: the smallest of the most frequent values, as the CPU's scan.
  Shape ks = kept(x.shape(), dim);
  Value longest = b.reshape(b.reduce(length, b.constant(it, -1, {}), {dim}, "maximum"), ks);
  Value at_longest = b.compare(shlo::Cmp::EQ, length, b.broadcast_to(longest, x.shape()));
  Value first = b.reduce(b.select(at_longest, pos, b.constant(it, static_cast<double>(n), x.shape())),
                         b.constant(it, static_cast<double>(n), {}), {dim}, "minimum");
  first = b.reshape(first, ks);
  return {gather_dim(b, v, dim, first), gather_dim(b, i, dim, first)};
}

Value nonzero(Builder& b, Value x, int64_t count) {
  int64_t rank = x.rank();
  if (count == 0 || rank == 0) return b.constant(DType::S64, 0, {count, rank});
  Value pos = b.slice(nonzero_first(b, x), {0}, {count}, {1});
  return unravel(b, pos, x.shape());
}

Value nonzero_static(Builder& b, Value x, int64_t size, Value fill) {
  int64_t rank = x.rank(), N = shlo::numel(x.shape());
  // Rows of a 0-d tensor are empty: nothing to fill.
  if (size == 0 || rank == 0) return b.constant(DType::S64, 0, {size, rank});
  if (N == 0) return b.broadcast_in_dim(b.convert(fill, DType::S64), {size, rank}, {});
  Value pos = nonzero_first(b, x);
  pos = size <= N ? b.slice(pos, {0}, {size}, {1}) : b.pad(pos, b.zero(DType::S64), {0}, {size - N}, {0});
  Value coords = unravel(b, pos, x.shape());
  Value valid =
      b.compare(shlo::Cmp::LT, b.iota(Type{DType::S64, {size}}, 0), b.broadcast_in_dim(count_true(b, x), {size}, {}));
  return b.select(b.broadcast_in_dim(valid, {size, rank}, {0}), coords,
                  b.broadcast_in_dim(b.convert(fill, DType::S64), {size, rank}, {}));
}

namespace {

// Rows of x ([N, M]) in grouping order (sorted when M == 1 and sorted, else
// as they are), the original row of each, and whether each starts a group.
struct Groups {
  Value rows, perm, is_new;
};

Groups groups_of(Builder& b, Value x, bool sorted) {
  int64_t N = x.shape()[0], M = x.shape()[1];
  Groups g;
  if (sorted) {
    Value v;
    std::tie(v, g.perm) = sort_with_iota(b, b.reshape(x, {N}), 0, false);
    g.rows = b.reshape(v, {N, M});
  } else {
    g.rows = x;
    g.perm = b.iota(Type{index_type(N), {N}}, 0);
  }
  Value ne =
      b.compare(shlo::Cmp::NE, b.slice(g.rows, {1, 0}, {N, M}, {1, 1}), b.slice(g.rows, {0, 0}, {N - 1, M}, {1, 1}));
  Value diff = b.reduce(ne, b.constant(DType::PRED, 0), {1}, "or");
  g.is_new = b.concatenate({b.constant(DType::PRED, 1, {1}), diff}, 0);
  return g;
}

}  // namespace

Value unique_count(Builder& b, Value x, bool sorted) {
  if (x.shape()[0] == 0) return b.zero(DType::S64);
  Value is_new = groups_of(b, x, sorted).is_new;
  return b.reduce(b.convert(is_new, DType::S64), b.zero(DType::S64), {0}, "add");
}

std::vector<Value> unique(Builder& b, Value x, int64_t count, bool sorted) {
  int64_t N = x.shape()[0], M = x.shape()[1];
  if (N == 0) return {b.constant(x.dtype(), 0, {0, M}), b.constant(DType::S64, 0, {0}), b.constant(DType::S64, 0, {0})};
  Groups g = groups_of(b, x, sorted);
  DType it = index_type(N);
  Value group = b.sub(prefix_sum(b, b.convert(g.is_new, it)), b.constant(it, 1, {N}));
  // Every member of a group holds the same row, so replace order is moot.
  Value values = index_scatter(b, b.constant(x.dtype(), 0, {count, M}), 0, group, g.rows, Combine::Replace, false);
  Value counts = index_scatter(b, b.constant(DType::S64, 0, {count}), 0, group, b.constant(DType::S64, 1, {N}),
                               Combine::Add, false);
  Value inverse = index_scatter(b, b.constant(DType::S64, 0, {N}), 0, g.perm, b.convert(group, DType::S64),
                                Combine::Replace, false);
  return {values, inverse, counts};
}

}  // namespace ops
