// Lowerings of searchsorted / bucketize and bincount (see search.h).
#include "ops/sort/search.h"

#include <vector>

#include "ops/common/lowering.h"
#include "ops/indexing/indexing.h"

namespace ops {

using shlo::Builder;
using shlo::Cmp;
using shlo::DType;
using shlo::Shape;
using shlo::Type;
using shlo::Value;

Value search_sorted(Builder& b, Value boundaries, Value values, bool right, DType out) {
  // PyTorch's binary search, step for step: the same answers on sorted
  // boundaries as a count would give, and the CPU's on unsorted ones, in
  // log2(m) gathers of one boundary per value instead of m comparisons
  // (a million values against a million boundaries stays a million-element
  // program).
  const Shape vs = values.shape();
  const int64_t m = boundaries.shape().back();
  // One shared 1-D sequence serves every value; else each row of values
  // searches the row of boundaries with the same leading indices.
  Value v = boundaries.rank() == 1 ? b.reshape(values, {shlo::numel(vs)}) : values;
  if (v.rank() == 0) v = b.reshape(v, {1});
  const int64_t dim = v.rank() - 1;
  const Shape s = v.shape();
  Value lo = b.constant(DType::S64, 0, s), hi = b.constant(DType::S64, static_cast<double>(m), s);
  Value one = b.constant(DType::S64, 1, s), last = b.constant(DType::S64, static_cast<double>(m - 1), s);
  for (int64_t left = m; left > 0; left >>= 1) {
    Value active = b.compare(Cmp::LT, lo, hi);
    Value mid = b.add(lo, b.div(b.sub(hi, lo), b.constant(DType::S64, 2, s)));
    // A finished search (lo == hi, up to m) reads a boundary it ignores.
    Value at = gather_dim(b, boundaries, dim, b.min(mid, last));
    Value after = logical_not(b, b.compare(right ? Cmp::GT : Cmp::GE, at, v));
    lo = b.select(logical_and(b, active, after), b.add(mid, one), lo);
    hi = b.select(logical_and(b, active, logical_not(b, after)), mid, hi);
  }
  return b.reshape(b.convert(lo, out), vs);
}

Value bincount(Builder& b, Value x, std::optional<Value> weights, int64_t length, DType out) {
  int64_t n = shlo::numel(x.shape());
  Value xi = b.convert(b.reshape(x, {n}), DType::S64);
  Value onehot = b.compare(Cmp::EQ, b.broadcast_in_dim(xi, {n, length}, {0}), b.iota(Type{DType::S64, {n, length}}, 1));
  Value contrib;
  if (weights) {
    Value w = b.broadcast_in_dim(b.convert(b.reshape(*weights, {n}), out), {n, length}, {0});
    contrib = b.select(onehot, w, b.constant(out, 0, {n, length}));
  } else {
    contrib = b.convert(onehot, out);
  }
  return b.reduce(contrib, b.zero(out), {0}, "add");
}

}  // namespace ops
