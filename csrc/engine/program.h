// Captured graphs as programs of the cache (torch.compile). A compiled
// graph is recorded through the ordinary kernels onto placeholder values
// (types, no buffers), planned and keyed exactly as materialize() plans the
// same nodes, and compiled once; each call then launches the executable on
// the caller's buffers with no recording, planning or key building.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/graph.h"
#include "engine/key.h"
#include "engine/plan.h"

namespace engine {

// A deferred check's verification (engine/checks.h): receives the checked
// value's elements (s64) and throws to report a failure.
using Verify = std::function<void(const std::vector<int64_t>&)>;

// A value standing for a program input while a graph is traced. It looks
// materialized to the planner (so it becomes a parameter) but holds no
// buffer: anything that needs its data fails with a clear error.
Ref placeholder(shlo::Type type);
bool is_placeholder(const Ref& r);

// The calling thread's trace, if it is tracing: stores do not launch or
// queue anything, and work that would otherwise run outside the graph is
// collected here so that every call of the program repeats it.
struct Trace {
  // Deferred checks (index bounds): their values become program outputs
  // and are verified after each call like eager ones.
  std::vector<std::pair<Ref, Verify>> checks;
  // Parameters whose buffer is made fresh for each call, in trace order
  // (the random state: each call advances the generator like eager ops).
  std::vector<std::pair<Ref, std::function<pjrt::BufferPtr()>>> fresh;
  // Host scalars (0-d CPU tensors) that are graph inputs, by identity: read
  // as parameters holding each call's value, not as constants.
  std::unordered_map<const void*, Ref> host_scalars;
};
Trace* tracing();
void set_tracing(Trace* t);

struct Program {
  Key key;                  // what materialize() would use for the same graph
  std::string name;         // on the device timeline
  std::vector<Ref> params;  // placeholders, fresh parameters and constants
  Aliases aliases;          // (param, output) donated
  std::vector<shlo::Type> out_types;
  // Per requested target: its index among the outputs, or -1 when the
  // program does not compute it (a materialized value).
  std::vector<int> target_out;
  pjrt::ExecutablePtr exe;
};

// Plans and compiles (through the cache) the program computing `targets`.
// Placeholders listed in `donate` are consumed by the program (their buffer
// reused for an output of the same type).
std::shared_ptr<Program> compile_program(const std::vector<Ref>& targets, const std::vector<Ref>& donate);
// Launches it; args has one buffer per param. Aliased params must be
// buffers nothing else holds.
std::vector<pjrt::BufferPtr> run_program(const Program& p, const std::vector<pjrt::BufferPtr>& args);
// A fresh copy of a buffer (for an aliased param that cannot be donated).
pjrt::BufferPtr copy_buffer(const pjrt::BufferPtr& b, const shlo::Type& type);

}  // namespace engine
