// Collectives as StableHLO: one replicated program per collective call, run
// by every member of a group on its own device (engine::run_replica). The
// values are flat (1-D): the caller flattens tensors and reshapes results,
// so one program serves every shape of the same size.
#pragma once

#include <string>
#include <vector>

#include "engine/key.h"
#include "shlo/builder.h"

namespace ops {

enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast };
// Avg is a sum divided by the group size on the device (floating types).
enum class Reduction { Sum, Product, Min, Max, Avg };

struct CollectiveCall {
  Collective kind = Collective::AllReduce;
  Reduction reduction = Reduction::Sum;  // AllReduce, ReduceScatter
  int group_size = 1;
  int root = 0;  // Broadcast
};

// The result type of one flat input: AllGather multiplies its length by the
// group size, ReduceScatter divides it (it must divide), the others keep it.
shlo::Type collective_result(const CollectiveCall& c, const shlo::Type& input);
// One program applying the collective to each input (each 1-D), replicated
// over group_size replicas that form one group in replica order.
std::string collective_program(const CollectiveCall& c, const std::vector<shlo::Type>& inputs);
// Everything the program depends on, for the cache key (the caller adds the
// devices it runs on).
engine::Key collective_key(const CollectiveCall& c, const std::vector<shlo::Type>& inputs);
const char* collective_name(Collective kind);

}  // namespace ops
