#include "engine/graph.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "engine/checks.h"
#include "engine/env.h"
#include "engine/executor.h"
#include "engine/mode.h"
#include "engine/op.h"
#include "engine/program.h"
#include "engine/runtime.h"
#include "engine/timeline.h"

namespace engine {

const shlo::Type& Ref::type() const { return node->out_types[index]; }

namespace {
std::atomic<int64_t> g_recorded{0};
}
int64_t recorded_nodes() { return g_recorded.load(std::memory_order_relaxed); }
void reset_recorded_nodes() { g_recorded.store(0, std::memory_order_relaxed); }

namespace {

[[noreturn]] void devices_differ(int a, int b, const char* what) {
  throw pjrt::Error("Expected all tensors to be on the same device, but found at least two devices, tpu:" +
                        std::to_string(a) + " and tpu:" + std::to_string(b) + "! (" + what + ")",
                    PJRT_Error_Code_INVALID_ARGUMENT);
}

}  // namespace

void place(const Ref& ref, int device) {
  Node* n = ref.node.get();
  if (n->device == device || n->device == kAnyDevice) return;
  if (n->device >= 0) devices_differ(n->device, device, n->name);
  if (n->materialized()) return;  // a compiled graph's placeholder: on whatever device feeds it
  n->device = device;
  std::vector<Node*> stack{n};
  while (!stack.empty()) {
    Node* m = stack.back();
    stack.pop_back();
    for (const Ref& in : m->inputs) {
      Node* k = in.node.get();
      if (k->device != kUnplaced || k->materialized()) continue;
      k->device = device;
      stack.push_back(k);
    }
  }
}

std::vector<Ref> record(const char* name, std::string key, std::vector<Ref> inputs, std::vector<shlo::Type> out_types,
                        LowerThunk lower, std::unique_ptr<Attrs> attrs) {
  g_recorded.fetch_add(1, std::memory_order_relaxed);
  int device = kUnplaced;
  bool unplaced = false;
  for (const Ref& in : inputs) {
    const int d = in.node->device;
    if (d == kUnplaced) unplaced = true;
    if (d < 0 || d == device) continue;
    if (device != kUnplaced) devices_differ(device, d, name);
    device = d;
  }
  if (unplaced && device >= 0)
    for (const Ref& in : inputs) place(in, device);
  auto n = std::make_shared<Node>();
  n->device = device;
  n->name = name;
  n->key = std::move(key);
  n->inputs = std::move(inputs);
  n->out_types = std::move(out_types);
  n->lower = lower;
  n->attrs = std::move(attrs);
  std::vector<Ref> refs;
  refs.reserve(n->out_types.size());
  for (int i = 0; i < static_cast<int>(n->out_types.size()); ++i) refs.push_back(Ref{n, i});
  return refs;
}

namespace detail {

namespace {
std::mutex g_names_mu;
// Leaked on purpose (kernels may record during static destruction).
auto& g_names = *new std::unordered_map<std::string, std::pair<std::string, uint32_t>>();
}  // namespace

void claim_name(const char* name, const std::source_location& where) {
  std::lock_guard<std::mutex> g(g_names_mu);
  auto [it, fresh] = g_names.emplace(name, std::make_pair(std::string(where.file_name()), where.line()));
  if (!fresh && (it->second.first != where.file_name() || it->second.second != where.line()))
    throw pjrt::Error(std::string("internal: op '") + name + "' is recorded at " + it->second.first + ":" +
                      std::to_string(it->second.second) + " and at " + where.file_name() + ":" +
                      std::to_string(where.line()) + "; two lowerings with one name would share compiled programs");
}

}  // namespace detail

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

void append_type(std::string& key, const shlo::Type& t) {
  key += shlo::dtype_name(t.dtype);
  for (int64_t d : t.shape) {
    key += ',';
    key += std::to_string(d);
  }
  key += ';';
}

}  // namespace

namespace {

// Where a deferred node's input comes from inside one program: a parameter
// (a materialized value) or an output of an earlier node of the program.
struct Source {
  bool param;
  int at;         // parameter index, or position of the node in the order
  int index = 0;  // output index of that node
};

// The program behind some refs: deferred nodes in topological order, each
// input resolved to a Source, and the materialized values it reads.
struct Plan {
  std::vector<Node*> order;
  std::vector<std::vector<Source>> sources;  // per node of order
  std::vector<Ref> params;
  std::vector<int> targets;  // positions in order whose outputs the program returns
};

int param_index(Plan& p, const Ref& in) {
  for (size_t i = 0; i < p.params.size(); ++i)
    if (p.params[i].node == in.node && p.params[i].index == in.index) return static_cast<int>(i);
  p.params.push_back(in);
  return static_cast<int>(p.params.size()) - 1;
}

// The common strict-mode case, one op whose inputs are all on the device:
// no graph walk and no maps (this runs once per op on the launch path).
bool plan_single(const std::vector<Ref>& refs, Plan& p) {
  Node* n = nullptr;
  for (const Ref& r : refs) {
    if (!r || r.node->materialized()) continue;
    if (n && n != r.node.get()) return false;
    n = r.node.get();
  }
  if (!n) return true;  // nothing to compute
  for (const Ref& in : n->inputs)
    if (!in.node->materialized()) return false;
  p.order.push_back(n);
  p.sources.emplace_back();
  for (const Ref& in : n->inputs) p.sources[0].push_back(Source{true, param_index(p, in)});
  p.targets.push_back(0);
  return true;
}

void plan_graph(const std::vector<Ref>& refs, Plan& p) {
  std::unordered_map<Node*, int> pos;                    // deferred node -> position in order
  std::unordered_map<Node*, std::vector<int>> param_of;  // materialized node -> param index per output
  std::vector<std::pair<Node*, size_t>> stack;
  std::unordered_set<Node*> pushed;  // a DAG: a pushed node is finished or an ancestor
  auto param = [&](const Ref& in) {
    auto& slots = param_of[in.node.get()];
    if (slots.size() <= static_cast<size_t>(in.index)) slots.resize(in.index + 1, -1);
    if (slots[in.index] < 0) {
      slots[in.index] = static_cast<int>(p.params.size());
      p.params.push_back(in);
    }
    return slots[in.index];
  };
  for (const Ref& r : refs) {
    if (!r || r.node->materialized() || pushed.count(r.node.get())) continue;
    stack.push_back({r.node.get(), 0});
    pushed.insert(r.node.get());
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs.size()) {
        Node* m = n->inputs[next++].node.get();
        if (!m->materialized() && pushed.insert(m).second) stack.push_back({m, 0});
        continue;
      }
      pos[n] = static_cast<int>(p.order.size());
      p.order.push_back(n);
      stack.pop_back();
    }
  }
  // Inputs resolved in program order, so parameters are numbered by first use.
  p.sources.resize(p.order.size());
  for (size_t i = 0; i < p.order.size(); ++i)
    for (const Ref& in : p.order[i]->inputs)
      p.sources[i].push_back(in.node->materialized() ? Source{true, param(in)}
                                                     : Source{false, pos[in.node.get()], in.index});
  for (const Ref& r : refs) {
    if (!r) continue;
    auto it = pos.find(r.node.get());
    if (it == pos.end()) continue;
    bool seen = false;
    for (int t : p.targets) seen |= t == it->second;
    if (!seen) p.targets.push_back(it->second);
  }
}

// Donation: a parameter whose node nothing outside this program can reach
// once it has run is consumed by the program, its buffer reused for an
// output of the same type, so x.add_(1) or an optimizer step updates in
// place instead of holding old and new copies at once.
//
// Reachability is read from reference counts: every reference to a node is
// a Ref, and the Refs this call knows of are the program's own (inputs of
// its nodes, the requested refs, the parameter list). A node with more
// references than that is held elsewhere (a tensor, a queued op, a deferred
// check) and is left alone. Nodes of the program that are not outputs live
// on only if held elsewhere; references from them count as internal only
// when they die with the program.
bool g_donation = [] {
  const char* v = env::get("TORCH_PJRT_DONATE");
  return !(v && std::string(v) == "0");
}();
std::atomic<int64_t> g_donated{0};

// Pairs donatable parameters with unused outputs of their type.
void pair_outputs(const Plan& p, const std::vector<char>& donatable, std::vector<std::pair<int, int>>& aliases) {
  std::vector<const shlo::Type*> outs;
  for (int t : p.targets)
    for (const shlo::Type& ty : p.order[t]->out_types) outs.push_back(&ty);
  std::vector<char> taken(outs.size(), 0);
  for (size_t i = 0; i < p.params.size(); ++i) {
    if (!donatable[i]) continue;
    for (size_t o = 0; o < outs.size(); ++o) {
      if (taken[o] || !(*outs[o] == p.params[i].type())) continue;
      taken[o] = 1;
      aliases.emplace_back(static_cast<int>(i), static_cast<int>(o));
      break;
    }
  }
}

std::vector<std::pair<int, int>> plan_donation(const Plan& p, const std::vector<Ref>& refs) {
  std::vector<std::pair<int, int>> aliases;
  if (!g_donation || p.params.empty()) return aliases;
  // For each node: Refs to it held by this program, and all Refs to it. The
  // total can only fall while we look (a holder may let go, none can be
  // added without one), so the smallest reading is kept.
  struct Count {
    long internal = 0;
    long total = std::numeric_limits<long>::max();
    std::vector<int> users;  // program nodes reading it
  };
  // Looked up linearly while the program is small (the common strict-mode
  // op: no hashing, one allocation) and through a hash index past that.
  struct Counts {
    std::vector<std::pair<const Node*, Count>> flat;
    std::unordered_map<const Node*, size_t> index;
    Count& operator[](const Node* n) {
      if (index.empty()) {
        for (auto& e : flat)
          if (e.first == n) return e.second;
        if (flat.size() < 16) return flat.emplace_back(n, Count{}).second;
        for (size_t i = 0; i < flat.size(); ++i) index.emplace(flat[i].first, i);
      }
      auto [it, fresh] = index.emplace(n, flat.size());
      if (fresh) flat.emplace_back(n, Count{});
      return flat[it->second].second;
    }
  } count;
  count.flat.reserve(16);
  auto see = [&](const Ref& r) {
    Count& c = count[r.node.get()];
    ++c.internal;
    c.total = std::min(c.total, r.node.use_count());
    return &c;
  };
  for (const Ref& r : refs)
    if (r) see(r);
  for (const Ref& r : p.params) see(r);
  for (size_t i = 0; i < p.order.size(); ++i)
    for (const Ref& in : p.order[i]->inputs) see(in)->users.push_back(static_cast<int>(i));
  auto unreachable_after = [&](const Count& c, const std::vector<char>& releases) {
    if (c.total != c.internal) return false;  // held outside this program
    for (int u : c.users)
      if (!releases[u]) return false;
    return true;
  };
  // Outputs drop their inputs after the run; any other program node dies
  // with the run when only dying program nodes hold it. Users come later in
  // topological order, so one backward pass settles it.
  std::vector<char> releases(p.order.size(), 0);
  for (int t : p.targets) releases[t] = 1;
  for (int i = static_cast<int>(p.order.size()) - 1; i >= 0; --i)
    if (!releases[i]) releases[i] = unreachable_after(count[p.order[i]], releases);

  std::vector<char> donatable(p.params.size(), 0);
  for (size_t i = 0; i < p.params.size(); ++i) {
    const Ref& r = p.params[i];
    donatable[i] = r.node->buffers[r.index].use_count() == 1 &&  // nobody holds the buffer itself
                   unreachable_after(count[r.node.get()], releases);
  }
  pair_outputs(p, donatable, aliases);
  return aliases;
}

}  // namespace

namespace {

std::string program_key(const Plan& plan, const std::vector<std::pair<int, int>>& aliases) {
  std::string key;
  key.reserve(128);
  for (const Ref& p : plan.params) append_type(key, p.type());
  for (size_t i = 0; i < plan.order.size(); ++i) {
    key += '|';
    key += plan.order[i]->key;
    key += '(';
    for (const Source& s : plan.sources[i]) {
      key += s.param ? 'p' : 'n';
      key += std::to_string(s.at);
      if (!s.param) {
        key += '.';
        key += std::to_string(s.index);
      }
      key += ',';
    }
    key += ')';
  }
  key += "->";
  for (int t : plan.targets) {
    key += std::to_string(t);
    key += ',';
  }
  for (const auto& [param, out] : aliases) {
    key += '~';
    key += std::to_string(param);
    key += '>';
    key += std::to_string(out);
  }
  return key;
}

// An op's name for people (its key also carries the attributes).
std::string name_of(const Node* n) { return n->name; }

// The bookkeeping around ops: reading and writing views, scalar
// conversions and the flat layout of stored results.
bool bookkeeping(const std::string& name) {
  return name.rfind("view", 0) == 0 || name == "convert_scalar" || name == "flatten";
}

std::string program_text(const Plan& plan, const std::vector<std::pair<int, int>>& aliases) {
  const std::vector<Node*>& order = plan.order;
  shlo::Builder b;
  std::vector<shlo::Value> pvals;
  for (const Ref& p : plan.params) pvals.push_back(b.param(p.type()));
  std::vector<std::vector<shlo::Value>> vals(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    Node* n = order[i];
    std::vector<shlo::Value> in;
    for (const Source& s : plan.sources[i]) in.push_back(s.param ? pvals[s.at] : vals[s.at][s.index]);
    vals[i] = n->lower(b, in, n->attrs.get());
    if (vals[i].size() != n->out_types.size())
      throw pjrt::Error("lowering of '" + name_of(n) + "' produced " + std::to_string(vals[i].size()) +
                        " values, expected " + std::to_string(n->out_types.size()));
    for (size_t k = 0; k < vals[i].size(); ++k)
      if (!(vals[i][k].type == n->out_types[k]))
        throw pjrt::Error("lowering of '" + name_of(n) + "' produced " + vals[i][k].type.str() + ", expected " +
                          n->out_types[k].str());
  }
  std::vector<shlo::Value> outs;
  for (int t : plan.targets)
    for (const shlo::Value& v : vals[t]) outs.push_back(v);
  return b.finish(outs, aliases);
}

// Names the ops and input types for error messages; built only on failure.
std::string describe(const Plan& plan) {
  std::string w;
  for (Node* n : plan.order) {
    std::string name = name_of(n);
    if (bookkeeping(name)) continue;
    if (!w.empty()) w += ", ";
    w += name;
    if (w.size() > 200) break;
  }
  if (w.empty()) w = name_of(plan.order.back());
  w = "'" + w + "' on inputs (";
  for (size_t i = 0; i < plan.params.size() && i < 8; ++i) w += (i ? ", " : "") + plan.params[i].type().str();
  return w + ")";
}

// A program's name on the device timeline: its ops, in order, by name
// alone (no attributes), leaving out the bookkeeping.
std::string summary(const Plan& plan) {
  std::string w;
  int ops = 0;
  for (Node* n : plan.order) {
    std::string name = name_of(n);
    if (bookkeeping(name)) continue;
    ++ops;
    if (w.size() < 60) w += (w.empty() ? "" : "+") + name;
  }
  if (w.empty()) w = name_of(plan.order.back());
  if (w.size() > 60) w = w.substr(0, 60) + "...";
  return ops > 1 ? w + " (" + std::to_string(ops) + " ops)" : w;
}

bool is_placeholder_node(const Node* n) { return n->buffers.size() == 1 && !n->buffers[0]; }

pjrt::BufferPtr copy_through_host(const pjrt::Buffer& b) {
  std::vector<char> host(b.on_device_bytes());
  b.to_host(host.data(), host.size());
  return Runtime::get().client().from_host(host.data(), b.element_type(), b.dims(), b.device());
}

// The device a value is computed on: its own, or device 0 for a value no
// tensor placed (the engine used directly).
int device_of(const Ref& r) { return r.node->device >= 0 ? r.node->device : 0; }

// A parameter's buffer on the program's device: its own, or for a shared
// constant (kAnyDevice) a copy made once per device and kept beside it.
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

// Which inputs can be donated depends on who still holds them, which varies
// from run to run. Rather than compile a variant, a cached one serves the
// call: the program that donates nothing (the inputs just stay alive), the
// one that donates every input it can, or one donating a single input, run
// on copies of the inputs this call must keep if they are small (a compile
// costs tens of milliseconds). A second process then compiles nothing where
// the first donated differently. On success aliases and key are the
// variant's, and copies holds the buffers to pass for the kept inputs.
pjrt::ExecutablePtr cached_variant(Runtime& rt, const Plan& plan, std::vector<std::pair<int, int>>& aliases,
                                   std::string& key, std::map<int, pjrt::BufferPtr>& copies) {
  const size_t n = plan.params.size();
  std::vector<std::vector<std::pair<int, int>>> variants{{}};
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
  std::set<std::vector<std::pair<int, int>>> tried{aliases};
  for (auto& v : variants) {
    if (!tried.insert(v).second) continue;
    int64_t bytes = 0;
    for (const auto& a : v)
      if (!may_donate[a.first]) bytes += buffer(a.first)->on_device_bytes();
    if (bytes > kMaxCopyBytes) continue;
    std::string k = program_key(plan, v);
    pjrt::ExecutablePtr exe = rt.cached(k);
    if (!exe) continue;
    for (const auto& a : v)
      if (!may_donate[a.first]) copies[a.first] = copy_through_host(*buffer(a.first));
    aliases = std::move(v);
    key = std::move(k);
    return exe;
  }
  return nullptr;
}

// Launches exe on args (one per param), marking the aliased ones consumed.
// name: the program's name on the device timeline, asked only when it records.
// device: where it runs (a portable program when the client has several).
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

}  // namespace

namespace {

// One program for refs, all on one device.
void materialize_on(const std::vector<Ref>& refs, int device) {
  Plan plan;
  if (!plan_single(refs, plan)) plan_graph(refs, plan);
  if (plan.order.empty()) return;
  const std::vector<Node*>& order = plan.order;
  const std::vector<Ref>& params = plan.params;
  std::vector<std::pair<int, int>> aliases = plan_donation(plan, refs);
  std::string key = program_key(plan, aliases);
  auto what = [&]() { return describe(plan); };
  for (const Ref& p : params)
    if (is_placeholder_node(p.node.get()))
      throw pjrt::Error("the data of a compiled graph's input is needed while the graph is traced (by " + what() +
                        "); such an op cannot be part of a compiled graph");

  Runtime& rt = Runtime::get();
  // Copies of kept inputs, for a cached variant that donates them.
  std::map<int, pjrt::BufferPtr> copies;
  pjrt::ExecutablePtr exe = rt.cached(key);
  if (!exe && g_donation) exe = cached_variant(rt, plan, aliases, key, copies);
  if (!exe) exe = rt.compile(key, [&]() { return program_text(plan, aliases); }, what);
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

Ref placeholder(shlo::Type type) {
  auto n = std::make_shared<Node>();
  n->name = "placeholder";
  n->key = "placeholder";
  n->out_types = {std::move(type)};
  n->buffers = {nullptr};
  return Ref{n, 0};
}

bool is_placeholder(const Ref& r) { return r && is_placeholder_node(r.node.get()); }

namespace {
thread_local Trace* t_trace = nullptr;
}
Trace* tracing() { return t_trace; }
void set_tracing(Trace* t) { t_trace = t; }

std::shared_ptr<Program> compile_program(const std::vector<Ref>& targets, const std::vector<Ref>& donate) {
  auto prog = std::make_shared<Program>();
  Plan plan;
  std::vector<std::pair<int, int>> aliases;
  {
    // The planner reads the graph while the launch queue may be
    // materializing (and trimming) nodes a captured constant depends on.
    std::lock_guard<std::mutex> lock(g_materialize_mu);
    plan_graph(targets, plan);
    if (plan.order.empty()) throw pjrt::Error("internal: a compiled graph with nothing to compute");
    std::vector<char> donatable(plan.params.size(), 0);
    for (size_t i = 0; i < plan.params.size(); ++i)
      for (const Ref& d : donate) donatable[i] |= d.node == plan.params[i].node && d.index == plan.params[i].index;
    if (g_donation) pair_outputs(plan, donatable, aliases);
    prog->key = program_key(plan, aliases);
    prog->name = "compiled graph: " + summary(plan);
  }
  prog->params = plan.params;
  prog->aliases = aliases;
  std::unordered_map<const Node*, int> first_out;
  for (int t : plan.targets) {
    first_out.emplace(plan.order[t], static_cast<int>(prog->out_types.size()));
    for (const shlo::Type& ty : plan.order[t]->out_types) prog->out_types.push_back(ty);
  }
  for (const Ref& r : targets) {
    auto it = first_out.find(r.node.get());
    prog->target_out.push_back(it == first_out.end() ? -1 : it->second + r.index);
  }
  prog->exe = Runtime::get().executable(
      prog->key, [&]() { return program_text(plan, aliases); }, [&]() { return describe(plan); });
  return prog;
}

std::vector<pjrt::BufferPtr> run_program(const Program& p, const std::vector<pjrt::BufferPtr>& args) {
  // It runs where its inputs are; captured constants follow.
  int device = -1;
  for (size_t i = 0; i < args.size() && device < 0; ++i)
    if (p.params[i].node->device != kAnyDevice) device = args[i]->device();
  if (device < 0) device = 0;
  std::vector<pjrt::BufferPtr> moved(args.size());
  std::vector<PJRT_Buffer*> raw;
  raw.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i]->device() != device) moved[i] = on_device(p.params[i], args[i], device);
    raw.push_back((moved[i] ? moved[i] : args[i])->get());
  }
  std::vector<pjrt::Buffer*> donated;
  for (const auto& a : p.aliases) donated.push_back(args[a.first].get());
  auto what = [&]() { return std::string("a compiled graph"); };
  std::lock_guard<std::mutex> lock(g_materialize_mu);
  return launch(*p.exe, raw, donated, what, [&] { return p.name; }, device);
}

Replicas run_replicas(const std::string& key, const std::function<std::string()>& build,
                      const std::function<std::string()>& what, const std::vector<int>& devices,
                      const std::vector<std::vector<Ref>>& inputs) {
  std::vector<std::vector<pjrt::BufferPtr>> held(inputs.size());
  std::vector<std::vector<PJRT_Buffer*>> raw(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    for (const Ref& r : inputs[i]) {
      held[i].push_back(buffer(r));
      if (held[i].back()->device() != devices.at(i))
        throw pjrt::Error("internal: replica " + std::to_string(i) + " of " + what() +
                          " runs on tpu:" + std::to_string(devices[i]) +
                          " but its input is on tpu:" + std::to_string(held[i].back()->device()));
      raw[i].push_back(held[i].back()->get());
    }
  pjrt::ExecutablePtr exe = Runtime::get().executable(key, build, what, devices);
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

pjrt::BufferPtr copy_buffer(const pjrt::BufferPtr& b, const shlo::Type& type) {
  Ref src = leaf(b, type);
  Ref r = op1("copy_buffer", {src}, type,
              [](shlo::Builder&, const std::vector<shlo::Value>& in) { return std::vector<shlo::Value>{in[0]}; });
  materialize({r});
  return r.node->buffers[0];
}

int64_t donated_buffers() { return g_donated.load(std::memory_order_relaxed); }

void synchronize() {
  flush();
  run_checks();
  std::vector<std::shared_ptr<pjrt::Event>> pending;
  {
    std::lock_guard<std::mutex> g(g_flight_mu);
    pending.swap(g_in_flight);
  }
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

std::vector<std::shared_ptr<pjrt::Event>> in_flight() {
  std::lock_guard<std::mutex> g(g_flight_mu);
  return g_in_flight;
}

void quiesce() {
  wait_idle();
  std::lock_guard<std::mutex> g(g_flight_mu);
  for (auto& e : g_in_flight) {
    try {
      e->await("");
    } catch (const pjrt::Error&) {
      // Raised again by synchronize(): the event keeps its status.
    }
  }
}

namespace {

// The deferred nodes reachable from root (root included when deferred) and,
// when leaves is given, the materialized values they read, shared constants
// aside (every program reads those; they carry no data of anyone's).
void reach(Node* root, std::unordered_set<const Node*>& deferred, std::unordered_set<const Node*>* leaves) {
  auto visit = [&](Node* n, std::vector<Node*>& stack) {
    if (n->materialized()) {
      if (leaves && n->device != kAnyDevice) leaves->insert(n);
    } else if (deferred.insert(n).second) {
      stack.push_back(n);
    }
  };
  std::vector<Node*> stack;
  visit(root, stack);
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Ref& in : n->inputs) visit(in.node.get(), stack);
  }
}

}  // namespace

bool split_for_read(const Ref& ref, const std::vector<Ref>& pending, const std::unordered_set<const Node*>& checks,
                    std::vector<Ref>& with, std::vector<Ref>& apart) {
  // The launch queue is idle (the caller drained it), but another thread's
  // strict-mode launch may be trimming nodes.
  std::lock_guard<std::mutex> lock(g_materialize_mu);
  std::unordered_set<const Node*> mine, reads;
  reach(ref.node.get(), mine, &reads);
  reads.insert(mine.begin(), mine.end());
  // A check of data the read's value is computed from is answered by the
  // read's own program: the read never shows data a pending check rejects.
  for (const Ref& p : pending) {
    if (!checks.count(p.node.get()) || mine.count(p.node.get())) continue;
    std::unordered_set<const Node*> d, l;
    reach(p.node.get(), d, &l);
    bool relevant = false;
    for (const auto* set : {&d, &l})
      for (const Node* n : *set) relevant = relevant || reads.count(n);
    if (relevant) mine.insert(d.begin(), d.end());
  }
  // Whether a deferred node's graph reaches the read's program, memoized
  // over the pending graph (walked once).
  std::unordered_map<const Node*, bool> memo;
  auto reaches = [&](Node* root) {
    std::vector<std::pair<Node*, size_t>> stack{{root, 0}};
    std::vector<char> hit{0};
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs.size()) {
        Node* m = n->inputs[next++].node.get();
        if (m->materialized()) continue;
        if (mine.count(m)) {
          hit.back() = 1;
          continue;
        }
        auto f = memo.find(m);
        if (f != memo.end()) {
          hit.back() |= f->second;
          continue;
        }
        stack.push_back({m, 0});
        hit.push_back(0);
        continue;
      }
      const bool h = hit.back();
      memo[n] = h;
      stack.pop_back();
      hit.pop_back();
      if (!hit.empty()) hit.back() |= h;
    }
    return memo[root];
  };
  for (const Ref& p : pending) {
    Node* n = p.node.get();
    if (n->materialized() || mine.count(n))
      with.push_back(p);
    else if (!reaches(n))
      apart.push_back(p);
    else
      return false;
  }
  return true;
}

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

}  // namespace engine
