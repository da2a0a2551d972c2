// Elementwise lowerings with PyTorch semantics. Operands arrive already
// broadcast to one shape and converted to the compute dtype.
#pragma once

#include <optional>
#include <string>

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

// dtype conversion as PyTorch does it on the CPU: float -> narrow unsigned
// wraps modulo 2^bits (through int64) instead of saturating.
Value convert(Builder& b, Value x, shlo::DType to);

// A 0-d value broadcast to x's shape.
Value splat(Builder& b, Value scalar, const Value& like);

// ---- PyTorch's elementwise family (csrc/aten/kernels_elementwise.cc and
// kernels_binary.cc). Inputs arrive in the op's common dtype and already
// broadcast; 0-d scalar operands (slopes, bounds...) are broadcast and
// converted here. Float16 / bfloat16 math runs in float32 and rounds back,
// as PyTorch's CPU kernels do ("opmath").

// The dtype PyTorch computes a half-precision op in: f32 for f16 / bf16.
shlo::DType opmath(shlo::DType t);

// (enum name, PyTorch name)
// clang-format off: macro lists, several entries to a line
#define OPS_UNARY_LIST(X)                                                                              \
  X(Abs, "abs") X(Acos, "acos") X(Acosh, "acosh") X(Asin, "asin") X(Asinh, "asinh") X(Atan, "atan")    \
  X(Atanh, "atanh") X(BitwiseNot, "bitwise_not") X(Ceil, "ceil") X(Cos, "cos") X(Cosh, "cosh")         \
  X(Digamma, "digamma") X(Erf, "erf") X(Erfc, "erfc") X(Erfinv, "erfinv") X(Exp, "exp") X(Exp2, "exp2")                \
  X(Expm1, "expm1") X(Floor, "floor") X(Frac, "frac") X(Gelu, "gelu") X(GeluTanh, "gelu_tanh")         \
  X(Hardsigmoid, "hardsigmoid") X(Hardswish, "hardswish") X(Isinf, "isinf") X(Isnan, "isnan")          \
  X(Isneginf, "isneginf") X(Isposinf, "isposinf") X(Lgamma, "lgamma") X(Log, "log") X(Log10, "log10")  \
  X(Log1p, "log1p") X(Log2, "log2") X(LogSigmoid, "log_sigmoid") X(LogicalNot, "logical_not")          \
  X(Mish, "mish") X(Neg, "neg") X(Reciprocal, "reciprocal") X(Relu, "relu") X(Round, "round")          \
  X(Rsqrt, "rsqrt") X(Sigmoid, "sigmoid") X(Sign, "sign") X(Signbit, "signbit") X(Silu, "silu")        \
  X(Sin, "sin") X(Sinc, "sinc") X(Sinh, "sinh") X(Sqrt, "sqrt") X(Tan, "tan") X(Tanh, "tanh") X(Trunc, "trunc")
enum class Unary {
#define OPS_ENUM(e, n) e,
  OPS_UNARY_LIST(OPS_ENUM)
#undef OPS_ENUM
};
const char* name(Unary op);
// Same dtype as x, except the predicates (isnan, signbit, logical_not...): PRED.
Value unary(Builder& b, Unary op, Value x);

// The second group are backward formulas (grad, saved tensor).
#define OPS_BINARY_LIST(X)                                                                               \
  X(Atan2, "atan2") X(BitwiseAnd, "bitwise_and") X(BitwiseOr, "bitwise_or") X(BitwiseXor, "bitwise_xor")   \
  X(Copysign, "copysign") X(Fmax, "fmax") X(Fmin, "fmin") X(Fmod, "fmod") X(Heaviside, "heaviside")        \
  X(Hypot, "hypot") X(Logaddexp, "logaddexp") X(Logaddexp2, "logaddexp2") X(LogicalAnd, "logical_and")     \
  X(LogicalOr, "logical_or") X(LogicalXor, "logical_xor") X(Maximum, "maximum") X(Minimum, "minimum")      \
  X(Pow, "pow") X(Remainder, "remainder") X(Xlogy, "xlogy")                                                \
  X(GeluBackward, "gelu_backward") X(GeluTanhBackward, "gelu_tanh_backward")                               \
  X(HardsigmoidBackward, "hardsigmoid_backward") X(HardswishBackward, "hardswish_backward")                 \
  X(LogSigmoidBackward, "log_sigmoid_backward") X(MishBackward, "mish_backward")                           \
  X(SigmoidBackward, "sigmoid_backward") X(SiluBackward, "silu_backward") X(TanhBackward, "tanh_backward")
enum class Binary {
#define OPS_ENUM(e, n) e,
  OPS_BINARY_LIST(OPS_ENUM)
#undef OPS_ENUM
  // clang-format on
};
const char* name(Binary op);
// Same dtype as the operands, except logical_*: PRED.
Value binary(Builder& b, Binary op, Value x, Value y);
// x ** e for the exponents PyTorch's CPU kernel special-cases (2, 3, 0.5,
// -0.5, -1, -2), as multiplies and roots; floating x.
Value pow_special(Builder& b, Value x, double e);

Value compare(Builder& b, shlo::Cmp dir, Value x, Value y);

// x <= threshold ? value : other (threshold and threshold_backward).
Value threshold(Builder& b, Value x, Value other, Value threshold, Value value);
Value leaky_relu(Builder& b, Value x, Value slope);
Value leaky_relu_backward(Builder& b, Value grad, Value x, Value slope);
// x > 0 ? scale * x : alpha * scale * (exp(input_scale * x) - 1)
Value elu(Builder& b, Value x, Value alpha, Value scale, Value input_scale);
// x_or_y is the forward input, or its result when is_result.
Value elu_backward(Builder& b, Value grad, Value x_or_y, Value alpha, Value scale, Value input_scale, bool is_result);
Value hardtanh_backward(Builder& b, Value grad, Value x, Value lo, Value hi);
Value softplus(Builder& b, Value x, Value beta, Value threshold);
Value softplus_backward(Builder& b, Value grad, Value x, Value beta, Value threshold);
// hardshrink: |x| <= lambd ? 0 : x; softshrink moves the rest towards 0 by lambd.
Value shrink(Builder& b, Value x, Value lambd, bool soft);
// Both shrinks: |x| <= lambd ? 0 : grad.
Value shrink_backward(Builder& b, Value grad, Value x, Value lambd);
// The n-th derivative of digamma (n: a 0-d operand, n >= 1).
Value polygamma(Builder& b, Value n, Value x);
// log(z / (1 - z)) with z = x, or x clamped to [eps, 1 - eps] when eps is given.
Value logit(Builder& b, Value x, std::optional<Value> eps);
Value logit_backward(Builder& b, Value grad, Value x, std::optional<Value> eps);

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

}  // namespace ops
