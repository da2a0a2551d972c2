// Host reads, synchronize() and quiesce() (see reads.h).
#include "engine/reads.h"

#include <exception>
#include <memory>
#include <vector>

#include "engine/checks.h"
#include "engine/executor.h"
#include "engine/launch.h"
#include "engine/mode.h"
#include "engine/runtime.h"
#include "engine/timeline.h"

namespace engine {

pjrt::BufferPtr buffer(const Ref& ref) {
  prepare_read(ref);  // also waits for queued strict-mode work touching ref
  if (!ref.node->buffers[ref.index])
    throw pjrt::Error("the data of a compiled graph's input is needed while the graph is traced");
  return ref.node->buffers[ref.index];
}

void to_host(const Ref& ref, void* dst, size_t nbytes) {
  if (nbytes == 0) return;
  pjrt::BufferPtr b = buffer(ref);
  run_checks(/*include_held=*/false);  // data computed from bad input is never shown
  timeline::Scoped span(timeline::Kind::DeviceToHost, "device to host", static_cast<int64_t>(nbytes));
  b->to_host(dst, nbytes);
}

Ref to_device(const Ref& ref, int device) {
  pjrt::BufferPtr b = buffer(ref);
  if (b->device() == device) return ref;
  return leaf(Runtime::get().client().copy_to_device(*b, device), ref.type());
}

void synchronize() {
  flush();
  run_checks();
  std::vector<std::shared_ptr<pjrt::Event>> pending = take_in_flight();
  std::exception_ptr first;
  timeline::Scoped span(timeline::Kind::Wait, "synchronize");
  for (auto& e : pending) {
    try {
      e->await("synchronizing the device");
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  // The memory of values freed before now is back with the plugin.
  pjrt::flush_releases();
  if (first) std::rethrow_exception(first);
}

void quiesce() {
  wait_idle();
  await_in_flight_quietly();
}

}  // namespace engine
