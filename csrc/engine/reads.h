// Host reads and waits, at the modes' floor: reading a value on the host is
// when a mode must have computed it, so each read goes through the mode
// (prepare_read() in engine/mode.h: fused mode flushes the pending graph
// with it) and answers the deferred checks its data depends on before any
// of it is shown (engine/checks.h). The floors below only record, plan and
// launch; nothing there waits for the device on the host's behalf.
#pragma once

#include <cstddef>

#include "engine/graph.h"
#include "pjrt/runtime.h"

namespace engine {

// Computes ref if deferred and returns the buffer behind it.
pjrt::BufferPtr buffer(const Ref& ref);
// Computes ref and copies it to dense row-major host memory; waits.
void to_host(const Ref& ref, void* dst, size_t nbytes);
// The value of ref copied to another device (computed first if deferred).
Ref to_device(const Ref& ref, int device);

// Waits for every launched program; raises the first error among them.
void synchronize();
// Waits for everything launched or queued so far to finish, raising
// nothing: failures stay pending for the next synchronize() or read (the
// profiler's end of trace, which must not swallow a user's error).
void quiesce();

}  // namespace engine
