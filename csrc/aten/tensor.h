// The bridge between torch tensors and engine values. A tpu storage's
// DataPtr owns a StorageState: the storage's current content as a flat 1-D
// engine value. Tensors are (storage, sizes, strides, offset, dtype) views
// of it; read() and write() lower those views as math.
#pragma once

#include <ATen/ATen.h>

#include <optional>

#include "engine/graph.h"
#include "engine/mode.h"
#include "engine/op.h"
#include "engine/platform.h"
#include "shlo/builder.h"

namespace tpu {

// A storage's content, read through one view: what a copy derived from a
// tensor (dense_copy's, the compiled graphs' weight copies in
// _dot_layout.py) was made from. The content is held weakly (a copy never
// keeps replaced content alive). Every write gives a storage new content
// (in place, copy_, a compiled program's, or another storage through
// .data), so a copy is current exactly while matches() holds.
struct ContentView {
  std::weak_ptr<engine::Node> node;
  int index = 0;
  at::ScalarType dtype = at::kFloat;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;
  // t's content and view now.
  explicit ContentView(const at::Tensor& t);
  // Whether t reads the same content through the same view.
  bool matches(const at::Tensor& t) const;
};

// One view of a storage's content read again and again (dense_copy): how
// often it was read, and once read twice a dense copy of it in its own
// cell, which the modes compute and keep as they keep a storage's value.
struct ViewCopy : ContentView {
  using ContentView::ContentView;
  int reads = 0;
  std::shared_ptr<engine::Slot> copy;
};

// What a tpu storage's DataPtr holds as its context (aten/device.cc's
// allocator). The DataPtr's pointer is address(): a tag, never dereferenced,
// holding the storage's id above bit 40 and a byte offset below, so the
// pointer of any byte of a storage names it (a DLPack capsule of a tpu
// tensor carries such a pointer back in).
struct StorageState {
  // The current content: a flat 1-D value, empty until first written
  // (reads as zeros).
  engine::Slot cell;
  // A content padded to a size class (see read_classed): the value it
  // describes (held weakly: any other write makes a new value, and the
  // layout stops applying by itself) and its layout, in elements of the
  // value's dtype: [outer, cap, inner] holding [outer, len, inner].
  struct Padding {
    std::weak_ptr<engine::Node> node;
    int index = 0;
    int64_t outer = 1, len = 0, cap = 0, inner = 1;
  };
  Padding padding;
  // The padding of the current content, or nullptr when it is dense.
  const Padding* padded() const;
  size_t nbytes = 0;
  engine::Ref& value() { return cell.value; }
  // The cell as the modes hold it (the fused mode keeps weak references to
  // find pending values); it shares the state's allocation, one per storage.
  std::shared_ptr<engine::Slot> slot() { return {self, &cell}; }
  // See dense_copy: the view copied (its copy held), and another view
  // being counted; both dropped on write() and with the storage.
  std::unique_ptr<ViewCopy> view_copy, candidate;
  // The state holds itself until its storage is freed (release()), so
  // the cell's weak references expire with the storage.
  std::shared_ptr<StorageState> self;
  // The storage's id among live storages (from 1; reused after release).
  uint64_t id = 0;
  void* address() const;
  static StorageState* make(size_t nbytes);
  // The live storage whose address range holds p, and p's byte offset in it.
  static std::pair<StorageState*, size_t> at_address(const void* p);
  static void release(void* state);
};

StorageState& state_of(const at::Tensor& t);

// torch dtype <-> engine dtype; throws a clear TypeError for dtypes the
// device cannot hold.
shlo::DType to_shlo(at::ScalarType t);
at::ScalarType to_torch(shlo::DType t);

// The running plugin's platform policy (engine/platform.h: the one place a
// behaviour depends on the platform), or the override's below; starts the
// runtime, errors raised as torch errors.
const engine::PlatformPolicy& platform();
// Whether programs may call the engine's native functions (the policy
// allows them and the plugin took them; engine::add_native_function).
bool native_functions();
// Whether the device holds float64 / complex128 (XLA:CPU and GPUs do, TPUs
// do not). The platform can be overridden to test the TPU rules anywhere.
bool f64_supported();
void set_platform_override(const std::string& name);  // "" restores the plugin's
// A clear TypeError for float64 / complex128 where the device lacks them.
void check_f64(at::ScalarType t);
// The floating dtype for host-side wide scalars: F64, or F32 where f64 is unsupported.
shlo::DType wide_float();
// A complex scalar operand of complex dtype d (C64 or C128).
engine::Ref complex_scalar(c10::complex<double> v, shlo::DType d);

// The tensor's value: shape t.sizes(), dtype t.scalar_type(). A 0-d CPU
// tensor (a Python scalar) becomes a 0-d operand; any other CPU tensor is
// a device mismatch error.
engine::Ref read(const at::Tensor& t);
// Same, converted to dtype.
engine::Ref read_as(const at::Tensor& t, shlo::DType dtype);
// For a view whose layout makes its readers slow (a weight's transpose in a
// matrix product): read(t)'s value from a dense copy, from the view's second
// read of one storage content on (the call counts the reads); nothing before
// that, so content read once (an activation) is never copied, nor content
// that changes between reads (a weight that trains). The copy is kept with
// the storage until its content changes; a storage keeps one such view,
// replaced by another view only when that one is read twice in a row.
// Nothing while tracing a compiled graph, whose inputs change per call.
std::optional<engine::Ref> dense_copy(const at::Tensor& t);
// Stores v (shape t.sizes(), any dtype: converted to t's) into t's view.
void write(const at::Tensor& t, engine::Ref v);

// ---- Size classes: tensors that grow along a dimension from call to call
// (a KV cache, an attention mask, generated ids, each made by a cat that
// appends) are stored padded along it to its size class, so the programs
// that read and grow them serve every length of one class, the length a
// run-time operand (a shared scalar, never part of a cache key). Users see
// no padding: sizes, strides, views and host copies are the logical ones,
// and any op that does not ask for the padded layout reads the logical
// value (an unpadding slice inside its own program, keyed by the length).

// The class of a length: the smallest power of two at least
// TORCH_PJRT_SIZE_CLASSES (the smallest class) and len, or a smaller power
// of two (still at least len) where rows of row_bytes would make the
// padding cost more than the content and over 1 MiB; 0 when classes are
// off (TORCH_PJRT_SIZE_CLASSES=0). The class depends on the length and
// the row size only, so every length of a class shares its programs.
int64_t size_class(int64_t len, int64_t row_bytes = 0);
// Sets the smallest class (0: off) for this process (tests).
void set_smallest_size_class(int64_t n);

// A tensor's padded content: the storage's flat value, [outer, cap, inner]
// holding the tensor as [outer, len, inner]; len: a 0-d s64 operand.
struct Classed {
  engine::Ref value, len;
  int64_t outer = 1, len_now = 0, cap = 0, inner = 1;
  int64_t physical() const { return outer * cap * inner; }
};
// t's content padded along dim, when t is all of a storage (contiguous,
// offset 0) whose content is padded along that dim; nullopt otherwise.
std::optional<Classed> read_classed(const at::Tensor& t, int64_t dim);
// The same along whichever dim the storage is padded (elementwise ops and
// whole-tensor reductions, which do not care).
std::optional<Classed> read_classed(const at::Tensor& t);
// Whether t can hold a padded content: all of a fresh storage, a dtype
// stored as itself (not complex32), classes on.
bool classable(const at::Tensor& t);
// Stores a padded content (flat, [outer, cap, inner], t's dtype) into t,
// which must be classable with outer * len * inner == t.numel().
void write_classed(const at::Tensor& t, engine::Ref value, int64_t outer, int64_t cap, int64_t inner);
// Marks r's op as one serving a size class (Node::size_class); returns r.
inline engine::Ref serving_class(engine::Ref r, int64_t cap) {
  r.node->size_class = cap;
  return r;
}
// Makes a storage's content dense again (for readers of raw storage values:
// compiled graphs, resizes).
void unpad_storage(StorageState& s);
// A new contiguous tpu tensor holding v.
at::Tensor wrap(engine::Ref v, const at::Device& device);
// A new uninitialized tpu tensor.
at::Tensor empty(at::IntArrayRef sizes, at::ScalarType dtype, const at::Device& device);
// A new tpu tensor (contiguous when strides is empty), made here rather than
// through the dispatcher, as the CPU's structured kernels make their outputs:
// a kernel's output is the whole host cost of a small op's allocation.
at::Tensor new_empty(at::IntArrayRef sizes, at::IntArrayRef strides, at::ScalarType dtype, const c10::Device& device);

// Ops are recorded through engine::op / engine::op1 (engine/op.h): a name,
// inputs, output types, a lowering that captures nothing and its typed
// attributes.
using engine::op;
using engine::op1;

// Records one node computing every tensor in `outs` (in order) and stores
// each output into its tensor; lower(builder, inputs, attrs...) as for op().
template <class F, class... A>
void write_all(const std::vector<at::Tensor>& outs, engine::OpName name, std::vector<engine::Ref> inputs, F lower,
               A... attrs);

// Converts a value to another dtype (no-op if equal).
engine::Ref cast(engine::Ref v, shlo::DType to);
// Broadcasts a value to a shape (numpy rules).
engine::Ref broadcast(engine::Ref v, const shlo::Shape& shape);

inline shlo::Shape shape_of(at::IntArrayRef s) { return shlo::Shape(s.begin(), s.end()); }
// The engine type of a tensor's value (its dtype and sizes).
shlo::Type type_of(const at::Tensor& t);
std::string shape_str(at::IntArrayRef s);

// The device every tpu tensor among `ts` is on (first one found).
at::Device common_device(std::initializer_list<const at::Tensor*> ts);

template <class F, class... A>
void write_all(const std::vector<at::Tensor>& outs, engine::OpName name, std::vector<engine::Ref> inputs, F lower,
               A... attrs) {
  std::vector<shlo::Type> types;
  types.reserve(outs.size());
  for (const at::Tensor& t : outs) types.push_back(type_of(t));
  std::vector<engine::Ref> r = op(name, std::move(inputs), std::move(types), lower, std::move(attrs)...);
  for (size_t i = 0; i < outs.size(); ++i) write(outs[i], r[i]);
}

}  // namespace tpu
