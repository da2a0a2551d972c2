// Range factories and eye: see factories.h.
#include "ops/factories/factories.h"

#include "ops/common/lowering.h"
#include "ops/elementwise/elementwise.h"
#include "ops/random/random.h"

namespace ops {

using shlo::Cmp;
using shlo::Shape;
using shlo::Type;

namespace {

// Rounds f32 values to the precision and range of a half type, so f32
// arithmetic reproduces that type's op-by-op rounding (XLA may otherwise
// keep excess precision between ops).
Value round_to(Builder& b, Value x, DType t) {
  if (t == DType::BF16)
    return b.op1(hlo::kReducePrecision, {x}, x.type, "exponent_bits = 8 : i32, mantissa_bits = 7 : i32");
  if (t == DType::F16)
    return b.op1(hlo::kReducePrecision, {x}, x.type, "exponent_bits = 5 : i32, mantissa_bits = 10 : i32");
  return x;
}

}  // namespace

Value arange(Builder& b, Value start, Value step, int64_t n, DType out) {
  DType c = start.dtype();
  Value i = b.convert(b.iota(Type{DType::S64, {n}}, 0), c);
  Value v = b.add(b.broadcast_to(start, {n}), b.mul(b.broadcast_to(step, {n}), i));
  return convert(b, v, out);
}

namespace {

// The two halves of PyTorch's linspace / logspace: start + step * i below
// steps / 2, end - step * (steps - 1 - i) from there (so both ends are exact).
// `round` applies the element dtype's rounding after each op.
// index_dtype: the type the index is converted to before the product (the
// compute dtype unless given).
template <class Round>
Value halves(Builder& b, Value start, Value end, Value step, int64_t steps, DType c, Round round,
             DType index_dtype = DType::PRED) {
  Shape s{steps};
  auto index = [&](Value i) {
    if (index_dtype != DType::PRED) i = b.convert(i, index_dtype);
    return round(b.convert(i, c));
  };
  Value i = b.iota(Type{DType::S64, s}, 0);
  Value back = b.sub(b.constant(DType::S64, static_cast<double>(steps - 1), s), i);
  Value st = b.broadcast_to(b.convert(step, c), s);
  Value lo = round(b.add(b.broadcast_to(b.convert(start, c), s), round(b.mul(st, index(i)))));
  Value hi = round(b.sub(b.broadcast_to(b.convert(end, c), s), round(b.mul(st, index(back)))));
  Value first = b.compare(Cmp::LT, i, b.constant(DType::S64, static_cast<double>(steps / 2), s));
  return b.select(first, lo, hi);
}

}  // namespace

Value linspace(Builder& b, Value start, Value end, Value step, int64_t steps, DType out) {
  // Floats compute in their own type (PyTorch's step_t is scalar_t);
  // integers in f64, truncated at the end.
  // `wide`: f64, or f32 where the device has no f64 (the caller's operands say which).
  DType wide = start.dtype() == DType::F64 ? DType::F64 : DType::F32;
  if (!shlo::is_float(out)) {
    Value v = halves(b, start, end, step, steps, wide, [](Value x) { return x; });
    return convert(b, v, out);
  }
  if (out == DType::F32) {
    // PyTorch's kernels (CPU and CUDA) compile start + step * i to a fused
    // multiply-add; f64 reproduces it: the product of two f32 values is
    // exact there, and only the sum rounds (twice, which almost never
    // matters).
    Value v = halves(b, start, end, step, steps, wide, [&](Value x) { return x; }, /*index_dtype=*/DType::F32);
    return b.convert(v, out);
  }
  DType c = random_compute_dtype(out);
  Value v = halves(b, start, end, step, steps, c, [&](Value x) { return round_to(b, x, out); });
  return b.convert(v, out);
}

Value logspace(Builder& b, Value start, Value end, Value step, Value base, int64_t steps, DType out) {
  // PyTorch computes exponents and powers in f64; we do for f64 and integer
  // results, and in f32 for narrower floats (TPUs lack fast f64) or where
  // the caller's operands are f32 (no f64 at all).
  DType c = (out == DType::F64 || !shlo::is_float(out)) && start.dtype() == DType::F64 ? DType::F64 : DType::F32;
  Value e = halves(b, start, end, step, steps, c, [](Value x) { return x; });
  Value v = b.binary("power", b.broadcast_to(b.convert(base, c), {steps}), e);
  return convert(b, v, out);
}

Value eye(Builder& b, int64_t n, int64_t m, DType out) {
  Type t{DType::S64, {n, m}};
  return convert(b, b.compare(Cmp::EQ, b.iota(t, 0), b.iota(t, 1)), out);
}

}  // namespace ops
