// Deferred checks of device values (see checks.h).
#include "engine/checks.h"

#include <exception>
#include <memory>
#include <mutex>

#include "engine/mode.h"
#include "engine/program.h"
#include "engine/reads.h"
#include "engine/timeline.h"

namespace engine {

namespace {

struct Check {
  std::shared_ptr<Slot> slot;  // launched like any stored value, in every mode
  Verify verify;
};

std::mutex g_mu;
std::vector<Check> g_checks;
// The calling thread's read's held checks: another thread's read has its own
// value to protect.
thread_local std::unordered_set<const Node*> t_held;

}  // namespace

void defer_check(const Ref& value, Verify verify) {
  if (Trace* t = tracing()) {  // checked after each call of the compiled graph
    t->checks.emplace_back(value, std::move(verify));
    return;
  }
  auto slot = std::make_shared<Slot>();
  slot->value = value;
  {
    std::lock_guard<std::mutex> g(g_mu);
    g_checks.push_back(Check{slot, std::move(verify)});
  }
  commit(slot);
  // Debug mode answers at once, on the line that caused it.
  if (mode() == Mode::Debug) run_checks();
}

std::unordered_set<const Node*> deferred_checks() {
  std::unordered_set<const Node*> nodes;
  std::lock_guard<std::mutex> g(g_mu);
  for (const Check& c : g_checks)
    if (!c.slot->value.node->materialized()) nodes.insert(c.slot->value.node.get());
  return nodes;
}

void hold_checks(std::unordered_set<const Node*> nodes) { t_held = std::move(nodes); }

void run_checks(bool include_held) {
  std::vector<Check> checks;
  {
    std::lock_guard<std::mutex> g(g_mu);
    checks.swap(g_checks);
    if (!include_held && !t_held.empty()) {
      std::vector<Check> now;
      for (Check& c : checks) (t_held.count(c.slot->value.node.get()) ? g_checks : now).push_back(std::move(c));
      checks.swap(now);
    }
    t_held.clear();
  }
  if (checks.empty()) return;
  std::exception_ptr first;
  for (Check& c : checks) {
    try {
      std::vector<int64_t> v(shlo::numel(c.slot->value.type().shape));
      timeline::Scoped span(timeline::Kind::DeviceToHost, "read a device check",
                            static_cast<int64_t>(v.size() * sizeof(int64_t)));
      buffer(c.slot->value)->to_host(v.data(), v.size() * sizeof(int64_t));
      c.verify(v);
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace engine
