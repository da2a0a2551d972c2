// softmax / log_softmax and their gradients, with PyTorch's semantics:
// computed in the accumulation dtype of the result (f32 for f16 / bf16).
#pragma once

#include "shlo/builder.h"

namespace ops {

// softmax or log_softmax of x along dim, result in dtype out.
shlo::Value softmax(shlo::Builder& b, shlo::Value x, int64_t dim, bool log, shlo::DType out);
// Gradient of (log_)softmax with respect to its input, given the forward output.
shlo::Value softmax_backward(shlo::Builder& b, shlo::Value grad, shlo::Value output, int64_t dim, bool log,
                             shlo::DType out);

}  // namespace ops
