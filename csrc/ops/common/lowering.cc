// Shared lowering primitives: see lowering.h.
#include "ops/common/lowering.h"

#include <limits>
#include <numeric>
#include <vector>

namespace ops {

using shlo::Builder;
using shlo::Value;

Value logical_and(Builder& b, Value x, Value y) { return b.op1(hlo::kAnd, {x, y}, x.type); }
Value logical_or(Builder& b, Value x, Value y) { return b.op1(hlo::kOr, {x, y}, x.type); }
Value logical_xor(Builder& b, Value x, Value y) { return b.op1(hlo::kXor, {x, y}, x.type); }
Value logical_not(Builder& b, Value x) { return b.op1(hlo::kNot, {x}, x.type); }

Value constant_like(Builder& b, double v, const Value& like) { return b.constant(like.dtype(), v, like.shape()); }
Value compare_to(Builder& b, shlo::Cmp dir, Value x, Value y) { return b.compare(dir, x, y); }
Value compare_to(Builder& b, shlo::Cmp dir, Value x, double v) { return b.compare(dir, x, constant_like(b, v, x)); }
Value is_nan(Builder& b, Value x) {
  // A complex value is NaN where either part is; XLA's compare of a complex
  // NaN with itself does not say so.
  if (shlo::is_complex(x.dtype())) return logical_or(b, is_nan(b, real_part(b, x)), is_nan(b, imag_part(b, x)));
  return b.compare(shlo::Cmp::NE, x, x);
}

shlo::DType real_of(shlo::DType t) { return t == shlo::DType::C128 ? shlo::DType::F64 : shlo::DType::F32; }
shlo::DType complex_of(shlo::DType t) {
  return t == shlo::DType::F64 || t == shlo::DType::C128 ? shlo::DType::C128 : shlo::DType::C64;
}
Value real_part(Builder& b, Value x) { return b.op1(hlo::kReal, {x}, shlo::Type{real_of(x.dtype()), x.shape()}); }
Value imag_part(Builder& b, Value x) { return b.op1(hlo::kImag, {x}, shlo::Type{real_of(x.dtype()), x.shape()}); }
Value modulus(Builder& b, Value x) {
  Value abs = b.op1(hlo::kAbs, {x}, shlo::Type{real_of(x.dtype()), x.shape()});
  // As C's cabs (hypot): an infinite part makes |x| infinite even beside a
  // NaN part, where XLA's abs gives NaN for (NaN, inf); otherwise a NaN
  // part makes it NaN, where XLA's abs of (1.5, NaN) is 2.12 and of (0, NaN) 0.
  const double inf = std::numeric_limits<double>::infinity();
  Value infinite = logical_or(b, compare_to(b, shlo::Cmp::EQ, b.unary("abs", real_part(b, x)), inf),
                              compare_to(b, shlo::Cmp::EQ, b.unary("abs", imag_part(b, x)), inf));
  Value r = b.select(is_nan(b, x), constant_like(b, std::numeric_limits<double>::quiet_NaN(), abs), abs);
  return b.select(infinite, constant_like(b, inf, abs), r);
}
Value exponential(Builder& b, Value x) {
  Value e = b.unary("exponential", x);
  if (!shlo::is_complex(x.dtype())) return e;
  const double inf = std::numeric_limits<double>::infinity();
  Value re = real_part(b, x), im = imag_part(b, x);
  Value im_not_finite = logical_not(b, b.op1(hlo::kIsFinite, {im}, {shlo::DType::PRED, im.shape()}));
  Value to_zero = logical_and(b, compare_to(b, shlo::Cmp::EQ, re, -inf), im_not_finite);
  Value to_inf = logical_and(b, compare_to(b, shlo::Cmp::EQ, re, inf), im_not_finite);
  // Zero's imaginary part takes y's sign (+0 for a NaN y).
  Value zero_im = b.select(compare_to(b, shlo::Cmp::LT, im, 0.0), constant_like(b, -0.0, im), constant_like(b, 0, im));
  Value zero = make_complex(b, constant_like(b, 0, re), zero_im);
  Value inf_nan =
      make_complex(b, constant_like(b, inf, re), constant_like(b, std::numeric_limits<double>::quiet_NaN(), re));
  return b.select(to_zero, zero, b.select(to_inf, inf_nan, e));
}

Value make_complex(Builder& b, Value re, Value im) {
  return b.op1(hlo::kComplex, {re, im}, shlo::Type{complex_of(re.dtype()), re.shape()});
}

Value index_bounds(Builder& b, Value idx) {
  Value flat = b.convert(b.reshape(idx, {shlo::numel(idx.shape())}), shlo::DType::S64);
  Value mn = b.reduce(flat, b.highest(shlo::DType::S64), {0}, "minimum");
  Value mx = b.reduce(flat, b.lowest(shlo::DType::S64), {0}, "maximum");
  return b.concatenate({b.reshape(mn, {1}), b.reshape(mx, {1})}, 0);
}

std::vector<int64_t> all_dims(int64_t rank) {
  std::vector<int64_t> d(rank);
  std::iota(d.begin(), d.end(), 0);
  return d;
}

Value count_true(Builder& b, Value x) {
  Value nz = b.compare(shlo::Cmp::NE, x, b.constant(x.dtype(), 0, x.shape()));
  return b.reduce(b.convert(nz, shlo::DType::S64), b.zero(shlo::DType::S64), all_dims(x.rank()), "add");
}

ReduceKind reduce_kind(std::string_view name) {
  if (name == "prod") return ReduceKind::Prod;
  if (name == "mean") return ReduceKind::Mean;
  if (name == "amax") return ReduceKind::Amax;
  if (name == "amin") return ReduceKind::Amin;
  return ReduceKind::Sum;
}

}  // namespace ops
