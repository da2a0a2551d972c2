// The device timeline (see timeline.h).
#include "engine/timeline.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>

#include "pjrt/runtime.h"

namespace engine::timeline {

std::atomic<bool> g_on{false};

namespace {

std::mutex g_mu;
std::vector<Span> g_spans;
// When the last execution recorded on each device ended: the next one on
// that device cannot have started earlier.
std::vector<int64_t> g_device_free;
// Executions recorded while on whose completion callback has not run yet:
// an event is ready before its callbacks run (on a plugin thread), so a
// trace stopped right after a wait would otherwise miss them.
int g_unfinished = 0;
std::condition_variable g_finished;
thread_local std::vector<uint64_t> t_correlation;

}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void start() {
  std::lock_guard<std::mutex> g(g_mu);
  g_spans.clear();
  g_device_free.clear();
  g_on.store(true, std::memory_order_relaxed);
}

std::vector<Span> stop() {
  std::unique_lock<std::mutex> g(g_mu);
  // Bounded: a program that never ends must not hang the profiler.
  g_finished.wait_for(g, std::chrono::seconds(30), [] { return g_unfinished == 0; });
  g_on.store(false, std::memory_order_relaxed);
  return std::exchange(g_spans, {});
}

void record(Span s) {
  std::lock_guard<std::mutex> g(g_mu);
  if (on()) g_spans.push_back(std::move(s));
}

void executed(std::string name, std::string detail, int64_t launch_ns, const pjrt::Event& done) {
  Span s{Kind::Execute, std::move(name), std::move(detail), launch_ns, 0, 0, correlation(), 0};
  {
    std::lock_guard<std::mutex> g(g_mu);
    ++g_unfinished;
  }
  done.on_ready([s = std::move(s)]() mutable {
    const int64_t end = now_ns();
    std::lock_guard<std::mutex> g(g_mu);
    if (--g_unfinished == 0) g_finished.notify_all();
    if (!on()) return;
    if (g_device_free.size() <= static_cast<size_t>(s.device)) g_device_free.resize(s.device + 1, 0);
    int64_t& free_at = g_device_free[s.device];
    s.start_ns = std::max(s.start_ns, std::min(free_at, end));
    s.end_ns = end;
    free_at = end;
    g_spans.push_back(std::move(s));
  });
}

void push_correlation(uint64_t id) { t_correlation.push_back(id); }
void pop_correlation() {
  if (!t_correlation.empty()) t_correlation.pop_back();
}
uint64_t correlation() { return t_correlation.empty() ? 0 : t_correlation.back(); }

Scoped::~Scoped() {
  if (!start_ || !on()) return;
  record(Span{kind_, name_, "", start_, now_ns(), bytes_, correlation(), 0});
}

}  // namespace engine::timeline
