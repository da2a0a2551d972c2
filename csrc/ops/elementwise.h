// Elementwise lowerings with PyTorch semantics. Operands arrive already
// broadcast to one shape and converted to the compute dtype.
#pragma once

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

}  // namespace ops
