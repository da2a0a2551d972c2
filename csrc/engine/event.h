// Device events and streams, as torch.tpu.Event / torch.tpu.Stream see
// them. An event marks a point in the device's work, as a CUDA event marks
// a point in a stream: everything issued before record() (strict-mode ops
// still queued and a fused cluster still recording included). It is done
// when all of that work has finished, and with timing on it knows when.
//
// The device runs work in the order it is launched, from one launch queue
// per process, and PJRT orders programs by their data. Every stream is
// therefore ordered with every other one: streams are real objects (ids a
// guard switches between), and waiting on an event from another stream is
// already implied, so it costs nothing.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace pjrt {
class Event;
}

namespace engine {

class DeviceEvent {
 public:
  explicit DeviceEvent(bool timing) : timing_(timing) {}
  // Marks everything issued so far; an event may be recorded again.
  void record();
  // True when never recorded, or when the work before it has finished.
  bool query() const;
  // Waits for the work before it; raises that work's failure.
  void synchronize() const;
  bool timing() const { return timing_; }
  // Milliseconds from the end of the work before `start` to the end of the
  // work before `end`, once both are done (waits for them).
  static double elapsed_ms(const DeviceEvent& start, const DeviceEvent& end);

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    bool marked = false;  // the launch queue reached the event
    std::vector<std::shared_ptr<pjrt::Event>> work;
    int64_t pending = 0;  // of work, not yet finished
    int64_t done_ns = 0;  // when the last of it finished
  };
  bool timing_;
  std::shared_ptr<State> state_;  // null until recorded
};

// Work issued and not finished, across every stream: false while anything
// is queued, pending in a fused cluster or running.
bool device_busy();

}  // namespace engine
