// The collective family's ATen side, for the device transport of the c10d
// backend (aten/distributed.cc): which c10d reductions the device computes,
// and one collective run as a replicated program over the members' tensors.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <vector>

#include "engine/graph.h"
#include "engine/launch.h"
#include "ops/collective/collective.h"

namespace tpu {

// The reduction the device computes for c10d's op (AVG of floating point
// and complex tensors only, else an error), or none (bitwise reductions and
// premultiplied sums: the host transport's).
std::optional<ops::Reduction> device_reduction(const c10d::ReduceOp& op, const std::vector<at::Tensor>& ts);

// A member's inputs flattened to 1-D (one program serves every shape of a
// size) and their types.
std::vector<engine::Ref> flat_inputs(const std::vector<at::Tensor>& ts, std::vector<shlo::Type>& types);

// Runs c over every member's flat inputs (all[i]: member i's, on device
// devices[i]) as one replicated program.
engine::Replicas run_collective(const ops::CollectiveCall& c, const std::vector<shlo::Type>& types,
                                const std::vector<int>& devices, const std::vector<std::vector<engine::Ref>>& all);

// Stores a member's flat results into its outputs (same count, each of its
// result's size, any shape).
void store_results(const ops::CollectiveCall& c, const std::vector<engine::Ref>& results,
                   const std::vector<at::Tensor>& outputs, c10::Device device);

}  // namespace tpu
