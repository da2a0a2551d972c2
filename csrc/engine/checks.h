// Deferred checks of device values, like a CUDA device-side assert but
// recoverable: an op that must validate data living on the device (index
// bounds) records a small program computing what it needs instead of
// waiting for it. The host looks at the answers at its next read or
// synchronize() and raises the first failure there; until then nothing
// waits, so checks never break the strict mode's queue or a fused program.
#pragma once

#include <functional>
#include <vector>

#include "engine/graph.h"

namespace engine {

// verify receives value's elements (s64) and throws to report a failure.
using Verify = std::function<void(const std::vector<int64_t>&)>;
void defer_check(const Ref& value, Verify verify);
// Reads back every pending check and runs its verify; the first failure is
// raised after all pending checks are consumed.
void run_checks();

}  // namespace engine
