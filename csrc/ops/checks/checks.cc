// Lowerings for deferred device checks (see checks.h).
#include "ops/checks/checks.h"

#include "ops/common/lowering.h"

namespace ops {

using shlo::Cmp;
using shlo::DType;
using shlo::Shape;
using shlo::Type;

namespace {

// Position of the first true element of a 1-D pred, or its length.
Value first_true(Builder& b, Value pred) {
  int64_t n = pred.shape()[0];
  Value pos = b.iota(Type{DType::S64, {n}}, 0);
  Value where = b.select(pred, pos, b.constant(DType::S64, static_cast<double>(n), {n}));
  return b.reduce(where, b.constant(DType::S64, static_cast<double>(n)), {0}, "minimum");
}

// x[at] of a 1-D s64 value (0 when at is past the end).
Value element_at(Builder& b, Value x, Value at) {
  int64_t n = x.shape()[0];
  Value pos = b.iota(Type{DType::S64, {n}}, 0);
  Value hit = b.compare(Cmp::EQ, pos, b.broadcast_to(at, {n}));
  return b.reduce(b.select(hit, x, b.constant(DType::S64, 0, {n})), b.zero(DType::S64), {0}, "add");
}

Value one(Builder& b, Value scalar) { return b.reshape(scalar, {1}); }

}  // namespace

Value first_outside(Builder& b, Value x, int64_t lo, int64_t hi, int64_t skip) {
  int64_t n = shlo::numel(x.shape());
  Shape s{n};
  Value flat = b.convert(b.reshape(x, s), DType::S64);
  auto splat = [&](int64_t v) { return b.broadcast_to(b.constant_i64({v}), s); };
  Value out = b.binary("or", b.compare(Cmp::LT, flat, splat(lo)), b.compare(Cmp::GE, flat, splat(hi)));
  Value bad = b.binary("and", out, b.compare(Cmp::NE, flat, splat(skip)));
  Value at = first_true(b, bad);
  return b.concatenate({one(b, at), one(b, element_at(b, flat, at))}, 0);
}

Value first_outside_closed(Builder& b, Value x, Value lo, Value hi) {
  Shape s{shlo::numel(x.shape())};
  Value flat = b.reshape(x, s);
  // Comparisons with NaN are false, so NaN is never inside.
  Value inside =
      b.binary("and", b.compare(Cmp::GE, flat, b.broadcast_to(lo, s)), b.compare(Cmp::LE, flat, b.broadcast_to(hi, s)));
  return one(b, first_true(b, b.unary("not", inside)));
}

Value probability_faults(Builder& b, Value p) {
  int64_t rows = p.shape()[0], cats = p.shape()[1], n = rows * cats;
  Shape s{n};
  Value flat = b.reshape(p, s);
  Value nonneg = b.compare(Cmp::GE, flat, b.constant(flat.dtype(), 0, s));  // false for NaN
  Value finite = b.op1(hlo::kIsFinite, {flat}, Type{DType::PRED, s});
  Value at = first_true(b, b.unary("not", b.binary("and", nonneg, finite)));
  Value is_inf = b.convert(b.binary("and", nonneg, b.unary("not", finite)), DType::S64);
  Value zero = b.compare(Cmp::EQ, p, b.constant(p.dtype(), 0, p.shape()));
  Value zero_row = b.reduce(zero, b.constant(DType::PRED, 1), {1}, "and");
  return b.concatenate({one(b, at), one(b, element_at(b, is_inf, at)), one(b, first_true(b, zero_row))}, 0);
}

}  // namespace ops
