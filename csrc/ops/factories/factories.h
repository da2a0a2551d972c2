// Range factories (arange, linspace, logspace) and eye, with PyTorch's
// rounding: values computed on the device from 0-d runtime operands, so a
// new start or step reuses the program.
#pragma once

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::DType;
using shlo::Value;

// start + step * i for i in [0, n): start and step are 0-d of the compute
// dtype (S64, F32 or F64), converted to `out` at the end.
Value arange(Builder& b, Value start, Value step, int64_t n, DType out);
// PyTorch's linspace formula: start + step * i for the first half, end -
// step * (steps - 1 - i) for the rest. start, end, step are 0-d F64 holding
// values already rounded like PyTorch's (to `out` for floats, step in f64
// for integers); arithmetic rounds after every op like the dtype's own.
Value linspace(Builder& b, Value start, Value end, Value step, int64_t steps, DType out);
// base ^ (start + step * i) (same halves as linspace); all 0-d F64.
Value logspace(Builder& b, Value start, Value end, Value step, Value base, int64_t steps, DType out);
// Ones on the main diagonal of an n x m matrix.
Value eye(Builder& b, int64_t n, int64_t m, DType out);

}  // namespace ops
