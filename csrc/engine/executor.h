// The launch queue: work is handed to one executor thread that compiles it
// (through the cache) and launches it, so the Python thread pays only for
// dispatch and recording, like enqueueing on a CUDA stream. Strict mode
// queues each op; fused mode queues each cluster, so recording the next
// cluster overlaps compiling and launching the last one.
//
// An error in queued work is sticky: the first one is kept and raised on the
// next dispatch, host read or synchronize() of any thread, then cleared, so
// the process keeps working. Work queued after a failure is not launched; its
// values stay deferred and are computed (or fail again) when read.
#pragma once

#include <functional>
#include <vector>

#include "engine/graph.h"

namespace engine {

// Queues the deferred graph behind refs for launch as one program. Raises a
// pending sticky error first.
void enqueue(std::vector<Ref> refs);
// Queues each list as one program, in order, leaving a pending error for
// the next caller to raise: for a kernel's exit, which cannot throw.
void enqueue_quietly(std::vector<std::vector<Ref>> programs);
// Waits until everything queued so far has been launched (not completed:
// PJRT runs it asynchronously), then raises a pending sticky error.
void drain();
// Raises (and clears) a pending sticky error without waiting.
void raise_pending_error();
// Runs fn on the executor thread once everything queued before it has been
// launched: a point in the launch order (device events).
void enqueue_marker(std::function<void()> fn);
// Like drain(), but leaves a pending error for the next caller to raise.
void wait_idle();
// Launches (ops or clusters) queued and not yet done launching.
int64_t queued();

}  // namespace engine
