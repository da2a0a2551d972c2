// Lowerings added to raise OpInfo conformance (the `coverage` branch): FFTs,
// conjugation, special functions, pooling inverses and other
// ops that used to run through the CPU fallback. PyTorch semantics, no torch.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

// Complex conjugate (identity for real values).
Value conj(Builder& b, Value x);

// ---- special functions (x in f32 / f64)
// polygamma(n, x) for n >= 1 (n: 0-d, x's dtype) with PyTorch's CPU rules:
// trigamma by reflection below 1/2, negative non-integer x shifted to
// positive by the recurrence, poles at non-positive integers.
Value polygamma_cpu(Builder& b, Value n, Value x);

// ---- activations (math in f32 for f16 / bf16)
// First half of x along dim times sigmoid of the second half.
Value glu(Builder& b, Value x, int64_t dim);
Value glu_backward(Builder& b, Value grad, Value x, int64_t dim);

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

// ---- vectors


}  // namespace ops
