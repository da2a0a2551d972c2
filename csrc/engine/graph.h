// The deferred op graph. Every device value is a Ref to one output of a Node.
// A node is either materialized (it holds PJRT buffers) or deferred (it holds
// a lowering and its input refs). materialize() compiles the deferred
// subgraph behind some refs into one program (through the cache) and runs it.
// Modes differ only in when materialize() is called, never in how ops lower.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "pjrt/runtime.h"
#include "shlo/builder.h"

namespace engine {

struct Node;
using NodePtr = std::shared_ptr<Node>;

// One output of a node.
struct Ref {
  NodePtr node;
  int index = 0;
  explicit operator bool() const { return static_cast<bool>(node); }
  const shlo::Type& type() const;
};

// A node's attributes (engine/op.h keeps them typed).
struct Attrs {
  virtual ~Attrs() = default;
};
using LowerThunk = std::vector<shlo::Value> (*)(shlo::Builder&, const std::vector<shlo::Value>&, const Attrs*);

// Where a node's values live (Node::device): an index among the client's
// devices, or one of these.
// kUnplaced: a deferred value computed from no placed input (a factory's
// first op), placed by the op that reads it or by place().
// kAnyDevice: a shared constant (scalar()), read by programs on every
// device (copied to each device once).
constexpr int kUnplaced = -1, kAnyDevice = -2;

struct Node {
  // The op's name, for people: error messages and the device timeline.
  const char* name = "";
  // The name and every attribute the lowering reads. Two nodes with equal
  // keys and equally typed inputs lower identically: this is the cache key.
  std::string key;
  LowerThunk lower = nullptr;
  std::unique_ptr<Attrs> attrs;
  std::vector<Ref> inputs;
  std::vector<shlo::Type> out_types;
  // Set once materialized; inputs, lowering and attributes are then dropped.
  std::vector<pjrt::BufferPtr> buffers;
  int device = kUnplaced;
  bool materialized() const { return !buffers.empty(); }
};

// Records a deferred op. engine/op.h builds the key and the lowering from
// typed attributes; this is the step underneath. name: a string literal.
// The node is on its inputs' device (unplaced inputs join it there);
// inputs on two devices are an error, as in PyTorch.
std::vector<Ref> record(const char* name, std::string key, std::vector<Ref> inputs, std::vector<shlo::Type> out_types,
                        LowerThunk lower, std::unique_ptr<Attrs> attrs);

// A value that already lives on the device.
Ref leaf(pjrt::BufferPtr buffer, shlo::Type type);
// A 0-d operand holding a scalar; equal scalars share one device buffer, and
// the value is not part of any cache key (x*0.37 and x*0.38 share a program).
Ref scalar(shlo::DType dtype, double value);
Ref scalar_i64(int64_t value);
// Uploads dense row-major host data to a device.
Ref from_host(const void* data, const shlo::Type& type, int device = 0);
// Puts an unplaced value, and the unplaced graph behind it, on a device;
// a value already on another device is an error (a tensor on device d holds
// only values of device d).
void place(const Ref& ref, int device);
// The value of ref copied to another device (computed first if deferred).
Ref to_device(const Ref& ref, int device);

// Computes every deferred ref given (one program for all of them).
void materialize(const std::vector<Ref>& refs);
// Materializes and returns the buffer behind ref.
pjrt::BufferPtr buffer(const Ref& ref);
// Sorts the pending values of a host read of ref (fused mode) into those to
// compute with ref in one program (`with`: values inside ref's deferred
// graph, and the checks among `checks` that read any data ref's graph reads)
// and those whose deferred graph shares no node with that program
// (`apart`). False when a value shares only part of it: shared work must not
// run twice, so one program then computes everything.
bool split_for_read(const Ref& ref, const std::vector<Ref>& pending, const std::unordered_set<const Node*>& checks,
                    std::vector<Ref>& with, std::vector<Ref>& apart);
// Nodes recorded since the last reset (the fused mode's size bound).
int64_t recorded_nodes();
void reset_recorded_nodes();

// Parameter buffers programs have consumed in place (see materialize()).
int64_t donated_buffers();

// Waits for every launched program; raises the first error among them.
void synchronize();
// Waits for everything launched or queued so far to finish, raising
// nothing: failures stay pending for the next synchronize() or read (the
// profiler's end of trace, which must not swallow a user's error).
void quiesce();
// Runs a replicated program (a collective) over devices (device indices in
// replica order) in one launch: inputs[i] are replica i's values (computed
// first), and the result's [i] are its outputs, values on devices[i].
// Nothing here holds the launch queue's lock: replicas wait for each other
// inside the plugin.
struct Replicas {
  std::vector<std::vector<Ref>> values;            // per replica, its outputs
  std::vector<std::shared_ptr<pjrt::Event>> done;  // per replica, fired when it has finished
};
Replicas run_replicas(const std::string& key, const std::function<std::string()>& build,
                      const std::function<std::string()>& what, const std::vector<int>& devices,
                      const std::vector<std::vector<Ref>>& inputs);
// Completion events of the programs launched so far and maybe not done.
std::vector<std::shared_ptr<pjrt::Event>> in_flight();
// Materializes and copies to dense row-major host memory; waits.
void to_host(const Ref& ref, void* dst, size_t nbytes);

}  // namespace engine
