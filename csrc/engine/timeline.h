// The device timeline: while a profiler listens, the engine notes what the
// device did (each program compiled, loaded and executed, each transfer
// between host and device, each wait of the host for the device) as spans
// on the host's wall clock, the clock the profiler's host events use, so one
// trace shows both. Off, a would-be span costs one relaxed atomic load.
//
// Executions are the device's view: the plugin launches asynchronously, and
// the device runs programs in launch order, so a program starts when it was
// launched or when the one before it finished, whichever is later, and ends
// when its completion event fires.
//
// Correlation ties a device span to the host op that caused it: the
// profiler sets the current host op of a thread, and work handed to the
// launch queue carries the id of the op that queued it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace pjrt {
class Event;
}

namespace engine::timeline {

enum class Kind { Compile, Load, Execute, HostToDevice, DeviceToHost, Wait };

struct Span {
  Kind kind;
  std::string name;    // short: what ran ("mm+add+relu (12 ops)") or moved
  std::string detail;  // longer: the ops and input types of a program
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t bytes = 0;  // transfers
  uint64_t correlation = 0;
  int device = 0;
};

extern std::atomic<bool> g_on;
inline bool on() { return g_on.load(std::memory_order_relaxed); }

// Starts recording (dropping anything left from before) / stops and hands
// over what was recorded, executions still running included once they end.
void start();
std::vector<Span> stop();

// Nanoseconds since the epoch on the system clock.
int64_t now_ns();
void record(Span s);

// An execution launched at launch_ns: recorded when done fires.
void executed(std::string name, std::string detail, int64_t launch_ns, const pjrt::Event& done);

// The host op this thread is running, as the profiler numbers it (0: none).
void push_correlation(uint64_t id);
void pop_correlation();
uint64_t correlation();
// Sets this thread's current op for the lifetime of the guard (the launch
// queue runs work under the id of the op that queued it).
class CorrelationScope {
 public:
  explicit CorrelationScope(uint64_t id) { push_correlation(id); }
  ~CorrelationScope() { pop_correlation(); }
  CorrelationScope(const CorrelationScope&) = delete;
};

// Records a span of kind from construction to destruction when on.
class Scoped {
 public:
  Scoped(Kind kind, const char* name, int64_t bytes = 0)
      : kind_(kind), name_(name), bytes_(bytes), start_(on() ? now_ns() : 0) {}
  ~Scoped();
  Scoped(const Scoped&) = delete;

 private:
  Kind kind_;
  const char* name_;
  int64_t bytes_;
  int64_t start_;
};

}  // namespace engine::timeline
