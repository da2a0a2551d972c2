// Launching (see launch.h): materialize(), the donation variants a call can
// use from the cache, the launch itself, and the programs in flight.
#include "engine/launch.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <utility>

#include "engine/op.h"
#include "engine/plan.h"
#include "engine/program.h"
#include "engine/runtime.h"
#include "engine/timeline.h"

namespace engine {

namespace {

std::mutex g_materialize_mu;

// Completion events of launched programs not yet known to be done, for
// synchronize(): a program runs even when its outputs died before it did.
std::mutex g_flight_mu;
// Shared: a device event recorded now holds the ones before it.
std::vector<std::shared_ptr<pjrt::Event>> g_in_flight;

void track_in_flight(std::shared_ptr<pjrt::Event> done) {
  std::lock_guard<std::mutex> g(g_flight_mu);
  if (g_in_flight.size() >= 256) {
    std::vector<std::shared_ptr<pjrt::Event>> keep;
    for (auto& e : g_in_flight)
      if (!e->ready()) keep.push_back(std::move(e));
    g_in_flight.swap(keep);
  }
  g_in_flight.push_back(std::move(done));
}

std::atomic<int64_t> g_donated{0};

pjrt::BufferPtr copy_through_host(const pjrt::Buffer& b) {
  std::vector<char> host(b.on_device_bytes());
  b.to_host(host.data(), host.size());
  return Runtime::get().client().from_host(host.data(), b.element_type(), b.dims(), b.device());
}

// The device a value is computed on: its own, or device 0 for a value no
// tensor placed (the engine used directly).
int device_of(const Ref& r) { return r.node->device >= 0 ? r.node->device : 0; }

}  // namespace

pjrt::BufferPtr on_device(const Ref& p, const pjrt::BufferPtr& b, int device) {
  if (b->device() == device) return b;
  if (p.node->device != kAnyDevice)
    throw pjrt::Error("internal: a program on tpu:" + std::to_string(device) +
                      " reads a value of tpu:" + std::to_string(b->device()) + " (from '" + p.node->name + "')");
  static std::mutex mu;
  // Leaked like the scalars themselves; the source is kept so its address
  // cannot be reused by another buffer while the entry lives.
  static auto& copies =
      *new std::map<std::pair<const pjrt::Buffer*, int>, std::pair<pjrt::BufferPtr, pjrt::BufferPtr>>();
  std::lock_guard<std::mutex> g(mu);
  auto it = copies.find({b.get(), device});
  if (it != copies.end()) return it->second.second;
  if (copies.size() > 4096) copies.clear();
  pjrt::BufferPtr copy = Runtime::get().client().copy_to_device(*b, device);
  copies.emplace(std::make_pair(b.get(), device), std::make_pair(b, copy));
  return copy;
}

namespace {

// Which inputs can be donated depends on who still holds them, which varies
// from run to run. Rather than compile a variant, a cached one serves the
// call: the program that donates nothing (the inputs just stay alive), the
// one that donates every input it can, or one donating a single input, run
// on copies of the inputs this call must keep if they are small (a compile
// costs tens of milliseconds). A second process then compiles nothing where
// the first donated differently. On success aliases and key are the
// variant's, and copies holds the buffers to pass for the kept inputs.
pjrt::ExecutablePtr cached_variant(Runtime& rt, const Plan& plan, Aliases& aliases, Key& key,
                                   std::map<int, pjrt::BufferPtr>& copies) {
  const size_t n = plan.params.size();
  std::vector<Aliases> variants{{}};
  variants.emplace_back();
  pair_outputs(plan, std::vector<char>(n, 1), variants.back());
  for (size_t i = 0; i < n; ++i) {
    std::vector<char> only(n, 0);
    only[i] = 1;
    variants.emplace_back();
    pair_outputs(plan, only, variants.back());
  }
  auto buffer = [&](int i) { return plan.params[i].node->buffers[plan.params[i].index]; };
  std::vector<char> may_donate(n, 0);
  for (const auto& a : aliases) may_donate[a.first] = 1;
  // Small enough that the copy's memory never matters: an in-place loop on
  // a large tensor must never hold two copies of it (it compiles instead).
  constexpr int64_t kMaxCopyBytes = 64 << 10;
  std::set<Aliases> tried{aliases};
  for (auto& v : variants) {
    if (!tried.insert(v).second) continue;
    int64_t bytes = 0;
    for (const auto& a : v)
      if (!may_donate[a.first]) bytes += buffer(a.first)->on_device_bytes();
    if (bytes > kMaxCopyBytes) continue;
    Key k = program_key(plan, v);
    pjrt::ExecutablePtr exe = rt.cached(k.str());
    if (!exe) continue;
    for (const auto& a : v)
      if (!may_donate[a.first]) copies[a.first] = copy_through_host(*buffer(a.first));
    aliases = std::move(v);
    key = std::move(k);
    return exe;
  }
  return nullptr;
}

}  // namespace

std::vector<pjrt::BufferPtr> launch(const pjrt::Executable& exe, const std::vector<PJRT_Buffer*>& args,
                                    const std::vector<pjrt::Buffer*>& donated, const std::function<std::string()>& what,
                                    const std::function<std::string()>& name, int device) {
  std::vector<pjrt::BufferPtr> outs;
  std::unique_ptr<pjrt::Event> done;
  const int64_t launched = timeline::on() ? timeline::now_ns() : 0;
  for (pjrt::Buffer* b : donated) b->set_donated(true);
  try {
    const pjrt::Client& c = Runtime::get().client();
    outs = exe.execute(args, {}, false, &done, pjrt::Launch{c.device_count() > 1 ? c.device(device) : nullptr, device});
  } catch (const pjrt::Error& e) {
    for (pjrt::Buffer* b : donated) b->set_donated(false);
    throw pjrt::Error("running " + what() + " failed: " + e.what(), e.code());
  }
  g_donated.fetch_add(static_cast<int64_t>(donated.size()), std::memory_order_relaxed);
  if (launched && done) timeline::executed(name(), what(), launched, *done);
  track_in_flight(std::move(done));
  return outs;
}

namespace {

// One program for refs, all on one device.
void materialize_on(const std::vector<Ref>& refs, int device) {
  Plan plan;
  if (!plan_single(refs, plan)) plan_graph(refs, plan);
  if (plan.order.empty()) return;
  const std::vector<Node*>& order = plan.order;
  const std::vector<Ref>& params = plan.params;
  Aliases aliases = plan_donation(plan, refs);
  Key key = program_key(plan, aliases);
  auto what = [&]() { return describe(plan); };
  for (const Ref& p : params)
    if (is_placeholder(p))
      throw pjrt::Error("the data of a compiled graph's input is needed while the graph is traced (by " + what() +
                        "); such an op cannot be part of a compiled graph");

  Runtime& rt = Runtime::get();
  // Copies of kept inputs, for a cached variant that donates them.
  std::map<int, pjrt::BufferPtr> copies;
  pjrt::ExecutablePtr exe = rt.cached(key.str());
  if (!exe && donation_enabled()) exe = cached_variant(rt, plan, aliases, key, copies);
  if (!exe) {
    int64_t size_class = 0;
    for (const Node* n : plan.order) size_class = std::max(size_class, n->size_class);
    exe = rt.compile(key.str(), [&]() { return program_text(plan, aliases); }, what, {}, size_class);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const pjrt::BufferPtr& b = params[i].node->buffers[params[i].index];
    if (b->device() != device && !copies.count(static_cast<int>(i)))
      copies[static_cast<int>(i)] = on_device(params[i], b, device);
  }
  auto arg = [&](size_t i) -> pjrt::Buffer* {
    auto c = copies.find(static_cast<int>(i));
    return c != copies.end() ? c->second.get() : params[i].node->buffers[params[i].index].get();
  };
  std::vector<PJRT_Buffer*> args;
  args.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) args.push_back(arg(i)->get());
  std::vector<pjrt::Buffer*> donated;
  for (const auto& a : aliases) donated.push_back(arg(a.first));
  std::vector<pjrt::BufferPtr> outs = launch(*exe, args, donated, what, [&] { return summary(plan); }, device);
  size_t k = 0;
  for (int i : plan.targets) {
    Node* t = order[i];
    t->device = device;
    t->buffers.assign(outs.begin() + k, outs.begin() + k + t->out_types.size());
    k += t->out_types.size();
  }
  // Materialized nodes forget how they were made, so the graph behind them
  // can be freed.
  for (int i : plan.targets) {
    order[i]->inputs.clear();
    order[i]->lower = nullptr;
    order[i]->attrs.reset();
  }
}

}  // namespace

void materialize(const std::vector<Ref>& refs) {
  std::lock_guard<std::mutex> lock(g_materialize_mu);
  int first = -1;
  bool one_device = true;
  for (const Ref& r : refs) {
    if (!r || r.node->materialized()) continue;
    const int d = device_of(r);
    if (first < 0) first = d;
    one_device &= d == first;
  }
  if (first < 0) return;
  if (one_device) return materialize_on(refs, first);
  // Fused mode's pending values of several devices: a program per device.
  std::map<int, std::vector<Ref>> by_device;
  for (const Ref& r : refs)
    if (r && !r.node->materialized()) by_device[device_of(r)].push_back(r);
  for (const auto& [d, rs] : by_device) materialize_on(rs, d);
}

Replicas run_replicas(const Key& key, const std::function<std::string()>& build,
                      const std::function<std::string()>& what, const std::vector<int>& devices,
                      const std::vector<std::vector<Ref>>& inputs) {
  std::vector<std::vector<pjrt::BufferPtr>> held(inputs.size());
  std::vector<std::vector<PJRT_Buffer*>> raw(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    for (const Ref& r : inputs[i]) {
      // The caller computed them (a host read, above this floor).
      if (!r.node->materialized())
        throw pjrt::Error("internal: replica " + std::to_string(i) + " of " + what() + " reads a deferred value");
      held[i].push_back(r.node->buffers[r.index]);
      if (held[i].back()->device() != devices.at(i))
        throw pjrt::Error("internal: replica " + std::to_string(i) + " of " + what() +
                          " runs on tpu:" + std::to_string(devices[i]) +
                          " but its input is on tpu:" + std::to_string(held[i].back()->device()));
      raw[i].push_back(held[i].back()->get());
    }
  pjrt::ExecutablePtr exe = Runtime::get().executable(key.str(), build, what, devices);
  std::vector<std::unique_ptr<pjrt::Event>> done;
  const int64_t launched = timeline::on() ? timeline::now_ns() : 0;
  std::vector<std::vector<pjrt::BufferPtr>> outs;
  try {
    outs = exe->execute_replicas(raw, devices, &done);
  } catch (const pjrt::Error& e) {
    throw pjrt::Error("running " + what() + " failed: " + e.what(), e.code());
  }
  Replicas result;
  for (auto& d : done) {
    if (launched && d) timeline::executed(what(), what(), launched, *d);
    result.done.push_back(std::move(d));
    track_in_flight(result.done.back());
  }
  result.values.resize(outs.size());
  for (size_t i = 0; i < outs.size(); ++i)
    for (pjrt::BufferPtr& b : outs[i])
      result.values[i].push_back(leaf(b, shlo::Type{from_pjrt(b->element_type()), b->dims()}));
  return result;
}

std::unique_lock<std::mutex> lock_graph() { return std::unique_lock<std::mutex>(g_materialize_mu); }

int64_t donated_buffers() { return g_donated.load(std::memory_order_relaxed); }

std::vector<std::shared_ptr<pjrt::Event>> in_flight() {
  std::lock_guard<std::mutex> g(g_flight_mu);
  return g_in_flight;
}

std::vector<std::shared_ptr<pjrt::Event>> take_in_flight() {
  std::vector<std::shared_ptr<pjrt::Event>> taken;
  std::lock_guard<std::mutex> g(g_flight_mu);
  taken.swap(g_in_flight);
  return taken;
}

void await_in_flight_quietly() {
  std::lock_guard<std::mutex> g(g_flight_mu);
  for (auto& e : g_in_flight) {
    try {
      e->await("");
    } catch (const pjrt::Error&) {
      // Raised again by synchronize(): the event keeps its status.
    }
  }
}

}  // namespace engine
