// The deferred op graph, the engine's lowest floor. Every device value is a
// Ref to one output of a Node. A node is either materialized (it holds PJRT
// buffers) or deferred (it holds a lowering and its input refs). This floor
// records nodes and places them on devices; values entering the graph from
// outside (leaves, uploads, shared scalars) are made here too (values.cc).
// Above it: planning (engine/plan.h) and launching (engine/launch.h:
// materialize() compiles the deferred subgraph behind some refs into one
// program and runs it), then the modes (engine/mode.h), which differ only in
// when they call materialize(), never in how ops lower, and own host reads
// (engine/reads.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/key.h"
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
// Appends a node's key (its name and attributes, engine/op.h) to a program's.
using KeyThunk = void (*)(Key&, const char* name, const Attrs*);

// A node's output types, contiguous. Nearly every op has one output, held
// inline: recording a node is the fused mode's per-op host cost, and a
// vector of one would be an allocation of its own.
class OutTypes {
 public:
  OutTypes() = default;
  OutTypes(std::vector<shlo::Type> types) : n_(types.size()) {  // NOLINT: given as a vector
    if (n_ == 1)
      one_ = std::move(types[0]);
    else
      many_ = std::move(types);
  }
  void push_back(shlo::Type t) {
    if (n_ == 0) {
      one_ = std::move(t);
    } else {
      if (n_ == 1) many_.push_back(std::move(one_));
      many_.push_back(std::move(t));
    }
    ++n_;
  }
  size_t size() const { return n_; }
  const shlo::Type* begin() const { return many_.empty() ? &one_ : many_.data(); }
  const shlo::Type* end() const { return begin() + n_; }
  const shlo::Type& operator[](size_t i) const { return begin()[i]; }

 private:
  shlo::Type one_;
  std::vector<shlo::Type> many_;
  size_t n_ = 0;
};

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
  // The key: the name and every attribute the lowering reads. Two nodes with
  // equal keys and equally typed inputs lower identically.
  // An op's key is encoded from its attributes only when a program is
  // planned (append_key): most values recorded in fused mode die before
  // any program reads them, and planning runs off the recording thread.
  // A node without a thunk (a leaf, a placeholder) is keyed by its name.
  KeyThunk key_of = nullptr;
  LowerThunk lower = nullptr;
  std::unique_ptr<Attrs> attrs;
  std::vector<Ref> inputs;
  OutTypes out_types;
  // Set once materialized; inputs, lowering and attributes are then dropped.
  std::vector<pjrt::BufferPtr> buffers;
  int device = kUnplaced;
  // When the op was recorded (record_serial()); 0 for leaves.
  uint64_t serial = 0;
  // The size class of padded content the op reads or writes (one program
  // serves every length of it), 0 for none: what cache_stats() counts
  // compiles by.
  int64_t size_class = 0;
  bool materialized() const { return !buffers.empty(); }
  // Appends this node's key to `into`.
  void append_key(Key& into) const {
    if (key_of)
      key_of(into, name, attrs.get());
    else
      into.add_op(name);
  }
};

// Records a deferred op. engine/op.h builds the key and the lowering from
// typed attributes; this is the step underneath. name: a string literal.
// The node is on its inputs' device (unplaced inputs join it there);
// inputs on two devices are an error, as in PyTorch.
std::vector<Ref> record(const char* name, KeyThunk key_of, std::vector<Ref> inputs, std::vector<shlo::Type> out_types,
                        LowerThunk lower, std::unique_ptr<Attrs> attrs);
// The same for an op with one output, without the vector of refs.
Ref record1(const char* name, KeyThunk key_of, std::vector<Ref> inputs, shlo::Type out_type, LowerThunk lower,
            std::unique_ptr<Attrs> attrs);

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

// The serial the next recorded op gets: ops recorded from here on have
// serials at least this.
uint64_t record_serial();

// Nodes recorded since the last reset (the fused mode's size bound).
int64_t recorded_nodes();
void reset_recorded_nodes();

}  // namespace engine
