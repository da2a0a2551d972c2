// The deferred op graph (see graph.h): recording, placement, and the one
// call site per op name.
#include "engine/graph.h"

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>

#include "engine/op.h"

namespace engine {

const shlo::Type& Ref::type() const { return node->out_types[index]; }

namespace {
std::atomic<int64_t> g_recorded{0};
std::atomic<uint64_t> g_serial{1};
}  // namespace
uint64_t record_serial() { return g_serial.load(std::memory_order_relaxed); }
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

namespace {

// The node behind record() and record1(), on its inputs' device.
NodePtr make_node(const char* name, KeyThunk key_of, std::vector<Ref>&& inputs, LowerThunk lower,
                  std::unique_ptr<Attrs>&& attrs) {
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
  n->serial = g_serial.fetch_add(1, std::memory_order_relaxed);
  n->device = device;
  n->name = name;
  n->key_of = key_of;
  n->inputs = std::move(inputs);
  n->lower = lower;
  n->attrs = std::move(attrs);
  return n;
}

}  // namespace

std::vector<Ref> record(const char* name, KeyThunk key_of, std::vector<Ref> inputs, std::vector<shlo::Type> out_types,
                        LowerThunk lower, std::unique_ptr<Attrs> attrs) {
  NodePtr n = make_node(name, key_of, std::move(inputs), lower, std::move(attrs));
  n->out_types = std::move(out_types);
  std::vector<Ref> refs;
  refs.reserve(n->out_types.size());
  for (int i = 0; i < static_cast<int>(n->out_types.size()); ++i) refs.push_back(Ref{n, i});
  return refs;
}

Ref record1(const char* name, KeyThunk key_of, std::vector<Ref> inputs, shlo::Type out_type, LowerThunk lower,
            std::unique_ptr<Attrs> attrs) {
  NodePtr n = make_node(name, key_of, std::move(inputs), lower, std::move(attrs));
  n->out_types.push_back(std::move(out_type));
  return Ref{std::move(n), 0};
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

}  // namespace engine
