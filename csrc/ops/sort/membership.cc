#include "ops/sort/membership.h"

#include "ops/common/lowering.h"

namespace ops {

shlo::Value isin(shlo::Builder& b, shlo::Value x, shlo::Value test, bool invert) {
  int64_t n = shlo::numel(x.shape()), m = shlo::numel(test.shape());
  if (m == 0) return b.constant(shlo::DType::PRED, invert ? 1 : 0, x.shape());
  // An [n, m] equality table reduced over m: test sets in model code (stop
  // tokens, vocab filters) are small; XLA fuses the compare into the reduce.
  shlo::Value xs = b.broadcast_in_dim(b.reshape(x, {n}), {n, m}, {0});
  shlo::Value ts = b.broadcast_in_dim(b.reshape(test, {m}), {n, m}, {1});
  shlo::Value eq = b.compare(shlo::Cmp::EQ, xs, ts);
  shlo::Value any = b.reduce(eq, b.constant(shlo::DType::PRED, 0), {1}, "or");
  if (invert) any = logical_not(b, any);
  return b.reshape(any, x.shape());
}

}  // namespace ops
