// Lowerings of searchsorted / bucketize and bincount (see search.h).
#include "ops/sort/search.h"

#include <numeric>
#include <vector>

#include "ops/common/lowering.h"

namespace ops {

using shlo::Builder;
using shlo::Cmp;
using shlo::DType;
using shlo::Shape;
using shlo::Type;
using shlo::Value;

Value search_sorted(Builder& b, Value boundaries, Value values, bool right, DType out) {
  int64_t r = values.rank(), m = boundaries.shape().back();
  Shape cs = values.shape();
  cs.push_back(m);
  std::vector<int64_t> vdims(r);
  std::iota(vdims.begin(), vdims.end(), 0);
  Value v = b.broadcast_in_dim(values, cs, vdims);
  std::vector<int64_t> bdims;
  if (boundaries.rank() == 1) {
    bdims = {r};
  } else {  // leading dims shared with values; skip values' last dim
    for (int64_t d = 0; d + 1 < r; ++d) bdims.push_back(d);
    bdims.push_back(r);
  }
  Value bd = b.broadcast_in_dim(boundaries, cs, bdims);
  Value at_or_after = b.compare(right ? Cmp::GT : Cmp::GE, bd, v);
  Value before = logical_not(b, at_or_after);
  return b.reduce(b.convert(before, out), b.zero(out), {r}, "add");
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
