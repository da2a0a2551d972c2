// Layer norm and RMS norm lowerings (forward and backward) with PyTorch
// semantics. The normalized dims are the trailing dims from `axis` on;
// statistics keep those dims as size 1. Everything is computed in f32 for
// f16/bf16 (f64 for f64); eps is a runtime 0-d operand.
#pragma once

#include <optional>
#include <vector>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::DType;
using shlo::Value;

struct LayerNormOut {
  Value out, mean, rstd;
};
// weight / bias: shape of the normalized dims, any float dtype.
LayerNormOut layer_norm(Builder& b, Value x, int64_t axis, std::optional<Value> weight, std::optional<Value> bias,
                        Value eps, DType stat_dtype);

// Gradients {input, weight, bias}; an entry is empty when not requested
// (mask false) or when its parameter is absent. dtypes: input's, weight's,
// bias's.
std::vector<std::optional<Value>> layer_norm_backward(Builder& b, Value grad, Value x, Value mean, Value rstd,
                                                      std::optional<Value> weight, std::optional<Value> bias,
                                                      int64_t axis, const std::vector<bool>& mask);

struct RmsNormOut {
  Value out, rstd;
};
// eps: the 0-d operand (callers substitute the dtype's epsilon when None).
RmsNormOut rms_norm(Builder& b, Value x, int64_t axis, std::optional<Value> weight, Value eps);
// Gradients {input, weight} in x's dtype; empty when not requested / absent.
std::vector<std::optional<Value>> rms_norm_backward(Builder& b, Value grad, Value x, Value rstd,
                                                    std::optional<Value> weight, int64_t axis,
                                                    const std::vector<bool>& mask);

}  // namespace ops
