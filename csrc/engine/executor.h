// The strict mode's launch queue: ops are handed to one executor thread that
// compiles (through the cache) and launches them, so the Python thread pays
// only for dispatch and recording, like enqueueing on a CUDA stream.
//
// An error in queued work is sticky: the first one is kept and raised on the
// next dispatch, host read or synchronize() of any thread, then cleared, so
// the process keeps working. Work queued after a failure is not launched; its
// values stay deferred and are computed (or fail again) when read.
#pragma once

#include "engine/graph.h"

namespace engine {

// Queues ref's deferred graph for launch. Raises a pending sticky error first.
void enqueue(const Ref& ref);
// Waits until everything queued so far has been launched (not completed:
// PJRT runs it asynchronously), then raises a pending sticky error.
void drain();
// Raises (and clears) a pending sticky error without waiting.
void raise_pending_error();
// Ops queued and not yet launched.
int64_t queued();

}  // namespace engine
