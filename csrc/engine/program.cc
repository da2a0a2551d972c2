// Compiled graphs' programs (see program.h): placeholders, the calling
// thread's trace, and planning, compiling and launching a captured graph
// through the same planner, key and launch as materialize().
#include "engine/program.h"

#include <unordered_map>

#include "engine/launch.h"
#include "engine/op.h"
#include "engine/plan.h"
#include "engine/runtime.h"

namespace engine {

Ref placeholder(shlo::Type type) {
  auto n = std::make_shared<Node>();
  n->name = "placeholder";
  n->out_types.push_back(std::move(type));
  n->buffers = {nullptr};
  return Ref{n, 0};
}

bool is_placeholder(const Ref& r) { return r && r.node->buffers.size() == 1 && !r.node->buffers[0]; }

namespace {
thread_local Trace* t_trace = nullptr;
}
Trace* tracing() { return t_trace; }
void set_tracing(Trace* t) { t_trace = t; }

std::shared_ptr<Program> compile_program(const std::vector<Ref>& targets, const std::vector<Ref>& donate) {
  auto prog = std::make_shared<Program>();
  Plan plan;
  Aliases aliases;
  {
    // The planner reads the graph while the launch queue may be
    // materializing (and trimming) nodes a captured constant depends on.
    auto lock = lock_graph();
    plan_graph(targets, plan);
    if (plan.order.empty()) throw pjrt::Error("internal: a compiled graph with nothing to compute");
    std::vector<char> donatable(plan.params.size(), 0);
    for (size_t i = 0; i < plan.params.size(); ++i)
      for (const Ref& d : donate) donatable[i] |= d.node == plan.params[i].node && d.index == plan.params[i].index;
    if (donation_enabled()) pair_outputs(plan, donatable, aliases);
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
      prog->key.str(), [&]() { return program_text(plan, aliases); }, [&]() { return describe(plan); });
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
  auto lock = lock_graph();
  return launch(*p.exe, raw, donated, what, [&] { return p.name; }, device);
}

pjrt::BufferPtr copy_buffer(const pjrt::BufferPtr& b, const shlo::Type& type) {
  Ref src = leaf(b, type);
  Ref r = op1("copy_buffer", {src}, type,
              [](shlo::Builder&, const std::vector<shlo::Value>& in) { return std::vector<shlo::Value>{in[0]}; });
  materialize({r});
  return r.node->buffers[0];
}

}  // namespace engine
