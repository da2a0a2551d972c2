// Index bounds: an out-of-range index raises the same error type as on the
// CPU, never clamps. Indices on the host are checked on the host. Indices on
// the device get their [min, max] computed by a small program and checked at
// the next host read or sync without waiting now (engine/checks.h; at once in
// debug mode); a passed check is remembered per storage value, and index
// outputs of our own ops (sort, topk, nonzero, unique's inverse...) are known
// in range and never checked. Small integer tensors copied from the host keep
// their host min and max: out of range, they raise at the call.
#include <ATen/native/Resize.h>

#include <mutex>
#include <optional>
#include <unordered_map>

#include "aten/errors.h"
#include "engine/checks.h"
#include "ops/common/aten_common.h"
#include "ops/common/lowering.h"

namespace tpu {

namespace {

using Vals = std::vector<shlo::Value>;

struct Bounds {
  int64_t min = 0, max = 0;
  // The min and max of values copied from the host: a check against them
  // fails at once, where one computed on the device fails at a later read.
  bool from_host = false;
};

// Known [min, max] of device values, keyed by (node, output): storage values
// of index tensors already checked, and index outputs of our own ops (sort,
// topk, nonzero...), which are in range by construction.
struct Seen {
  std::weak_ptr<engine::Node> node;
  Bounds bounds;
};
using SeenKey = std::pair<const engine::Node*, int>;
struct SeenHash {
  size_t operator()(const SeenKey& k) const { return std::hash<const void*>()(k.first) * 31 + k.second; }
};
std::mutex seen_mu;
std::unordered_map<SeenKey, Seen, SeenHash> seen;

std::optional<Bounds> known_bounds(const engine::Ref& v) {
  std::lock_guard<std::mutex> g(seen_mu);
  auto it = seen.find({v.node.get(), v.index});
  if (it == seen.end() || it->second.node.lock() != v.node) return std::nullopt;
  return it->second.bounds;
}

void remember_bounds(const engine::Ref& v, Bounds bd) {
  std::lock_guard<std::mutex> g(seen_mu);
  if (seen.size() > 1024) {
    for (auto it = seen.begin(); it != seen.end();) it = it->second.node.expired() ? seen.erase(it) : std::next(it);
  }
  seen[{v.node.get(), v.index}] = Seen{v.node, bd};
}

// The flat value behind a tpu tensor's storage when it holds idx's dtype.
std::optional<engine::Ref> storage_ref(const at::Tensor& idx) {
  StorageState& st = state_of(idx);
  // A padded content's padding holds no indices.
  if (!st.value() || st.padded() || st.value().type().dtype != to_shlo(idx.scalar_type())) return std::nullopt;
  return st.value();
}

// Whether t views all of its storage, in order.
bool whole_storage(const at::Tensor& t) {
  return t.is_contiguous() && t.storage_offset() == 0 &&
         t.numel() * static_cast<int64_t>(t.element_size()) == static_cast<int64_t>(state_of(t).nbytes);
}

}  // namespace

// Checks lo <= idx < hi; fail(v) raises the op's error for a value v outside.
// Device indices: bounds known for the whole storage suffice (a view holds a
// subset). Otherwise the view's [min, max] is computed on the device and
// checked without waiting (engine/checks.h): the error is raised at the next
// host read or synchronize, like a CUDA device-side assert, before any value
// computed from the bad index can be seen. Debug mode checks at once.
void check_index_bounds(const at::Tensor& idx, int64_t lo, int64_t hi, const std::function<void(int64_t)>& fail) {
  if (idx.numel() == 0) return;
  if (idx.device().is_cpu()) {
    at::Tensor l = idx.to(at::kLong);
    int64_t mn = l.min().item<int64_t>(), mx = l.max().item<int64_t>();
    if (mn < lo) fail(mn);
    if (mx >= hi) fail(mx);
    return;
  }
  std::optional<engine::Ref> base = storage_ref(idx);
  std::optional<Bounds> known = base ? known_bounds(*base) : std::nullopt;
  if (known && known->min >= lo && known->max < hi) return;
  if (known && known->from_host && whole_storage(idx)) {
    // Indices copied from the host out of range: the CPU's error at the
    // call, nothing deferred.
    if (known->min < lo) fail(known->min);
    if (known->max >= hi) fail(known->max);
  }
  engine::Ref r = op1("index_bounds", {read(idx)}, shlo::Type{shlo::DType::S64, {2}},
                      [](shlo::Builder& b, const Vals& in) { return Vals{ops::index_bounds(b, in[0])}; });
  std::optional<engine::Ref> keep = base && whole_storage(idx) ? base : std::nullopt;
  engine::defer_check(r, [lo, hi, fail, keep](const std::vector<int64_t>& mm) {
    if (keep) remember_bounds(*keep, Bounds{mm[0], mm[1]});
    if (mm[0] < lo) fail(mm[0]);
    if (mm[1] >= hi) fail(mm[1]);
  });
}

void trust_indices(const at::Tensor& t, int64_t n) {
  if (t.numel() == 0 || !whole_storage(t)) return;
  if (std::optional<engine::Ref> base = storage_ref(t)) remember_bounds(*base, Bounds{0, std::max<int64_t>(n - 1, 0)});
}

void note_host_indices(const at::Tensor& dst, const at::Tensor& host) {
  // A host pass over a small copy costs less than the program a deferred
  // check of it would run.
  constexpr int64_t kMaxNumel = int64_t{1} << 16;
  if (dst.scalar_type() != at::kLong && dst.scalar_type() != at::kInt) return;
  if (host.numel() == 0 || host.numel() > kMaxNumel || host.is_neg() || !whole_storage(dst)) return;
  std::optional<engine::Ref> base = storage_ref(dst);
  if (!base) return;
  at::Tensor l = host.to(dst.scalar_type()).to(at::kLong);
  remember_bounds(*base, Bounds{l.min().item<int64_t>(), l.max().item<int64_t>(), true});
}

std::vector<int64_t> fetch_i64(engine::Ref v, const char* what) {
  std::vector<int64_t> out(shlo::numel(v.type().shape));
  if (!out.empty()) guarded(what, [&] { engine::to_host(v, out.data(), out.size() * sizeof(int64_t)); });
  return out;
}

int64_t fetch_count_true(engine::Ref v) {
  return fetch_count(op1("count_true", {std::move(v)}, shlo::Type{shlo::DType::S64, {}},
                         [](shlo::Builder& b, const Vals& in) { return Vals{ops::count_true(b, in[0])}; }));
}

void resize_out(const at::Tensor& out, at::IntArrayRef sizes, at::ScalarType dtype, const char* op) {
  TORCH_CHECK(out.scalar_type() == dtype, op, ": Expected out tensor to have dtype ", dtype, ", but got ",
              out.scalar_type(), " instead");
  at::native::resize_output(out, sizes);
}

}  // namespace tpu
