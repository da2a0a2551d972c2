#include "aten/tensor.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <mutex>

#include "aten/device.h"
#include "aten/errors.h"
#include "engine/env.h"
#include "engine/mode.h"
#include "engine/program.h"
#include "engine/runtime.h"
#include "ops/common/lowering.h"
#include "ops/elementwise/elementwise.h"
#include "ops/view/view.h"

namespace tpu {

using Vals = std::vector<shlo::Value>;

namespace {

// Storage ids: a slot per live storage, freed ids reused (the 24 bits above
// kIdShift hold 16 M live storages).
constexpr int kIdShift = 40;
struct LiveStorages {
  std::mutex mu;
  std::vector<StorageState*> by_id{nullptr};
  std::vector<uint64_t> free;
};
LiveStorages& live_storages() {
  static auto* l = new LiveStorages;  // outlives storages freed at exit
  return *l;
}

}  // namespace

StorageState* StorageState::make(size_t nbytes) {
  TORCH_CHECK(nbytes < (uint64_t{1} << kIdShift), "a tpu storage holds less than 1 TiB; asked for ", nbytes, " bytes");
  auto state = std::make_shared<StorageState>();
  state->nbytes = nbytes;
  StorageState* s = state.get();
  s->self = std::move(state);
  LiveStorages& l = live_storages();
  std::lock_guard<std::mutex> g(l.mu);
  if (!l.free.empty()) {
    s->id = l.free.back();
    l.free.pop_back();
    l.by_id[s->id] = s;
  } else {
    TORCH_CHECK(l.by_id.size() < (uint64_t{1} << (64 - kIdShift)), "too many live tpu storages");
    s->id = l.by_id.size();
    l.by_id.push_back(s);
  }
  return s;
}

void StorageState::release(void* state) {
  auto* s = static_cast<StorageState*>(state);
  {
    LiveStorages& l = live_storages();
    std::lock_guard<std::mutex> g(l.mu);
    l.by_id[s->id] = nullptr;
    l.free.push_back(s->id);
  }
  // Moved out first: the last reference destroys the state that holds it.
  std::shared_ptr<StorageState> last = std::move(s->self);
}

const StorageState::Padding* StorageState::padded() const {
  if (padding.cap == 0 || !cell.value) return nullptr;
  return padding.index == cell.value.index && padding.node.lock() == cell.value.node ? &padding : nullptr;
}

void* StorageState::address() const { return reinterpret_cast<void*>(static_cast<uintptr_t>(id << kIdShift)); }

std::pair<StorageState*, size_t> StorageState::at_address(const void* p) {
  auto bits = reinterpret_cast<uintptr_t>(p);
  uint64_t id = bits >> kIdShift;
  size_t offset = bits & ((uint64_t{1} << kIdShift) - 1);
  LiveStorages& l = live_storages();
  std::lock_guard<std::mutex> g(l.mu);
  if (id == 0 || id >= l.by_id.size() || !l.by_id[id] || offset >= std::max<size_t>(l.by_id[id]->nbytes, 1))
    return {nullptr, 0};
  return {l.by_id[id], offset};
}

StorageState& state_of(const at::Tensor& t) {
  const c10::DataPtr& p = t.storage().data_ptr();
  if (is_tpu_storage(p)) return *static_cast<StorageState*>(p.get_context());
  // A tpu tensor over a pointer it does not own: torch.from_dlpack or
  // asarray of a DLPack capsule of a tpu tensor, which holds that tensor
  // alive. Its pointer names the storage, which it shares (an alias, as
  // DLPack promises). Any other pointer has no device content: an error at
  // its use, never a read of foreign memory.
  auto [s, offset] = StorageState::at_address(p.get());
  TORCH_CHECK(s,
              "this tpu tensor has no tpu storage: it was built on a data pointer (from_blob, or a DLPack capsule "
              "of another library) that the tpu device cannot import; exchange data through tensor.cpu() instead");
  TORCH_CHECK(offset == 0,
              "this tpu tensor imports a DLPack capsule of a tpu view that starts inside its storage (byte ", offset,
              "); export the whole tensor (its base) and take the view after the import");
  return *s;
}

shlo::DType to_shlo(at::ScalarType t) {
  using D = shlo::DType;
  switch (t) {
    case at::kFloat:
      return D::F32;
    case at::kHalf:
      return D::F16;
    case at::kBFloat16:
      return D::BF16;
    case at::kDouble:
      return D::F64;
    case at::kChar:
      return D::S8;
    case at::kByte:
      return D::U8;
    case at::kShort:
      return D::S16;
    case at::kInt:
      return D::S32;
    case at::kLong:
      return D::S64;
    case at::kBool:
      return D::PRED;
    case at::kUInt16:
      return D::U16;
    case at::kUInt32:
      return D::U32;
    case at::kUInt64:
      return D::U64;
    case at::kComplexHalf:  // values compute as complex64; storage_value() says why
    case at::kComplexFloat:
      return D::C64;
    case at::kComplexDouble:
      return D::C128;
    default:
      TORCH_CHECK_TYPE(false, "dtype torch.", std::get<0>(c10::getDtypeNames(t)),
                       " is not supported on the tpu device");
  }
}

at::ScalarType to_torch(shlo::DType t) {
  using D = shlo::DType;
  switch (t) {
    case D::F32:
      return at::kFloat;
    case D::F16:
      return at::kHalf;
    case D::BF16:
      return at::kBFloat16;
    case D::F64:
      return at::kDouble;
    case D::S8:
      return at::kChar;
    case D::U8:
      return at::kByte;
    case D::S16:
      return at::kShort;
    case D::S32:
      return at::kInt;
    case D::S64:
      return at::kLong;
    case D::PRED:
      return at::kBool;
    case D::U16:
      return at::kUInt16;
    case D::U32:
      return at::kUInt32;
    case D::U64:
      return at::kUInt64;
    case D::C64:
      return at::kComplexFloat;
    case D::C128:
      return at::kComplexDouble;
  }
  return at::kFloat;
}

const engine::PlatformPolicy& platform() {
  return *guarded("starting the PJRT runtime", [] { return &engine::platform_policy(); });
}

bool native_functions() {
  return platform().host_functions &&
         guarded("starting the PJRT runtime", [] { return &engine::Runtime::get(); })->native_functions();
}

bool f64_supported() { return platform().f64; }

void set_platform_override(const std::string& name) {
  engine::set_platform_override(name.empty() ? std::nullopt : std::optional(pjrt::platform_named(name)));
}

void check_f64(at::ScalarType t) {
  if (t != at::kDouble && t != at::kComplexDouble) return;
  TORCH_CHECK_TYPE(f64_supported(), t == at::kDouble ? "float64 is not supported on TPU; use float32"
                                                     : "complex128 is not supported on TPU; use complex64");
}

shlo::DType wide_float() { return f64_supported() ? shlo::DType::F64 : shlo::DType::F32; }

engine::Ref complex_scalar(c10::complex<double> v, shlo::DType d) {
  TORCH_CHECK(shlo::is_complex(d), "internal: complex_scalar of a real dtype");
  shlo::DType part = d == shlo::DType::C64 ? shlo::DType::F32 : shlo::DType::F64;
  // Two real operands joined on the device: the values stay out of the key.
  return op1(
      "complex_scalar", {engine::scalar(part, v.real()), engine::scalar(part, v.imag())}, shlo::Type{d, {}},
      [](shlo::Builder& b, const Vals& in, shlo::DType d) {
        return Vals{b.op1(ops::hlo::kComplex, {in[0], in[1]}, shlo::Type{d, {}})};
      },
      d);
}

shlo::Type type_of(const at::Tensor& t) { return shlo::Type{to_shlo(t.scalar_type()), shape_of(t.sizes())}; }

std::string shape_str(at::IntArrayRef s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

engine::Ref cast(engine::Ref v, shlo::DType to) {
  if (v.type().dtype == to) return v;
  shlo::Type t{to, v.type().shape};
  return op1(
      "convert", {v}, t,
      [](shlo::Builder& b, const Vals& in, shlo::DType to) { return Vals{ops::convert(b, in[0], to)}; }, to);
}

engine::Ref broadcast(engine::Ref v, const shlo::Shape& shape) {
  if (v.type().shape == shape) return v;
  return op1(
      "broadcast", {v}, shlo::Type{v.type().dtype, shape},
      [](shlo::Builder& b, const Vals& in, const shlo::Shape& shape) { return Vals{b.broadcast_to(in[0], shape)}; },
      shape);
}

namespace {

int64_t elems_of(const StorageState& s, shlo::DType t) { return static_cast<int64_t>(s.nbytes / shlo::dtype_size(t)); }

// A padded content's logical elements, in order: the unpadding every
// reader that does not ask for the padded layout gets (keyed by the length).
engine::Ref unpadded(const engine::Ref& v, const StorageState::Padding& p) {
  return op1(
      "unpad", {v}, shlo::Type{v.type().dtype, {p.outer * p.len * p.inner}},
      [](shlo::Builder& b, const Vals& in, int64_t outer, int64_t cap, int64_t inner, int64_t len) {
        shlo::Value x = b.reshape(in[0], {outer, cap, inner});
        x = b.slice(x, {0, 0, 0}, {outer, len, inner}, {1, 1, 1});
        return Vals{b.reshape(x, {outer * len * inner})};
      },
      p.outer, p.cap, p.inner, p.len);
}

// The storage's content, dense.
engine::Ref dense_value(StorageState& s) {
  const StorageState::Padding* p = s.padded();
  return p ? unpadded(s.value(), *p) : s.value();
}

// The storage content as a flat value of dtype t.
engine::Ref storage_value(StorageState& s, shlo::DType t) {
  int64_t n = elems_of(s, t);
  if (!s.value()) {
    // Never written (torch.empty): reads as zeros, like fresh device memory.
    return op1(
        "zeros", {}, shlo::Type{t, {n}},
        [](shlo::Builder& b, const Vals&, shlo::DType t, int64_t n) { return Vals{b.constant(t, 0, {n})}; }, t, n);
  }
  engine::Ref dense = dense_value(s);
  if (dense.type().dtype == t && dense.type().shape[0] == n) return dense;
  return op1(
      "view_dtype", {dense}, shlo::Type{t, {n}},
      [](shlo::Builder& b, const Vals& in, shlo::DType t, int64_t n) {
        shlo::Value r = ops::reinterpret_flat(b, in[0], t);
        if (r.shape()[0] != n) r = b.slice(r, {0}, {n}, {1});
        return Vals{r};
      },
      t, n);
}

// complex32 has no XLA element type. Its storage holds what the CPU's
// holds, (real, imag) pairs of f16, so views of it as another dtype and
// copies to the host see the same bytes; its tensors are read as complex64
// and every write rounds back to the pairs, so each op rounds its result
// to complex32 as the CPU's kernels do.
bool half_pairs(at::ScalarType t) { return t == at::kComplexHalf; }

int64_t elems_of(const StorageState& s, at::ScalarType t) {
  return static_cast<int64_t>(s.nbytes / c10::elementSize(t));
}

engine::Ref storage_value(StorageState& s, at::ScalarType t) {
  if (!half_pairs(t)) return storage_value(s, to_shlo(t));
  int64_t n = elems_of(s, t);
  return op1(
      "complex32_read", {storage_value(s, shlo::DType::F16)}, shlo::Type{shlo::DType::C64, {n}},
      [](shlo::Builder& b, const Vals& in, int64_t n) {
        shlo::Value pairs = b.reshape(in[0], {n, 2});
        auto part = [&](int64_t k) {
          return ops::convert(b, b.reshape(b.slice(pairs, {0, k}, {n, k + 1}, {1, 1}), {n}), shlo::DType::F32);
        };
        return Vals{ops::make_complex(b, part(0), part(1))};
      },
      n);
}

// The flat value to keep as the storage of a tensor of dtype t.
engine::Ref stored_form(engine::Ref flat, at::ScalarType t) {
  if (!half_pairs(t)) return flat;
  int64_t n = flat.type().shape[0];
  return op1(
      "complex32_write", {flat}, shlo::Type{shlo::DType::F16, {2 * n}},
      [](shlo::Builder& b, const Vals& in, int64_t n) {
        auto half = [&](shlo::Value p) { return b.reshape(ops::convert(b, p, shlo::DType::F16), {n, 1}); };
        shlo::Value pairs = b.concatenate({half(ops::real_part(b, in[0])), half(ops::imag_part(b, in[0]))}, 1);
        return Vals{b.reshape(pairs, {2 * n})};
      },
      n);
}

bool covers_storage(const at::Tensor& t, int64_t n) {
  return t.storage_offset() == 0 && t.numel() == n && t.is_contiguous();
}

ops::StridedView view_of(const at::Tensor& t, int64_t n) {
  ops::StridedView v;
  v.sizes = shape_of(t.sizes());
  v.strides.assign(t.strides().begin(), t.strides().end());
  // A size-1 dim's stride is never used: one normal form, so views that
  // differ only there (x[:, -1:] of tensors of any length) share programs.
  for (size_t i = 0; i < v.sizes.size(); ++i)
    if (v.sizes[i] == 1) v.strides[i] = 0;
  v.storage_numel = n;
  v.fits = t.storage_offset() + v.span() <= n;
  return v;
}

}  // namespace

engine::Ref read(const at::Tensor& t) {
  TORCH_CHECK(t.defined(), "expected a defined tensor");
  if (t.device().is_cpu()) {
    TORCH_CHECK(t.dim() == 0,
                "Expected all tensors to be on the same device, but found at least two devices, tpu and cpu!");
    if (engine::Trace* tr = engine::tracing()) {  // a compiled graph's input: its value varies per call
      auto it = tr->host_scalars.find(t.unsafeGetTensorImpl());
      if (it != tr->host_scalars.end()) return it->second;
    }
    shlo::DType d = to_shlo(t.scalar_type());
    // A float64 / complex128 scalar (a Python number) is narrowed where the
    // device has no f64: it only ever meets narrower tpu tensors there.
    if (t.is_complex())
      return complex_scalar(t.item<c10::complex<double>>(),
                            d == shlo::DType::C128 && !f64_supported() ? shlo::DType::C64 : d);
    if (t.is_floating_point()) return engine::scalar(d == shlo::DType::F64 ? wide_float() : d, t.item<double>());
    if (t.scalar_type() == at::kBool) return engine::scalar(d, t.item<bool>() ? 1 : 0);
    if (d == shlo::DType::S64) return engine::scalar_i64(t.item<int64_t>());
    return engine::scalar(d, static_cast<double>(t.item<int64_t>()));
  }
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1,
              "Expected all tensors to be on the same device, but found tpu and ", t.device());
  check_f64(t.scalar_type());
  shlo::DType d = to_shlo(t.scalar_type());
  StorageState& s = state_of(t);
  int64_t n = elems_of(s, t.scalar_type());
  const bool covers = covers_storage(t, n);
  // A view into a content padded only at its end (one row: a [1, len]
  // mask, generated ids) reads the padded value where it is, so x[:, -1:]
  // is one program for every length of a class.
  const StorageState::Padding* p = s.padded();
  const bool in_padded = !covers && p && p->outer == 1 && s.value().type().dtype == d && !half_pairs(t.scalar_type());
  engine::Ref base = in_padded ? s.value() : storage_value(s, t.scalar_type());
  // A never-written storage reads as zeros computed on its tensor's device.
  if (base.node->device == engine::kUnplaced) engine::place(base, t.device().index());
  if (covers) {
    if (t.dim() == 1) return base;
    shlo::Shape shape = shape_of(t.sizes());
    return op1(
        "view_reshape", {base}, shlo::Type{d, shape},
        [](shlo::Builder& b, const Vals& in, const shlo::Shape& shape) { return Vals{b.reshape(in[0], shape)}; },
        shape);
  }
  TORCH_CHECK(t.storage_offset() + 1 <= n || t.numel() == 0, "tpu tensor view lies outside its storage");
  ops::StridedView v = view_of(t, in_padded ? base.type().shape[0] : n);
  engine::Ref r = op1(
      "view_read", {base, engine::scalar_i64(t.storage_offset())}, shlo::Type{d, v.sizes},
      [](shlo::Builder& b, const Vals& in, const ops::StridedView& v) {
        return Vals{ops::read_view(b, in[0], in[1], v)};
      },
      v);
  return in_padded ? serving_class(r, p->cap) : r;
}

engine::Ref read_as(const at::Tensor& t, shlo::DType dtype) { return cast(read(t), dtype); }

ContentView::ContentView(const at::Tensor& t)
    : dtype(t.scalar_type()),
      offset(t.storage_offset()),
      sizes(t.sizes().begin(), t.sizes().end()),
      strides(t.strides().begin(), t.strides().end()) {
  const engine::Ref& now = state_of(t).value();
  node = now.node;
  index = now.index;
}

bool ContentView::matches(const at::Tensor& t) const {
  const engine::Ref& now = state_of(t).value();
  return now && node.lock() == now.node && index == now.index && dtype == t.scalar_type() &&
         offset == t.storage_offset() && t.sizes().equals(sizes) && t.strides().equals(strides);
}

std::optional<engine::Ref> dense_copy(const at::Tensor& t) {
  if (t.device().type() != c10::DeviceType::PrivateUse1 || engine::tracing()) return std::nullopt;
  // Threads may read one weight at once (a model serving two requests):
  // reading never mutated a storage before, this does.
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  StorageState& s = state_of(t);
  if (!s.value()) return std::nullopt;
  if (s.view_copy && s.view_copy->matches(t)) {
    // A read of the copied view breaks the candidate's run: a weight read
    // one way once per call and another way many times in it (a prefill's
    // many rows, then each decoding step's few) keeps the copy the many
    // reads use, instead of trading copies every second call (each trade a
    // copy to make and new programs to compile).
    s.candidate.reset();
    return s.view_copy->copy->value;
  }
  // Another view is counted as the candidate; it replaces the copy held
  // only once read twice in a row, so views each read once (one expert's
  // matrix after another's) never evict a copy still in use.
  if (!s.candidate || !s.candidate->matches(t)) s.candidate = std::make_unique<ViewCopy>(t);
  if (++s.candidate->reads < 2) return std::nullopt;
  s.candidate->copy = std::make_shared<engine::Slot>();
  s.candidate->copy->value = read(t);
  guarded("running an op", [&] { engine::commit(s.candidate->copy); });
  s.view_copy = std::move(s.candidate);
  return s.view_copy->copy->value;
}

namespace {

// Makes next (flat, placed on t's device) the content of t's storage.
void store(const at::Tensor& t, engine::Ref next) {
  StorageState& s = state_of(t);
  engine::place(next, t.device().index());
  s.value() = next;
  s.view_copy.reset();
  s.candidate.reset();
  guarded("running an op", [&] { engine::commit(s.slot()); });
}

}  // namespace

void write(const at::Tensor& t, engine::Ref v) {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "write() target must be a tpu tensor");
  shlo::DType d = to_shlo(t.scalar_type());
  v = cast(v, d);
  TORCH_CHECK(t.sizes().equals(v.type().shape), "internal: writing a value of shape ", v.type().str(),
              " into a tensor of shape ", shape_str(t.sizes()));
  StorageState& s = state_of(t);
  int64_t n = elems_of(s, t.scalar_type());
  engine::Ref next;
  if (covers_storage(t, n)) {
    next = v.type().shape.size() == 1
               ? v
               : op1(
                     "flatten", {v}, shlo::Type{d, {n}},
                     [](shlo::Builder& b, const Vals& in, int64_t n) { return Vals{b.reshape(in[0], {n})}; }, n);
  } else {
    if (t.numel() == 0) return;
    ops::StridedView view = view_of(t, n);
    next = op1(
        "view_write", {storage_value(s, t.scalar_type()), engine::scalar_i64(t.storage_offset()), v},
        shlo::Type{d, {n}},
        [](shlo::Builder& b, const Vals& in, const ops::StridedView& view) {
          return Vals{ops::write_view(b, in[0], in[1], in[2], view)};
        },
        view);
  }
  store(t, stored_form(next, t.scalar_type()));
}

namespace {

std::atomic<int64_t> g_smallest_class{-1};

int64_t product(at::IntArrayRef s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

}  // namespace

int64_t size_class(int64_t len, int64_t row_bytes) {
  int64_t smallest = g_smallest_class.load(std::memory_order_relaxed);
  if (smallest < 0) {
    smallest = engine::env::count("TORCH_PJRT_SIZE_CLASSES");
    g_smallest_class.store(smallest, std::memory_order_relaxed);
  }
  if (smallest == 0 || len <= 0) return 0;
  int64_t c = 1;
  while (c < smallest || c < len) c <<= 1;
  // The padding may cost at most as much as the content, or 1 MiB: a large
  // tensor (a big batch's KV cache) gets a smaller class, down to the power
  // of two that holds it (at most twice its size).
  constexpr int64_t kFreePadding = 1 << 20;
  while (c / 2 >= len && (c - len) * row_bytes > std::max(len * row_bytes, kFreePadding)) c /= 2;
  return c;
}

void set_smallest_size_class(int64_t n) { g_smallest_class.store(std::max<int64_t>(n, 0)); }

std::optional<Classed> read_classed(const at::Tensor& t) {
  if (t.device().type() != c10::DeviceType::PrivateUse1 || engine::tracing()) return std::nullopt;
  StorageState& s = state_of(t);
  const StorageState::Padding* p = s.padded();
  if (!p || half_pairs(t.scalar_type()) || s.value().type().dtype != to_shlo(t.scalar_type()) ||
      !covers_storage(t, elems_of(s, t.scalar_type())))
    return std::nullopt;
  return Classed{s.value(), engine::scalar_i64(p->len), p->outer, p->len, p->cap, p->inner};
}

std::optional<Classed> read_classed(const at::Tensor& t, int64_t dim) {
  std::optional<Classed> c = read_classed(t);
  if (!c || dim < 0 || dim >= t.dim()) return std::nullopt;
  const size_t d = static_cast<size_t>(dim);
  if (c->outer != product(t.sizes(), 0, d) || c->len_now != t.size(dim) ||
      c->inner != product(t.sizes(), d + 1, t.sizes().size()))
    return std::nullopt;
  return c;
}

bool classable(const at::Tensor& t) {
  return t.device().type() == c10::DeviceType::PrivateUse1 && !engine::tracing() && size_class(1) > 0 &&
         !half_pairs(t.scalar_type()) && t.numel() > 0 && covers_storage(t, elems_of(state_of(t), t.scalar_type()));
}

void write_classed(const at::Tensor& t, engine::Ref value, int64_t outer, int64_t cap, int64_t inner) {
  TORCH_CHECK(classable(t) && t.numel() % (outer * inner) == 0 && value.type().shape.size() == 1 &&
                  value.type().shape[0] == outer * cap * inner && value.type().dtype == to_shlo(t.scalar_type()),
              "internal: a padded value that does not fit its tensor");
  const int64_t len = t.numel() / (outer * inner);
  TORCH_CHECK(len <= cap, "internal: a padded value shorter than its tensor");
  store(t, value);
  StorageState& s = state_of(t);
  s.padding = StorageState::Padding{s.value().node, s.value().index, outer, len, cap, inner};
}

void unpad_storage(StorageState& s) {
  if (!s.padded()) return;
  s.value() = dense_value(s);
  s.padding = {};
  guarded("running an op", [&] { engine::commit(s.slot()); });
}

at::Tensor empty(at::IntArrayRef sizes, at::ScalarType dtype, const at::Device& device) {
  return new_empty(sizes, {}, dtype, device);
}

at::Tensor wrap(engine::Ref v, const at::Device& device) {
  at::Tensor t = empty(v.type().shape, to_torch(v.type().dtype), device);
  write(t, v);
  return t;
}

at::Device common_device(std::initializer_list<const at::Tensor*> ts) {
  for (const at::Tensor* t : ts)
    if (t && t->defined() && t->device().type() == c10::DeviceType::PrivateUse1) return t->device();
  return at::Device(c10::DeviceType::PrivateUse1, 0);
}

}  // namespace tpu
