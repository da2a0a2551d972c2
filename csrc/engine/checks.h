// Deferred checks of device values, like a CUDA device-side assert but
// recoverable: an op that must validate data living on the device (index
// bounds) records a small program computing what it needs instead of
// waiting for it. The host looks at the answers at its next read or
// synchronize() and raises the first failure there; until then nothing
// waits, so checks never break the strict mode's queue or a fused program.
#pragma once

#include <functional>
#include <unordered_set>
#include <vector>

#include "engine/graph.h"
#include "engine/program.h"

namespace engine {

// verify (engine/program.h) receives value's elements and throws to report
// a failure.
void defer_check(const Ref& value, Verify verify);
// Reads back every pending check and runs its verify; the first failure is
// raised after all pending checks are consumed. A host read passes
// include_held=false: it leaves the checks hold_checks() named, which its
// value did not need.
void run_checks(bool include_held = true);

// Pending checks whose values are still deferred (fused mode's reads sort
// them with the rest of the pending graph).
std::unordered_set<const Node*> deferred_checks();
// Names the checks the current host read does not wait for: their values
// are computed by a program launched after the read's own, and nothing the
// read returns was computed from the data they check. They are read at the
// next read or synchronize(). Each read names its own (an empty set clears);
// a thread's read holds only its own.
void hold_checks(std::unordered_set<const Node*> nodes);

}  // namespace engine
