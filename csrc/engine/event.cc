// Device events (see event.h).
#include "engine/event.h"

#include <stdexcept>

#include "engine/executor.h"
#include "engine/graph.h"
#include "engine/launch.h"
#include "engine/mode.h"
#include "engine/timeline.h"
#include "pjrt/runtime.h"

namespace engine {

void DeviceEvent::record() {
  flush();  // a fused cluster still recording is issued work too
  auto st = std::make_shared<State>();
  state_ = st;
  enqueue_marker([st] {
    std::vector<std::shared_ptr<pjrt::Event>> work = in_flight();
    {
      std::lock_guard<std::mutex> g(st->mu);
      st->work = work;
      st->pending = static_cast<int64_t>(work.size());
      st->marked = true;
      if (work.empty()) st->done_ns = timeline::now_ns();
    }
    st->cv.notify_all();
    for (const auto& e : work)
      e->on_ready([st] {
        std::lock_guard<std::mutex> g(st->mu);
        if (--st->pending == 0) st->done_ns = timeline::now_ns();
        st->cv.notify_all();
      });
  });
}

bool DeviceEvent::query() const {
  if (!state_) return true;
  std::lock_guard<std::mutex> g(state_->mu);
  return state_->marked && state_->pending == 0;
}

void DeviceEvent::synchronize() const {
  if (!state_) return;
  std::vector<std::shared_ptr<pjrt::Event>> work;
  {
    std::unique_lock<std::mutex> l(state_->mu);
    state_->cv.wait(l, [&] { return state_->marked; });
    work = state_->work;
  }
  for (const auto& e : work) e->await("waiting for a device event");
  std::unique_lock<std::mutex> l(state_->mu);
  state_->cv.wait(l, [&] { return state_->pending == 0; });
}

double DeviceEvent::elapsed_ms(const DeviceEvent& start, const DeviceEvent& end) {
  if (!start.timing_ || !end.timing_)
    throw std::invalid_argument("Both events must be created with argument 'enable_timing=True'.");
  if (!start.state_ || !end.state_)
    throw std::invalid_argument("Both events must be recorded before calculating elapsed time.");
  start.synchronize();
  end.synchronize();
  return static_cast<double>(end.state_->done_ns - start.state_->done_ns) / 1e6;
}

bool device_busy() {
  if (queued() > 0) return true;
  if (mode() == Mode::Fused && fused_stats().pending_nodes > 0) return true;  // a cluster still recording
  for (const auto& e : in_flight())
    if (!e->ready()) return true;
  return false;
}

}  // namespace engine
