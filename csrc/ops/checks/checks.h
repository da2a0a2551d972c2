// Lowerings that compute the answers of deferred device checks
// (engine/checks.h): small s64 vectors the host inspects at its next read,
// so a kernel can refuse the same bad data the CPU refuses without waiting.
#pragma once

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

// The first element of the integer value x (in row-major order) outside
// [lo, hi) that is not equal to skip, as s64[2] {position, value}; position
// is numel(x) when there is none.
Value first_outside(Builder& b, Value x, int64_t lo, int64_t hi, int64_t skip);

// s64[1]: the position of the first element of the floating value x that
// is outside [lo, hi] or NaN, or numel(x). lo, hi: 0-d of x's dtype.
Value first_outside_closed(Builder& b, Value x, Value lo, Value hi);

// Validity of probability rows p [rows, cats] (multinomial), as s64[3]:
// {position of the first element that is negative, NaN or infinite (or
// rows * cats), 1 if that element is +inf else 0, first all-zero row (or
// rows)}.
Value probability_faults(Builder& b, Value p);

}  // namespace ops
