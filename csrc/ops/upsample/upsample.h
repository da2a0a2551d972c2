// Nearest-neighbour resampling of the trailing spatial dims. The caller
// gives, per spatial dim, the source index of every output position (the
// index rules of PyTorch's nearest / nearest-exact modes depend on its
// float scales and live beside the ATen entry points); the lowering picks
// the cheapest form for each dim: nothing for an identity, a broadcast for
// an integer repeat (out[o] = x[o / k]), a gather otherwise.
#pragma once

#include <vector>

#include "shlo/builder.h"

namespace ops {

// src[j] indexes spatial dim j of x (dim rank - src.size() + j).
shlo::Value resample_nearest(shlo::Builder& b, shlo::Value x, const std::vector<std::vector<int64_t>>& src);

// The gradient of resample_nearest: each input element sums the outputs
// that read it. in_shape is x's shape; half-precision sums run in f32 and
// are rounded once, as the CPU kernel does.
shlo::Value resample_nearest_backward(shlo::Builder& b, shlo::Value grad, const std::vector<std::vector<int64_t>>& src,
                                      const shlo::Shape& in_shape);

}  // namespace ops
