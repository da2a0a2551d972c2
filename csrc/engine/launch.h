// Launching: deferred values become running programs. materialize() plans
// the deferred graph behind some refs (engine/plan.h), finds its program in
// the cache (or a cached donation variant, or compiles it), launches it and
// leaves the outputs on their nodes. Every launch, of eager programs,
// compiled graphs (engine/program.h) and replicated collectives, is tracked
// in flight until it completes, for synchronize() and device events. This
// floor launches and never waits on the host: when values are materialized
// is the modes' choice (engine/mode.h), and host reads are theirs too
// (engine/reads.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/graph.h"
#include "pjrt/runtime.h"

namespace engine {

// Computes every deferred ref given (one program per device).
void materialize(const std::vector<Ref>& refs);

// The graph lock: held while a program is planned and launched, since
// materializing trims the nodes behind its outputs. Others that read the
// graph (a fused read's split, a compiled graph's planning) take it too.
std::unique_lock<std::mutex> lock_graph();

// Launches exe on args (one per parameter), marking the donated buffers
// consumed; tracks it in flight. what: the program for error messages;
// name: its name on the device timeline, asked only when it records.
// device: where it runs (a portable program when the client has several).
std::vector<pjrt::BufferPtr> launch(const pjrt::Executable& exe, const std::vector<PJRT_Buffer*>& args,
                                    const std::vector<pjrt::Buffer*>& donated, const std::function<std::string()>& what,
                                    const std::function<std::string()>& name, int device);
// A parameter's buffer on the program's device: its own, or for a shared
// constant (kAnyDevice) a copy made once per device and kept beside it.
pjrt::BufferPtr on_device(const Ref& p, const pjrt::BufferPtr& b, int device);

// Runs a replicated program (a collective) over devices (device indices in
// replica order) in one launch: inputs[i] are replica i's values, already
// computed (the caller reads them first), and the result's [i] are its
// outputs, values on devices[i]. Nothing here holds the graph lock: replicas
// wait for each other inside the plugin.
struct Replicas {
  std::vector<std::vector<Ref>> values;            // per replica, its outputs
  std::vector<std::shared_ptr<pjrt::Event>> done;  // per replica, fired when it has finished
};
Replicas run_replicas(const Key& key, const std::function<std::string()>& build,
                      const std::function<std::string()>& what, const std::vector<int>& devices,
                      const std::vector<std::vector<Ref>>& inputs);

// Parameter buffers programs have consumed in place.
int64_t donated_buffers();

// Completion events of the programs launched so far and maybe not done.
std::vector<std::shared_ptr<pjrt::Event>> in_flight();
// The same, handed over: they are no longer tracked here (synchronize()).
std::vector<std::shared_ptr<pjrt::Event>> take_in_flight();
// Waits for every program in flight, raising nothing: a failure stays with
// its event for the next synchronize().
void await_in_flight_quietly();

}  // namespace engine
