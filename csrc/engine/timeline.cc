// The device timeline (see timeline.h).
#include "engine/timeline.h"

#include <chrono>
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
  g_on.store(false, std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(g_mu);
  return std::exchange(g_spans, {});
}

void record(Span s) {
  std::lock_guard<std::mutex> g(g_mu);
  if (on()) g_spans.push_back(std::move(s));
}

void executed(std::string name, std::string detail, int64_t launch_ns, const pjrt::Event& done) {
  Span s{Kind::Execute, std::move(name), std::move(detail), launch_ns, 0, 0, correlation(), 0};
  done.on_ready([s = std::move(s)]() mutable {
    const int64_t end = now_ns();
    std::lock_guard<std::mutex> g(g_mu);
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
