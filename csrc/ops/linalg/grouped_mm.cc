// Grouped matrix products as one dot_general over masked operands (see grouped_mm.h).
#include "ops/linalg/grouped_mm.h"

#include "ops/linalg/linalg.h"

namespace ops {

namespace {

using shlo::DType;

// [G, L] predicate: position i belongs to group g (offs[g-1] <= i < offs[g]).
Value group_mask(Builder& b, Value offs, int64_t length) {
  int64_t g = offs.shape()[0];
  Value ends = b.convert(offs, DType::S64);
  Value starts = b.constant(DType::S64, 0, {1});
  if (g > 1) starts = b.concatenate({starts, b.slice(ends, {0}, {g - 1}, {1})}, 0);
  shlo::Shape s{g, length};
  Value idx = b.iota(shlo::Type{DType::S64, s}, 1);
  Value ge = b.compare(shlo::Cmp::GE, idx, b.broadcast_in_dim(starts, s, {0}));
  Value lt = b.compare(shlo::Cmp::LT, idx, b.broadcast_in_dim(ends, s, {0}));
  return b.op1("stablehlo.and", {ge, lt}, ge.type);
}

// x broadcast to `shape` (dims x_dims), zero where the mask (broadcast with
// mask_dims) is false.
Value masked(Builder& b, Value x, const std::vector<int64_t>& x_dims, Value mask, const std::vector<int64_t>& mask_dims,
             const shlo::Shape& shape) {
  Value xb = b.broadcast_in_dim(x, shape, x_dims);
  Value mb = b.broadcast_in_dim(mask, shape, mask_dims);
  return b.select(mb, xb, b.constant(x.dtype(), 0, shape));
}

}  // namespace

Value grouped_mm(Builder& b, Value a, Value m, const Value* offs, DType out) {
  // Widen f16/bf16 first (exact): XLA:CPU has no bf16 x bf16 -> f32 dot
  // for every layout, and the f32 products are what accumulation gives.
  DType acc = accumulate_dtype(a.dtype());
  a = b.convert(a, acc);
  m = b.convert(m, acc);
  Value r;
  if (a.rank() == 3 && m.rank() == 3) {
    r = contract(b, a, m, {0}, {0}, {2}, {1});
  } else if (a.rank() == 2 && m.rank() == 3) {
    int64_t rows = a.shape()[0], g = m.shape()[0], k = a.shape()[1];
    Value am = masked(b, a, {0, 2}, group_mask(b, *offs, rows), {1, 0}, {rows, g, k});
    r = contract(b, am, m, {}, {}, {1, 2}, {0, 1});
  } else if (a.rank() == 3 && m.rank() == 2) {
    int64_t g = a.shape()[0], k = m.shape()[0], cols = m.shape()[1];
    Value mm = masked(b, m, {1, 2}, group_mask(b, *offs, cols), {0, 2}, {g, k, cols});
    r = contract(b, a, mm, {}, {}, {0, 2}, {0, 1});
  } else {
    int64_t g = offs->shape()[0], rows = a.shape()[0], k = a.shape()[1];
    Value am = masked(b, a, {1, 2}, group_mask(b, *offs, k), {0, 2}, {g, rows, k});
    r = contract(b, am, m, {}, {}, {2}, {0});
  }
  return b.convert(r, out);
}

}  // namespace ops
