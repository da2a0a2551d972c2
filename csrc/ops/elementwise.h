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

enum class Unary {
  Abs, BitwiseNot, Ceil, Cos, Erf, Erfinv, Exp, Exp2, Expm1, Floor, Frac, Gelu, GeluTanh,
  Isinf, Isnan, Isneginf, Isposinf, Log, Log10, Log1p, Log2, LogSigmoid, LogicalNot, Mish,
  Neg, Reciprocal, Relu, Round, Rsqrt, Sigmoid, Sign, Signbit, Silu, Sin, Sqrt, Tan, Tanh, Trunc,
};
const char* name(Unary op);
// Same dtype as x, except the predicates (isnan, signbit, logical_not...): PRED.
Value unary(Builder& b, Unary op, Value x);

enum class Binary {
  Atan2, BitwiseAnd, BitwiseOr, BitwiseXor, Copysign, Fmax, Fmin, Fmod, Hypot, LogicalAnd,
  LogicalOr, LogicalXor, Maximum, Minimum, Pow, Remainder, Xlogy,
  // Backward formulas (grad, saved tensor).
  GeluBackward, GeluTanhBackward, LogSigmoidBackward, MishBackward, SigmoidBackward,
  SiluBackward, TanhBackward,
};
const char* name(Binary op);
// Same dtype as the operands, except logical_*: PRED.
Value binary(Builder& b, Binary op, Value x, Value y);

Value compare(Builder& b, shlo::Cmp dir, Value x, Value y);

// x <= threshold ? value : other (threshold and threshold_backward).
Value threshold(Builder& b, Value x, Value other, Value threshold, Value value);
Value leaky_relu(Builder& b, Value x, Value slope);
Value leaky_relu_backward(Builder& b, Value grad, Value x, Value slope);
// x > 0 ? scale * x : alpha * scale * (exp(input_scale * x) - 1)
Value elu(Builder& b, Value x, Value alpha, Value scale, Value input_scale);
// x_or_y is the forward input, or its result when is_result.
Value elu_backward(Builder& b, Value grad, Value x_or_y, Value alpha, Value scale, Value input_scale,
                   bool is_result);
Value hardtanh_backward(Builder& b, Value grad, Value x, Value lo, Value hi);
Value softplus(Builder& b, Value x, Value beta, Value threshold);
Value softplus_backward(Builder& b, Value grad, Value x, Value beta, Value threshold);

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
