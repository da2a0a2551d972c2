// Elementwise lowerings with PyTorch semantics. Operands arrive already
// broadcast to one shape and converted to the compute dtype.
#pragma once

#include <optional>
#include <string>

#include "ops/common/named_enum.h"
#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

// a + alpha * b (alpha: 0-d)
Value add(Builder& b, Value x, Value y, Value alpha);
Value sub(Builder& b, Value x, Value y, Value alpha);
// PyTorch division: true division for floats; rounding_mode "trunc" or
// "floor" for div(..., rounding_mode=...).
Value div(Builder& b, Value x, Value y, const std::string& rounding_mode = "");

// dtype conversion as PyTorch does it on the CPU: float -> integer
// truncates as x86 does (NaN and values out of range give the minimum of
// int32 / int64) and narrower integers keep the low bits, where XLA
// saturates.
Value convert(Builder& b, Value x, shlo::DType to);

// A 0-d value broadcast to x's shape.
Value splat(Builder& b, Value scalar, const Value& like);

// A one-element value (a tensor argument such as a learning rate or a
// grad scale, 0-d or [1]) as 0-d.
Value as_scalar(Builder& b, Value x);

// ---- PyTorch's elementwise family (the aten*.cc files of this folder).
// Inputs arrive in the op's common dtype and already broadcast; 0-d scalar
// operands (bounds, weights...) are broadcast and converted here. Float16 /
// bfloat16 math runs in float32 and rounds back, as PyTorch's CPU kernels do
// ("opmath").

// The dtype PyTorch computes a half-precision op in: f32 for f16 / bf16.
shlo::DType opmath(shlo::DType t);
// x converted to opmath(x's dtype), and a float result r rounded back to t
// (other results unchanged): the two ends of a half-precision op.
Value to_opmath(Builder& b, Value x);
Value from_opmath(Builder& b, Value r, shlo::DType t);
// v (0-d or already full-shape) converted and broadcast to like.
Value fit(Builder& b, Value v, const Value& like);

// (enum name, PyTorch name)
// clang-format off: macro lists, several entries to a line
#define OPS_UNARY_LIST(X)                                                                              \
  X(Abs, "abs") X(Acos, "acos") X(Acosh, "acosh") X(Asin, "asin") X(Asinh, "asinh") X(Atan, "atan")    \
  X(Atanh, "atanh") X(BitwiseNot, "bitwise_not") X(Ceil, "ceil") X(Cos, "cos") X(Cosh, "cosh")         \
  X(Digamma, "digamma") X(Erf, "erf") X(Erfc, "erfc") X(Erfinv, "erfinv") X(Exp, "exp") X(Exp2, "exp2") \
  X(Expm1, "expm1") X(Floor, "floor") X(Frac, "frac") X(Isinf, "isinf") X(Isnan, "isnan")              \
  X(Isneginf, "isneginf") X(Isposinf, "isposinf") X(Lgamma, "lgamma") X(Log, "log") X(Log10, "log10")  \
  X(Log1p, "log1p") X(Log2, "log2") X(LogicalNot, "logical_not") X(Neg, "neg")                         \
  X(Reciprocal, "reciprocal") X(Round, "round") X(Rsqrt, "rsqrt") X(Sigmoid, "sigmoid") X(Sign, "sign") \
  X(Signbit, "signbit") X(Sin, "sin") X(Sinc, "sinc") X(Sinh, "sinh") X(Sqrt, "sqrt") X(Tan, "tan")    \
  X(Tanh, "tanh") X(Trunc, "trunc")
OPS_NAMED_ENUM(Unary, OPS_UNARY_LIST)
// Same dtype as x, except the predicates (isnan, signbit, logical_not...): PRED.
Value unary(Builder& b, Unary op, Value x);

#define OPS_BINARY_LIST(X)                                                                               \
  X(Atan2, "atan2") X(BitwiseAnd, "bitwise_and") X(BitwiseOr, "bitwise_or") X(BitwiseXor, "bitwise_xor")   \
  X(Copysign, "copysign") X(Fmax, "fmax") X(Fmin, "fmin") X(Fmod, "fmod") X(Heaviside, "heaviside")        \
  X(Hypot, "hypot") X(Logaddexp, "logaddexp") X(Logaddexp2, "logaddexp2") X(LogicalAnd, "logical_and")     \
  X(LogicalOr, "logical_or") X(LogicalXor, "logical_xor") X(Maximum, "maximum") X(Minimum, "minimum")      \
  X(Pow, "pow") X(Remainder, "remainder") X(Xlogy, "xlogy")
OPS_NAMED_ENUM(Binary, OPS_BINARY_LIST)
// clang-format on
// Same dtype as the operands, except logical_*: PRED.
Value binary(Builder& b, Binary op, Value x, Value y);
// x ** e for the exponents PyTorch's CPU kernel special-cases (2, 3, 0.5,
// -0.5, -1, -2), as multiplies and roots; floating x.
Value pow_special(Builder& b, Value x, double e);
// n / z for complex values as PyTorch's c10::complex divides (scaled by the
// larger part of z), with its special values: the CPU's complex kernels
// that divide (reciprocal, sigmoid, silu) give these.
Value divide_c10(Builder& b, Value n, Value z);

Value compare(Builder& b, shlo::Cmp dir, Value x, Value y);

// The n-th derivative of digamma (n: a 0-d operand, n >= 1) with PyTorch's
// CPU rules: trigamma by reflection below 1/2, negative non-integer x
// shifted to positive by the recurrence, poles at non-positive integers.
Value polygamma(Builder& b, Value n, Value x);

// clamp with optional bounds (at least one given). NaN in x or in a bound gives NaN.
Value clamp(Builder& b, Value x, std::optional<Value> lo, std::optional<Value> hi);
// round(x * 10^d) / 10^d, or round(x / 10^-d) * 10^-d for negative d; half to even.
Value round_decimals(Builder& b, Value x, Value ten_pow, bool negative);
Value nan_to_num(Builder& b, Value x, Value nan, Value posinf, Value neginf);
// cond: PRED or U8 (nonzero is true).
Value where(Builder& b, Value cond, Value x, Value y);
Value lerp(Builder& b, Value self, Value end, Value weight);
// self + value * t1 * t2, self + value * t1 / t2
Value addcmul(Builder& b, Value self, Value t1, Value t2, Value value);
Value addcdiv(Builder& b, Value self, Value t1, Value t2, Value value);

// Complex conjugate (identity for real values).
Value conj(Builder& b, Value x);

// ---- integer and bit math (operands broadcast, one dtype)
Value gcd(Builder& b, Value x, Value y);
Value lcm(Builder& b, Value x, Value y);
// PyTorch's shifts: shifting by a negative amount or by the bit width or
// more gives 0 (left) or the sign fill (right).
Value shift_left(Builder& b, Value x, Value y);
Value shift_right(Builder& b, Value x, Value y);
// The next representable value after x towards y (x's float dtype).
Value nextafter(Builder& b, Value x, Value y);
// x * log1p(y), 0 where x == 0 unless y is NaN.
Value xlog1py(Builder& b, Value x, Value y);

}  // namespace ops
