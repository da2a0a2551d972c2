// The floor under every strict-mode op: one cached `add` program launched
// straight through the PJRT runtime (no dispatcher, no recording, no
// executor thread). What an op costs beyond it is the device layer's own
// overhead, so benchmarks report op times as ratios over this floor,
// measured in the same process beside them.
#pragma once

#include <cstdint>

namespace engine {

struct LaunchFloor {
  double launch_us = 0;        // execute alone, per op
  double launch_event_us = 0;  // execute asking for its completion event, as the engine does
};

// Times `iters` back-to-back launches of a + b on `elements` f32 values
// (compiled once per size), waiting for the last result.
LaunchFloor launch_floor(int64_t elements, int iters);

}  // namespace engine
