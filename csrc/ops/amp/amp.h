// Mixed-precision training helpers (GradScaler's two native ops) with
// PyTorch's semantics.
#pragma once

#include <vector>

#include "shlo/builder.h"

namespace ops {

// _amp_foreach_non_finite_check_and_unscale_: every grad multiplied by
// inv_scale (in float32 for half types), and found_inf set to 1 when any
// element of any grad is inf or NaN (left as it was otherwise).
// found_inf and inv_scale: one f32 element of any shape.
// Returns the new grads followed by the new found_inf.
std::vector<shlo::Value> unscale_and_check(shlo::Builder& b, const std::vector<shlo::Value>& grads,
                                           shlo::Value found_inf, shlo::Value inv_scale);

// _amp_update_scale_: on found_inf the scale backs off and the tracker
// resets; otherwise the tracker counts successful steps and at
// growth_interval the scale grows (unless that overflows) and the tracker
// resets. growth / backoff: 0-d f32; interval: 0-d s32.
// Returns (new scale, new growth tracker) in the input shapes.
std::vector<shlo::Value> update_scale(shlo::Builder& b, shlo::Value scale, shlo::Value tracker, shlo::Value found_inf,
                                      shlo::Value growth, shlo::Value backoff, shlo::Value interval);

}  // namespace ops
