// Indexing, data movement and sorting kernels: gather / scatter, the
// index_select / index_add family, advanced indexing, take, masked_scatter /
// masked_select, embedding backward, cat, flip, roll, constant padding,
// triu / tril (+ indices), sort, topk, kthvalue, median, nonzero, unique,
// unique_consecutive and repeat_interleave.
//
// Index bounds: an out-of-range index raises the same error type as on the
// CPU, never clamps. Indices on the host are checked on the host. Indices on
// the device get their [min, max] computed by a small program and checked at
// the next host read or sync without waiting now (engine/checks.h; at once in
// debug mode); a passed check is remembered per storage value, and index
// outputs of our own ops (sort, topk, nonzero, unique's inverse...) are known
// in range and never checked.
// Data-dependent shapes (nonzero, bool-mask indexing, unique,
// repeat_interleave, masked_scatter's count check) likewise read one count
// back from the device.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/cat_meta.h>
#include <ATen/ops/gather_meta.h>
#include <ATen/ops/index_add_meta.h>
#include <ATen/ops/index_copy_meta.h>
#include <ATen/ops/scatter_add_meta.h>
#include <ATen/ops/scatter_meta.h>
#include <ATen/ops/scatter_reduce_meta.h>
#include <ATen/ops/sort_meta.h>
#include <ATen/ops/topk_meta.h>
#include <ATen/ops/tril_meta.h>
#include <ATen/ops/triu_meta.h>

#include <limits>
#include <mutex>
#include <unordered_map>

#include "aten/errors.h"
#include "aten/index_bounds.h"
#include "aten/kernels.h"
#include "aten/structured.h"
#include "engine/checks.h"
#include "ops/elementwise/elementwise.h"
#include "ops/indexing/indexing.h"
#include "ops/sort/sort.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

std::string ints(at::IntArrayRef v) {
  std::string s = "[";
  for (int64_t x : v) s += std::to_string(x) + ",";
  return s + "]";
}

// ---- reading values back to the host

std::vector<int64_t> fetch_i64(engine::Ref v) {
  std::vector<int64_t> out(shlo::numel(v.type().shape));
  if (!out.empty())
    guarded("reading an index back", [&] { engine::to_host(v, out.data(), out.size() * sizeof(int64_t)); });
  return out;
}

// Reads a 0-d s64 device value (a data-dependent size).
int64_t fetch_count(engine::Ref v) { return fetch_i64(v)[0]; }

// ---- index bounds

struct Bounds {
  int64_t min = 0, max = 0;
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
  if (!st.value() || st.value().type().dtype != to_shlo(idx.scalar_type())) return std::nullopt;
  return st.value();
}

// Checks lo <= idx < hi; fail(v) raises the op's error for a value v outside.
// Device indices: bounds known for the whole storage suffice (a view holds a
// subset). Otherwise the view's [min, max] is computed on the device and
// checked without waiting (engine/checks.h): the error is raised at the next
// host read or synchronize, like a CUDA device-side assert, before any value
// computed from the bad index can be seen. Debug mode checks at once.
template <class F>
void check_range(const at::Tensor& idx, int64_t lo, int64_t hi, F fail) {
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
  engine::Ref r = legacy_op("index_bounds", {read(idx)}, shlo::Type{shlo::DType::S64, {2}},
                            [](Builder& b, const Vals& in) { return Vals{ops::index_bounds(b, in[0])}; });
  bool whole = idx.is_contiguous() && idx.storage_offset() == 0 &&
               idx.numel() * static_cast<int64_t>(idx.element_size()) == static_cast<int64_t>(state_of(idx).nbytes);
  std::optional<engine::Ref> keep = base && whole ? base : std::nullopt;
  engine::defer_check(r, [lo, hi, fail, keep](const std::vector<int64_t>& mm) {
    if (keep) remember_bounds(*keep, Bounds{mm[0], mm[1]});
    if (mm[0] < lo) fail(mm[0]);
    if (mm[1] >= hi) fail(mm[1]);
  });
}

// Marks the index tensor `t` (just written by our op) as within [0, n) when
// it is its whole storage.
void trust_indices(const at::Tensor& t, int64_t n) {
  bool whole = t.is_contiguous() && t.storage_offset() == 0 &&
               t.numel() * static_cast<int64_t>(t.element_size()) == static_cast<int64_t>(state_of(t).nbytes);
  if (t.numel() == 0 || !whole) return;
  if (std::optional<engine::Ref> base = storage_ref(t)) remember_bounds(*base, Bounds{0, std::max<int64_t>(n - 1, 0)});
}

int64_t size_at(const at::Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.size(dim); }

// The "index V is out of bounds for dimension D with size S" check (gather,
// scatter, index_add: a RuntimeError on the CPU).
void check_dim_range(const at::Tensor& idx, int64_t dim, int64_t size) {
  check_range(idx, 0, size, [=](int64_t v) {
    TORCH_CHECK(false, "index ", v, " is out of bounds for dimension ", dim, " with size ", size);
  });
}

void check_index_dtype(const at::Tensor& idx, const char* op) {
  TORCH_CHECK_INDEX(idx.scalar_type() == at::kLong || idx.scalar_type() == at::kInt, op,
                    "(): Expected dtype int32/int64 for index but got ", idx.scalar_type());
}

// A device value of an index tensor that may live on the host (advanced
// indexing accepts CPU indices for a device tensor).
engine::Ref index_ref(const at::Tensor& idx, const at::Device& dev) {
  if (idx.device().is_cpu() && idx.dim() > 0) return read(idx.to(dev));
  return read(idx);
}

void resize_out(at::Tensor& out, at::IntArrayRef sizes, at::ScalarType dtype, const char* op) {
  TORCH_CHECK(out.scalar_type() == dtype, op, ": Expected out tensor to have dtype ", dtype, ", but got ",
              out.scalar_type(), " instead");
  at::native::resize_output(out, sizes);
}

// ---- gather / scatter

template <class M>
void gather_impl(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index, bool) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  check_dim_range(index, dim, size_at(self, dim));
  if (out.numel() == 0) return;
  write(out, legacy_op("gather:" + std::to_string(dim), {read(self), read(index)}, type_of(out),
                       [dim](Builder& b, const Vals& in) { return Vals{ops::gather_dim(b, in[0], dim, in[1])}; }));
}

// scatter with src a tensor or a scalar operand; mode: "" (replace), add,
// multiply (scatter reduce=) or sum/prod/mean/amax/amin (scatter_reduce).
void scatter_common(const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                    engine::Ref src, const std::string& mode, bool include_self, bool two) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  check_dim_range(index, dim, size_at(self, dim));
  if (out.numel() == 0) return;
  std::string key = "scatter:" + std::to_string(dim) + ":" + mode + (two ? (include_self ? ":two+" : ":two-") : "");
  write(out, legacy_op(key, {read(self), read(index), src}, type_of(out), [=](Builder& b, const Vals& in) {
          if (two) return Vals{ops::scatter_reduce(b, in[0], dim, in[1], in[2], mode, include_self)};
          ops::Combine c = mode == "add"        ? ops::Combine::Add
                           : mode == "multiply" ? ops::Combine::Mul
                                                : ops::Combine::Replace;
          return Vals{ops::scatter_dim(b, in[0], dim, in[1], in[2], c)};
        }));
}

template <class M>
void scatter_src_impl(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                      const at::Tensor& src) {
  scatter_common(out, self, dim, index, read(src), "", true, false);
}
template <class M>
void scatter_value_impl(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                        const at::Scalar& value) {
  scatter_common(out, self, dim, index, scalar_of(value, to_shlo(self.scalar_type())), "", true, false);
}
template <class M>
void scatter_reduce_impl(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                         const at::Tensor& src, c10::string_view reduce) {
  scatter_common(out, self, dim, index, read(src), std::string(reduce), true, false);
}
template <class M>
void scatter_value_reduce_impl(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Scalar& value, c10::string_view reduce) {
  scatter_common(out, self, dim, index, scalar_of(value, to_shlo(self.scalar_type())), std::string(reduce), true,
                 false);
}
template <class M>
void scatter_add_impl(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                      const at::Tensor& src) {
  scatter_common(out, self, dim, index, read(src), "add", true, false);
}
template <class M>
void scatter_reduce_two_impl(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             const at::Tensor& src, c10::string_view reduce, bool include_self) {
  scatter_common(out, self, dim, index, read(src), std::string(reduce), include_self, true);
}

// ---- index_add / index_copy

template <class M>
void index_add_impl(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                    const at::Tensor& source, const at::Scalar& alpha) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  // The CPU names a bad index as its kernel's path does: scatter_add's
  // RuntimeError where it hands the work to scatter_add (more than one
  // dimension, the first or last one, int64 indices, alpha 1), an
  // IndexError from its own loop otherwise; with more than one dimension
  // an empty self is never looked at.
  int64_t nd = self.dim();
  bool via_scatter = nd > 1 && (dim == 0 || dim == nd - 1) && index.scalar_type() == at::kLong && alpha.equal(1) &&
                     self.scalar_type() != at::kComplexHalf && source.scalar_type() != at::kComplexHalf;
  if (via_scatter && self.numel() > 0)
    check_dim_range(index, dim, size_at(self, dim));
  else if (nd <= 1 || self.numel() > 0)
    check_range(index, 0, size_at(self, dim), [](int64_t) { TORCH_CHECK_INDEX(false, "index out of range in self"); });
  if (out.numel() == 0) return;
  shlo::DType d = to_shlo(self.scalar_type());
  write(out, legacy_op("index_add:" + std::to_string(dim), {read(self), read(index), read(source), scalar_of(alpha, d)},
                       type_of(out), [dim](Builder& b, const Vals& in) {
                         return Vals{ops::index_add(b, in[0], dim, in[1], in[2], in[3])};
                       }));
}

template <class M>
void index_copy_impl(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                     const at::Tensor& source) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  int64_t size = size_at(self, dim);
  check_range(index, 0, size, [=](int64_t v) {
    TORCH_CHECK_INDEX(false, "index_copy_(): index ", v, " is out of bounds for dimension ", dim, " with size ", size);
  });
  if (out.numel() == 0) return;
  write(out, legacy_op("index_copy:" + std::to_string(dim), {read(self), read(index), read(source)}, type_of(out),
                       [dim](Builder& b, const Vals& in) {
                         return Vals{ops::index_scatter(b, in[0], dim, in[1], in[2], ops::Combine::Replace, false)};
                       }));
}

// ---- advanced indexing

// The indexed dims and their index tensors after bool / byte masks are
// replaced by their nonzero coordinates; `checked` marks indices known to be
// in range (mask coordinates).
struct Expanded {
  std::vector<int64_t> dims;
  std::vector<at::Tensor> idx;
  std::vector<bool> checked;
  at::DimVector B;  // the broadcast shape of the index tensors
};

Expanded expand_indices(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  TORCH_CHECK_INDEX(static_cast<int64_t>(indices.size()) <= self.dim(), "too many indices for tensor of dimension ",
                    self.dim(), " (got ", indices.size(), ")");
  Expanded e;
  int64_t d = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    std::optional<at::Tensor> o = indices.get(i);
    if (!o.has_value() || !o->defined()) {
      ++d;
      continue;
    }
    const at::Tensor& t = *o;
    if (t.scalar_type() == at::kBool || t.scalar_type() == at::kByte) {
      TORCH_CHECK_INDEX(d + t.dim() <= self.dim(), "too many indices for tensor of dimension ", self.dim());
      for (int64_t j = 0; j < t.dim(); ++j)
        TORCH_CHECK_INDEX(t.size(j) == self.size(d + j), "The shape of the mask ", t.sizes(), " at index ", j,
                          " does not match the shape of the indexed tensor ", self.sizes(), " at index ", d + j);
      // Data-dependent: the mask's true count becomes a static size here.
      at::Tensor nz = at::nonzero(t.scalar_type() == at::kByte ? t.to(at::kBool) : t);
      for (int64_t j = 0; j < t.dim(); ++j) {
        e.dims.push_back(d + j);
        e.idx.push_back(nz.select(1, j));
        e.checked.push_back(true);
      }
      d += t.dim();
      continue;
    }
    TORCH_CHECK_INDEX(t.scalar_type() == at::kLong || t.scalar_type() == at::kInt,
                      "tensors used as indices must be long, int, byte or bool tensors");
    e.dims.push_back(d);
    e.idx.push_back(t);
    e.checked.push_back(false);
    ++d;
  }
  for (size_t i = 0; i < e.idx.size(); ++i) {
    if (i == 0) {
      e.B = at::DimVector(e.idx[0].sizes());
      continue;
    }
    try {
      e.B = at::infer_size_dimvector(e.B, e.idx[i].sizes());
    } catch (const c10::Error&) {
      std::string shapes;
      for (size_t j = 0; j < e.idx.size(); ++j) shapes += (j ? ", " : "") + shape_str(e.idx[j].sizes());
      TORCH_CHECK_INDEX(false, "shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes);
    }
  }
  for (size_t i = 0; i < e.idx.size(); ++i) {
    if (e.checked[i]) continue;
    int64_t dim = e.dims[i], size = self.size(dim);
    check_range(e.idx[i], -size, size, [=](int64_t v) {
      TORCH_CHECK_INDEX(false, "index ", v, " is out of bounds for dimension ", dim, " with size ", size);
    });
  }
  return e;
}

std::string index_key(const char* name, const Expanded& e) {
  return std::string(name) + ":" + ints(e.dims) + ints(e.B);
}

at::Tensor& index_into(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices, at::Tensor& out) {
  Expanded e = expand_indices(self, indices);
  if (e.idx.empty()) {
    resize_out(out, self.sizes(), self.scalar_type(), "index");
    if (out.numel()) write(out, read(self));
    return out;
  }
  shlo::Shape B = shape_of(e.B);
  shlo::Shape os = ops::advanced_index_shape(shape_of(self.sizes()), e.dims, B);
  resize_out(out, os, self.scalar_type(), "index");
  if (out.numel() == 0) return out;
  std::vector<engine::Ref> in{read(self)};
  for (const at::Tensor& t : e.idx) in.push_back(index_ref(t, self.device()));
  std::vector<int64_t> dims = e.dims;
  write(out, legacy_op(index_key("index", e), in, type_of(out), [dims, B](Builder& b, const Vals& v) {
          return Vals{ops::advanced_index(b, v[0], dims, Vals(v.begin() + 1, v.end()), B)};
        }));
  return out;
}

// ---- sort family helpers

std::string sort_key(const char* name, int64_t a, int64_t b2 = 0, int64_t c = 0) {
  return std::string(name) + ":" + std::to_string(a) + ":" + std::to_string(b2) + ":" + std::to_string(c);
}

// Records one node with several outputs and stores them into `outs` (each
// output shaped like its tensor). The node yields its outputs flat so that
// contiguous outputs take them as they are: storing the first then runs one
// program computing all of them, instead of one program per output.
using MultiFn = std::function<Vals(Builder&, const Vals&)>;
void write_outputs(const std::string& key, std::vector<engine::Ref> inputs, const std::vector<at::Tensor>& outs,
                   MultiFn fn) {
  std::vector<shlo::Type> types;
  std::vector<shlo::Shape> shapes;
  for (const at::Tensor& t : outs) {
    shapes.push_back(shape_of(t.sizes()));
    types.push_back(shlo::Type{to_shlo(t.scalar_type()), {t.numel()}});
  }
  auto r = engine::record(key, std::move(inputs), types, [fn, types](Builder& b, const Vals& in) {
    Vals v = fn(b, in);
    for (size_t i = 0; i < v.size(); ++i) v[i] = ops::convert(b, b.reshape(v[i], types[i].shape), types[i].dtype);
    return v;
  });
  for (size_t i = 0; i < outs.size(); ++i) {
    const at::Tensor& t = outs[i];
    if (t.numel() == 0) continue;
    if (t.is_contiguous()) {
      write(t.view({-1}), r[i]);
    } else {
      shlo::Shape s = shapes[i];
      write(t, legacy_op("reshape" + ints(s), {r[i]}, type_of(t),
                         [s](Builder& b, const Vals& in) { return Vals{b.reshape(in[0], s)}; }));
    }
  }
}

// (values, indices) of a sort-family lowering into two tensors.
using PairFn = std::function<std::pair<Value, Value>(Builder&, Value)>;
// The indices address dim `dim` of self.
void write_pair(const std::string& key, const at::Tensor& self, int64_t dim, const at::Tensor& values,
                const at::Tensor& indices, PairFn fn) {
  write_outputs(key, {read(self)}, {values, indices}, [fn](Builder& b, const Vals& in) {
    auto [v, i] = fn(b, in[0]);
    return Vals{v, i};
  });
  trust_indices(indices, size_at(self, dim));
}

at::DimVector reduced_shape(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::DimVector s(self.sizes());
  if (self.dim() == 0) return s;
  if (keepdim)
    s[dim] = 1;
  else
    s.erase(s.begin() + dim);
  return s;
}

void median_common(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& values, at::Tensor& indices,
                   bool ignore_nan) {
  const char* name = ignore_nan ? "nanmedian" : "median";
  dim = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK_INDEX(self.dim() == 0 || self.size(dim) > 0, name, "(): Expected reduction dim ", dim,
                    " to have non-zero size.");
  at::DimVector os = reduced_shape(self, dim, keepdim);
  resize_out(values, os, self.scalar_type(), name);
  resize_out(indices, os, at::kLong, name);
  if (values.numel() == 0) return;
  write_pair(sort_key(name, dim), self, dim, values, indices,
             [dim, ignore_nan](Builder& b, Value x) { return ops::median(b, x, dim, ignore_nan); });
}

at::Tensor median_all(const at::Tensor& self, bool ignore_nan) {
  at::Tensor flat = self.reshape({-1});
  at::Tensor values = empty({}, self.scalar_type(), self.device());
  if (self.numel() == 0) return values.fill_(NAN);
  at::Tensor indices = empty({}, at::kLong, self.device());
  median_common(flat, 0, false, values, indices, ignore_nan);
  return values;
}

using MGather = at::meta::structured_gather;
using MScatterSrc = at::meta::structured_scatter_src;
using MScatterValue = at::meta::structured_scatter_value;
using MScatterReduce = at::meta::structured_scatter_reduce;
using MScatterValueReduce = at::meta::structured_scatter_value_reduce;
using MScatterAdd = at::meta::structured_scatter_add;
using MScatterReduceTwo = at::meta::structured_scatter_reduce_two;
using MIndexAdd = at::meta::structured_index_add;
using MIndexCopy = at::meta::structured_index_copy;
using MCat = at::meta::structured_cat;
using MTriu = at::meta::structured_triu;
using MTril = at::meta::structured_tril;
using MTopk = at::meta::structured_topk;
using MSort = at::meta::structured_sort_stable;

}  // namespace

// ---------------------------------------------------------------- index_select

at::Tensor& index_select_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, at::Tensor& out) {
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  check_index_dtype(index, "index_select");
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, index);
  dim = at::maybe_wrap_dim(dim, self.dim());
  at::DimVector os(self.sizes());
  if (self.dim() > 0) {
    os[dim] = index.numel();
  } else {
    TORCH_CHECK_INDEX(index.numel() == 1, "index_select(): Index to scalar can have only 1 value, got ", index.numel(),
                      " value(s)");
  }
  check_range(index, 0, size_at(self, dim), [](int64_t) { TORCH_CHECK_INDEX(false, "index out of range in self"); });
  resize_out(out, os, self.scalar_type(), "index_select");
  if (out.numel() == 0) return out;
  write(out, legacy_op("index_select:" + std::to_string(dim), {read(self), read(index)}, type_of(out),
                       [dim](Builder& b, const Vals& in) { return Vals{ops::index_select(b, in[0], dim, in[1])}; }));
  return out;
}
at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  at::Tensor out = empty({0}, self.scalar_type(), self.device());
  return index_select_out(self, dim, index, out);
}

// ---------------------------------------------------------------- gather / scatter

at::Tensor gather(const at::Tensor& s, int64_t dim, const at::Tensor& i, bool sg) {
  return functional<MGather>(gather_impl<Structured<MGather>>, s, dim, i, sg);
}
at::Tensor& gather_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, bool sg, at::Tensor& out) {
  return out_variant<MGather>(out, gather_impl<Structured<MGather>>, s, dim, i, sg);
}

at::Tensor scatter_src(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src) {
  return functional<MScatterSrc>(scatter_src_impl<Structured<MScatterSrc>>, s, dim, i, src);
}
at::Tensor& scatter__src(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src) {
  return inplace<MScatterSrc>(s, scatter_src_impl<Structured<MScatterSrc>>, dim, i, src);
}
at::Tensor& scatter_src_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                            at::Tensor& out) {
  return out_variant<MScatterSrc>(out, scatter_src_impl<Structured<MScatterSrc>>, s, dim, i, src);
}
at::Tensor scatter_value(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Scalar& v) {
  return functional<MScatterValue>(scatter_value_impl<Structured<MScatterValue>>, s, dim, i, v);
}
at::Tensor& scatter__value(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Scalar& v) {
  return inplace<MScatterValue>(s, scatter_value_impl<Structured<MScatterValue>>, dim, i, v);
}
at::Tensor& scatter_value_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Scalar& v,
                              at::Tensor& out) {
  return out_variant<MScatterValue>(out, scatter_value_impl<Structured<MScatterValue>>, s, dim, i, v);
}
at::Tensor scatter_reduce(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                          c10::string_view r) {
  return functional<MScatterReduce>(scatter_reduce_impl<Structured<MScatterReduce>>, s, dim, i, src, r);
}
at::Tensor& scatter__reduce(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                            c10::string_view r) {
  return inplace<MScatterReduce>(s, scatter_reduce_impl<Structured<MScatterReduce>>, dim, i, src, r);
}
at::Tensor& scatter_reduce_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                               c10::string_view r, at::Tensor& out) {
  return out_variant<MScatterReduce>(out, scatter_reduce_impl<Structured<MScatterReduce>>, s, dim, i, src, r);
}
at::Tensor scatter_value_reduce(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Scalar& v,
                                c10::string_view r) {
  return functional<MScatterValueReduce>(scatter_value_reduce_impl<Structured<MScatterValueReduce>>, s, dim, i, v, r);
}
at::Tensor& scatter__value_reduce(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Scalar& v,
                                  c10::string_view r) {
  return inplace<MScatterValueReduce>(s, scatter_value_reduce_impl<Structured<MScatterValueReduce>>, dim, i, v, r);
}
at::Tensor& scatter_value_reduce_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Scalar& v,
                                     c10::string_view r, at::Tensor& out) {
  return out_variant<MScatterValueReduce>(out, scatter_value_reduce_impl<Structured<MScatterValueReduce>>, s, dim, i, v,
                                          r);
}
at::Tensor scatter_add(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src) {
  return functional<MScatterAdd>(scatter_add_impl<Structured<MScatterAdd>>, s, dim, i, src);
}
at::Tensor& scatter_add_(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src) {
  return inplace<MScatterAdd>(s, scatter_add_impl<Structured<MScatterAdd>>, dim, i, src);
}
at::Tensor& scatter_add_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                            at::Tensor& out) {
  return out_variant<MScatterAdd>(out, scatter_add_impl<Structured<MScatterAdd>>, s, dim, i, src);
}
at::Tensor scatter_reduce_two(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                              c10::string_view r, bool include_self) {
  return functional<MScatterReduceTwo>(scatter_reduce_two_impl<Structured<MScatterReduceTwo>>, s, dim, i, src, r,
                                       include_self);
}
at::Tensor& scatter_reduce__two(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                                c10::string_view r, bool include_self) {
  return inplace<MScatterReduceTwo>(s, scatter_reduce_two_impl<Structured<MScatterReduceTwo>>, dim, i, src, r,
                                    include_self);
}
at::Tensor& scatter_reduce_two_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                                   c10::string_view r, bool include_self, at::Tensor& out) {
  return out_variant<MScatterReduceTwo>(out, scatter_reduce_two_impl<Structured<MScatterReduceTwo>>, s, dim, i, src, r,
                                        include_self);
}

// ---------------------------------------------------------------- index_add / copy / fill

at::Tensor index_add(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                     const at::Scalar& a) {
  return functional<MIndexAdd>(index_add_impl<Structured<MIndexAdd>>, s, dim, i, src, a);
}
at::Tensor& index_add_(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src, const at::Scalar& a) {
  return inplace<MIndexAdd>(s, index_add_impl<Structured<MIndexAdd>>, dim, i, src, a);
}
at::Tensor& index_add_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                          const at::Scalar& a, at::Tensor& out) {
  return out_variant<MIndexAdd>(out, index_add_impl<Structured<MIndexAdd>>, s, dim, i, src, a);
}

at::Tensor index_copy(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src) {
  return functional<MIndexCopy>(index_copy_impl<Structured<MIndexCopy>>, s, dim, i, src);
}
at::Tensor& index_copy_(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src) {
  return inplace<MIndexCopy>(s, index_copy_impl<Structured<MIndexCopy>>, dim, i, src);
}
at::Tensor& index_copy_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                           at::Tensor& out) {
  return out_variant<MIndexCopy>(out, index_copy_impl<Structured<MIndexCopy>>, s, dim, i, src);
}

namespace {
at::Tensor& index_fill_common(at::Tensor& self, int64_t dim, const at::Tensor& index, engine::Ref value) {
  TORCH_CHECK_INDEX(index.scalar_type() == at::kLong, "index_fill_(): Expected dtype int64 for index.");
  TORCH_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
  dim = at::maybe_wrap_dim(dim, self.dim());
  int64_t size = size_at(self, dim);
  check_range(index, -size, size, [=](int64_t v) {
    TORCH_CHECK_INDEX(false, "index ", v, " is out of bounds for dimension ", dim, " with size ", size);
  });
  if (self.numel() == 0 || index.numel() == 0) return self;
  write(self, legacy_op("index_fill:" + std::to_string(dim), {read(self), read(index), value}, type_of(self),
                        [dim](Builder& b, const Vals& in) {
                          return Vals{ops::index_scatter(b, in[0], dim, in[1], in[2], ops::Combine::Replace, true)};
                        }));
  return self;
}
}  // namespace

at::Tensor& index_fill__int_Scalar(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Scalar& v) {
  return index_fill_common(self, dim, index, scalar_of(v, to_shlo(self.scalar_type())));
}
at::Tensor& index_fill__int_Tensor(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& v) {
  TORCH_CHECK(v.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ", v.dim(),
              " dimension(s).");
  return index_fill_common(self, dim, index, read_as(v, to_shlo(self.scalar_type())));
}

// ---------------------------------------------------------------- advanced indexing

at::Tensor index_Tensor(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  at::Tensor out = empty({0}, self.scalar_type(), self.device());
  return index_into(self, indices, out);
}
at::Tensor& index_Tensor_out(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                             at::Tensor& out) {
  return index_into(self, indices, out);
}

at::Tensor& _index_put_impl_(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                             const at::Tensor& values, bool accumulate, bool /*unsafe*/) {
  TORCH_CHECK(values.scalar_type() == self.scalar_type(),
              "Index put requires the source and destination dtypes match, got ", self.scalar_type(),
              " for the destination and ", values.scalar_type(), " for the source.");
  // As the CPU's: the written tensor may not share memory with what it reads.
  at::assert_no_overlap(self, values);
  for (const std::optional<at::Tensor>& i : indices)
    if (i.has_value() && i->defined()) at::assert_no_overlap(self, *i);
  Expanded e = expand_indices(self, indices);
  engine::Ref v = values.device().is_cpu() && values.dim() > 0 ? read(values.to(self.device())) : read(values);
  if (e.idx.empty()) {
    TORCH_CHECK(at::is_expandable_to(values.sizes(), self.sizes()), "shape mismatch: value tensor of shape ",
                values.sizes(), " cannot be broadcast to indexing result of shape ", self.sizes());
    if (self.numel()) write(self, broadcast(v, shape_of(self.sizes())));
    return self;
  }
  shlo::Shape B = shape_of(e.B);
  shlo::Shape os = ops::advanced_index_shape(shape_of(self.sizes()), e.dims, B);
  TORCH_CHECK(at::is_expandable_to(values.sizes(), at::IntArrayRef(os)), "shape mismatch: value tensor of shape ",
              values.sizes(), " cannot be broadcast to indexing result of shape ", at::IntArrayRef(os));
  if (shlo::numel(os) == 0 || self.numel() == 0) return self;
  std::vector<engine::Ref> in{read(self), v};
  for (const at::Tensor& t : e.idx) in.push_back(index_ref(t, self.device()));
  std::vector<int64_t> dims = e.dims;
  std::string key = index_key(accumulate ? "index_put+" : "index_put", e);
  write(self, legacy_op(key, in, type_of(self), [dims, B, accumulate](Builder& b, const Vals& x) {
          return Vals{ops::advanced_index_put(b, x[0], dims, Vals(x.begin() + 2, x.end()), B, x[1], accumulate)};
        }));
  return self;
}

at::Tensor& take_out(const at::Tensor& self, const at::Tensor& index, at::Tensor& out) {
  TORCH_CHECK(index.scalar_type() == at::kLong, "take(): Expected a long tensor for index, but got ",
              index.scalar_type());
  TORCH_CHECK_INDEX(!(self.numel() == 0 && index.numel() != 0), "take(): tried to take from an empty tensor");
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, index);
  at::assert_no_overlap(out, self);
  int64_t n = self.numel();
  check_range(index, -n, n, [=](int64_t v) {
    TORCH_CHECK_INDEX(false, "out of range: tried to access index ", v, " on a tensor of ", n, " elements.");
  });
  resize_out(out, index.sizes(), self.scalar_type(), "take");
  if (out.numel() == 0) return out;
  write(out, legacy_op("take", {read(self), read(index)}, type_of(out),
                       [](Builder& b, const Vals& in) { return Vals{ops::take(b, in[0], in[1])}; }));
  return out;
}
at::Tensor take(const at::Tensor& self, const at::Tensor& index) {
  at::Tensor out = empty({0}, self.scalar_type(), self.device());
  return take_out(self, index, out);
}

at::Tensor embedding_dense_backward(const at::Tensor& grad, const at::Tensor& indices, c10::SymInt num_weights_,
                                    c10::SymInt padding_idx_, bool scale_grad_by_freq) {
  int64_t num_weights = num_weights_.expect_int(), padding_idx = padding_idx_.expect_int();
  check_index_dtype(indices, "embedding_backward");
  check_range(indices, 0, num_weights, [](int64_t) { TORCH_CHECK_INDEX(false, "index out of range in self"); });
  int64_t D = grad.dim() == 0 ? 1 : grad.size(-1);
  at::Tensor out = empty({num_weights, D}, grad.scalar_type(), grad.device());
  if (out.numel() == 0) return out;
  std::string key = "embedding_backward:" + std::to_string(num_weights) + ":" + std::to_string(padding_idx) +
                    (scale_grad_by_freq ? ":freq" : "");
  write(out, legacy_op(key, {read(grad), read(indices)}, type_of(out), [=](Builder& b, const Vals& in) {
          return Vals{ops::embedding_backward(b, in[0], in[1], num_weights, padding_idx, scale_grad_by_freq)};
        }));
  return out;
}

at::Tensor& masked_scatter_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& source) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(),
              "masked_scatter: expected self and source to have same dtypes but got", self.scalar_type(), " and ",
              source.scalar_type());
  TORCH_CHECK(at::is_expandable_to(mask.sizes(), self.sizes()), "masked_scatter_: mask of shape ", mask.sizes(),
              " cannot be broadcast to self of shape ", self.sizes());
  at::assert_no_internal_overlap(self);
  if (self.numel() == 0) return self;
  engine::Ref m = broadcast(read(mask), shape_of(self.sizes()));
  // Data-dependent check: source must hold one element per true position.
  int64_t count = fetch_count(legacy_op("count_true", {m}, shlo::Type{shlo::DType::S64, {}},
                                        [](Builder& b, const Vals& in) { return Vals{ops::count_true(b, in[0])}; }));
  TORCH_CHECK(count <= source.numel(), "Number of elements of source < number of ones in mask");
  if (count == 0) return self;
  write(self, legacy_op("masked_scatter", {read(self), m, read(source)}, type_of(self),
                        [](Builder& b, const Vals& in) { return Vals{ops::masked_scatter(b, in[0], in[1], in[2])}; }));
  return self;
}

at::Tensor& masked_select_out(const at::Tensor& self, const at::Tensor& mask, at::Tensor& out) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, mask);
  at::DimVector shape = at::infer_size_dimvector(self.sizes(), mask.sizes());
  // Advanced indexing by the broadcast mask (its true count is read back).
  c10::List<std::optional<at::Tensor>> idx;
  if (shape.empty()) {  // 0-d: select from a 1-element vector
    idx.push_back(mask.reshape({1}));
    index_into(self.reshape({1}), idx, out);
    return out;
  }
  idx.push_back(mask.expand(shape));
  index_into(self.expand(shape), idx, out);
  return out;
}
at::Tensor masked_select(const at::Tensor& self, const at::Tensor& mask) {
  at::Tensor out = empty({0}, self.scalar_type(), self.device());
  return masked_select_out(self, mask, out);
}

// ---------------------------------------------------------------- cat, flip, roll, pad, triangles

namespace {
void cat_into(const at::Tensor& out, const at::ITensorListRef& tensors, int64_t dim) {
  if (out.numel() == 0) return;
  std::vector<engine::Ref> in;
  std::string key = "cat:" + std::to_string(dim) + ":" + shlo::dtype_name(to_shlo(out.scalar_type()));
  for (const at::Tensor& t : tensors) {
    // Legacy 1-D empty tensors are skipped by PyTorch; so is anything empty along dim.
    if (t.dim() == 1 && t.numel() == 0) continue;
    if (t.size(dim) == 0) continue;
    in.push_back(read(t));
  }
  shlo::DType to = to_shlo(out.scalar_type());
  write(out, legacy_op(key, in, type_of(out),
                       [dim, to](Builder& b, const Vals& v) { return Vals{ops::cat(b, v, dim, to)}; }));
}
}  // namespace

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  Structured<MCat> m;
  auto pre = m.meta(tensors, dim);
  cat_into(m.outs[0], tensors, pre.dim);
  return m.outs[0];
}
at::Tensor& cat_out(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  Structured<MCat> m({out});
  auto pre = m.meta(tensors, dim);
  cat_into(out, tensors, pre.dim);
  return out;
}

at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  std::vector<int64_t> d;
  std::vector<bool> seen_dim(std::max<int64_t>(self.dim(), 1), false);
  for (int64_t x : dims) {
    int64_t w = at::maybe_wrap_dim(x, self.dim());
    TORCH_CHECK(!seen_dim[w], "dim ", w, " appears multiple times in the list of dims");
    seen_dim[w] = true;
    if (self.dim() > 0) d.push_back(w);
  }
  std::sort(d.begin(), d.end());
  if (self.numel() == 0 || d.empty()) return self.clone();
  return wrap(legacy_op("flip" + ints(d), {read(self)}, type_of(self),
                        [d](Builder& b, const Vals& in) { return Vals{ops::flip(b, in[0], d)}; }),
              self.device());
}

at::Tensor roll(const at::Tensor& self, c10::SymIntArrayRef shifts_, at::IntArrayRef dims) {
  std::vector<int64_t> shifts;
  for (const c10::SymInt& s : shifts_) shifts.push_back(s.expect_int());
  TORCH_CHECK(!shifts.empty(), "`shifts` required");
  size_t want = dims.empty() ? 1 : dims.size();
  TORCH_CHECK(shifts.size() == want, "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  std::vector<int64_t> d;
  for (int64_t x : dims) d.push_back(at::maybe_wrap_dim(x, self.dim()));
  if (self.numel() == 0) return self.clone();
  return wrap(legacy_op("roll" + ints(shifts) + ints(d), {read(self)}, type_of(self),
                        [shifts, d](Builder& b, const Vals& in) { return Vals{ops::roll(b, in[0], shifts, d)}; }),
              self.device());
}

at::Tensor constant_pad_nd(const at::Tensor& self, c10::SymIntArrayRef pad_, const at::Scalar& value) {
  std::vector<int64_t> pad;
  for (const c10::SymInt& p : pad_) pad.push_back(p.expect_int());
  TORCH_CHECK(pad.size() % 2 == 0, "Length of pad must be even but instead it equals ", pad.size());
  int64_t n = self.dim();
  TORCH_CHECK(static_cast<int64_t>(pad.size()) <= 2 * n,
              "Length of pad should be no more than twice the number of dimensions of the input. Pad length is ",
              pad.size(), "while the input has ", n, "dimensions.");
  at::DimVector os(self.sizes());
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t d = n - 1 - static_cast<int64_t>(i);
    os[d] = self.size(d) + pad[2 * i] + pad[2 * i + 1];
    TORCH_CHECK(os[d] >= 0, "The input size ", self.size(d), ", plus negative padding ", pad[2 * i], " and ",
                pad[2 * i + 1], " resulted in a negative output size, which is invalid. Check dimension ", d,
                " of your input.");
  }
  at::Tensor out = empty(os, self.scalar_type(), self.device());
  if (out.numel() == 0) return out;
  write(out,
        legacy_op("constant_pad" + ints(pad), {read(self), scalar_of(value, to_shlo(self.scalar_type()))}, type_of(out),
                  [pad](Builder& b, const Vals& in) { return Vals{ops::constant_pad(b, in[0], in[1], pad)}; }));
  return out;
}

namespace {
template <bool Upper>
struct TriImpl {
  template <class M>
  static void run(M&, const at::Tensor& out, const at::Tensor& self, int64_t diagonal) {
    if (out.numel() == 0) return;
    write(out, legacy_op(Upper ? "triu" : "tril", {read(self), engine::scalar_i64(diagonal)}, type_of(out),
                         [](Builder& b, const Vals& in) { return Vals{ops::triangle(b, in[0], in[1], Upper)}; }));
  }
};
}  // namespace

at::Tensor triu(const at::Tensor& s, c10::SymInt d) {
  return functional<MTriu>(TriImpl<true>::run<Structured<MTriu>>, s, d.expect_int());
}
at::Tensor& triu_(at::Tensor& s, c10::SymInt d) {
  return inplace<MTriu>(s, TriImpl<true>::run<Structured<MTriu>>, d.expect_int());
}
at::Tensor& triu_out(const at::Tensor& s, c10::SymInt d, at::Tensor& out) {
  return out_variant<MTriu>(out, TriImpl<true>::run<Structured<MTriu>>, s, d.expect_int());
}
at::Tensor tril(const at::Tensor& s, c10::SymInt d) {
  return functional<MTril>(TriImpl<false>::run<Structured<MTril>>, s, d.expect_int());
}
at::Tensor& tril_(at::Tensor& s, c10::SymInt d) {
  return inplace<MTril>(s, TriImpl<false>::run<Structured<MTril>>, d.expect_int());
}
at::Tensor& tril_out(const at::Tensor& s, c10::SymInt d, at::Tensor& out) {
  return out_variant<MTril>(out, TriImpl<false>::run<Structured<MTril>>, s, d.expect_int());
}

// ---------------------------------------------------------------- sort, topk, kthvalue, median

namespace {
void topk_into(const at::Tensor& self, int64_t k, int64_t dim, bool largest, const at::Tensor& values,
               const at::Tensor& indices) {
  if (values.numel() == 0) return;
  dim = at::maybe_wrap_dim(dim, self.dim());
  write_pair(sort_key("topk", k, dim, largest), self, dim, values, indices,
             [k, dim, largest](Builder& b, Value x) { return ops::topk(b, x, k, dim, largest); });
}
void sort_into(const at::Tensor& self, int64_t dim, bool descending, const at::Tensor& values,
               const at::Tensor& indices) {
  if (values.numel() == 0) return;
  dim = at::maybe_wrap_dim(dim, self.dim());
  write_pair(sort_key("sort", dim, descending), self, dim, values, indices,
             [dim, descending](Builder& b, Value x) { return ops::sort(b, x, dim, descending); });
}
}  // namespace

std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& self, c10::SymInt k, int64_t dim, bool largest, bool sorted) {
  Structured<MTopk> m;
  m.meta(self, k.expect_int(), dim, largest, sorted);
  topk_into(self, k.expect_int(), dim, largest, m.outs[0], m.outs[1]);
  return {m.outs[0], m.outs[1]};
}
std::tuple<at::Tensor&, at::Tensor&> topk_values(const at::Tensor& self, c10::SymInt k, int64_t dim, bool largest,
                                                 bool sorted, at::Tensor& values, at::Tensor& indices) {
  Structured<MTopk> m({values, indices});
  m.meta(self, k.expect_int(), dim, largest, sorted);
  topk_into(self, k.expect_int(), dim, largest, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> sort_stable(const at::Tensor& self, std::optional<bool> stable, int64_t dim,
                                               bool descending) {
  Structured<MSort> m;
  m.meta(self, stable, dim, descending);
  sort_into(self, dim, descending, m.outs[0], m.outs[1]);
  return {m.outs[0], m.outs[1]};
}
std::tuple<at::Tensor&, at::Tensor&> sort_values_stable(const at::Tensor& self, std::optional<bool> stable, int64_t dim,
                                                        bool descending, at::Tensor& values, at::Tensor& indices) {
  Structured<MSort> m({values, indices});
  m.meta(self, stable, dim, descending);
  // The CPU copies self into values first, which refuses a partial overlap.
  at::assert_no_internal_overlap(values);
  if (!values.is_same(self)) at::assert_no_partial_overlap(values, self);
  sort_into(self, dim, descending, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> kthvalue_values(const at::Tensor& self, c10::SymInt k_, int64_t dim, bool keepdim,
                                                     at::Tensor& values, at::Tensor& indices) {
  int64_t k = k_.expect_int();
  dim = at::maybe_wrap_dim(dim, self.dim());
  int64_t size = size_at(self, dim);
  TORCH_CHECK(k >= 1 && k <= size, "kthvalue(): selected number k out of range for dimension ", dim);
  at::DimVector os = reduced_shape(self, dim, keepdim);
  resize_out(values, os, self.scalar_type(), "kthvalue");
  resize_out(indices, os, at::kLong, "kthvalue");
  if (values.numel() == 0) return {values, indices};
  write_pair(sort_key("kthvalue", k, dim), self, dim, values, indices,
             [k, dim](Builder& b, Value x) { return ops::kthvalue(b, x, k, dim); });
  return {values, indices};
}
std::tuple<at::Tensor, at::Tensor> kthvalue(const at::Tensor& self, c10::SymInt k, int64_t dim, bool keepdim) {
  at::Tensor v = empty({0}, self.scalar_type(), self.device()), i = empty({0}, at::kLong, self.device());
  kthvalue_values(self, k, dim, keepdim, v, i);
  return {v, i};
}

at::Tensor median(const at::Tensor& self) { return median_all(self, false); }
at::Tensor nanmedian(const at::Tensor& self) { return median_all(self, true); }
std::tuple<at::Tensor&, at::Tensor&> median_dim_values(const at::Tensor& self, int64_t dim, bool keepdim,
                                                       at::Tensor& values, at::Tensor& indices) {
  median_common(self, dim, keepdim, values, indices, false);
  return {values, indices};
}
std::tuple<at::Tensor&, at::Tensor&> nanmedian_dim_values(const at::Tensor& self, int64_t dim, bool keepdim,
                                                          at::Tensor& values, at::Tensor& indices) {
  median_common(self, dim, keepdim, values, indices, true);
  return {values, indices};
}

// ---------------------------------------------------------------- nonzero, unique

at::Tensor& nonzero_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong,
              "nonzero: Expected out tensor to have scalar type Long but got scalar type", out.scalar_type());
  int64_t count = 0;
  if (self.numel() > 0)
    count = fetch_count(legacy_op("count_true", {read(self)}, shlo::Type{shlo::DType::S64, {}},
                                  [](Builder& b, const Vals& in) { return Vals{ops::count_true(b, in[0])}; }));
  at::native::resize_output(out, {count, self.dim()});
  if (out.numel() == 0) return out;
  write(out, legacy_op("nonzero:" + std::to_string(count), {read(self)}, type_of(out),
                       [count](Builder& b, const Vals& in) { return Vals{ops::nonzero(b, in[0], count)}; }));
  int64_t largest = 1;
  for (int64_t d : self.sizes()) largest = std::max(largest, d);
  trust_indices(out, largest);
  return out;
}
at::Tensor nonzero(const at::Tensor& self) {
  at::Tensor out = empty({0}, at::kLong, self.device());
  return nonzero_out(self, out);
}

at::Tensor& nonzero_static_out(const at::Tensor& self, c10::SymInt size_, int64_t fill_value, at::Tensor& out) {
  int64_t size = size_.expect_int();
  TORCH_CHECK(size >= 0, "nonzero_static: 'size' must be an non-negative integer");
  resize_out(out, {size, self.dim()}, at::kLong, "nonzero_static");
  if (out.numel() == 0) return out;
  write(out,
        legacy_op("nonzero_static:" + std::to_string(size), {read(self), engine::scalar_i64(fill_value)}, type_of(out),
                  [size](Builder& b, const Vals& in) { return Vals{ops::nonzero_static(b, in[0], size, in[1])}; }));
  return out;
}
at::Tensor nonzero_static(const at::Tensor& self, c10::SymInt size, int64_t fill_value) {
  at::Tensor out = empty({0}, at::kLong, self.device());
  return nonzero_static_out(self, size, fill_value, out);
}

namespace {
// unique / unique_consecutive of the rows of self moved so that `dim` leads
// (dim: nullopt treats self as a flat vector).
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_common(const at::Tensor& self, bool sorted, bool return_inverse,
                                                             bool return_counts, std::optional<int64_t> dim) {
  const char* name = sorted ? "unique" : "unique_consecutive";
  at::Tensor x = dim.has_value() ? self.movedim(at::maybe_wrap_dim(*dim, self.dim()), 0) : self.reshape({-1});
  if (x.dim() == 0) x = x.reshape({1});
  int64_t N = x.size(0), M = N ? x.numel() / N : 0;
  shlo::Shape rows{N, M};
  int64_t count = 0;
  if (N > 0)
    count = fetch_count(legacy_op(std::string(name) + "_count", {read(x)}, shlo::Type{shlo::DType::S64, {}},
                                  [sorted, rows](Builder& b, const Vals& in) {
                                    return Vals{ops::unique_count(b, b.reshape(in[0], rows), sorted)};
                                  }));
  at::DimVector vs(x.sizes());
  vs[0] = count;
  at::Tensor values = empty(vs, self.scalar_type(), self.device());
  at::Tensor inverse =
      empty(return_inverse ? (dim.has_value() ? at::IntArrayRef{N} : self.sizes()) : at::IntArrayRef{0}, at::kLong,
            self.device());
  at::Tensor counts = empty({return_counts ? count : 0}, at::kLong, self.device());
  if (N > 0) {
    std::vector<at::Tensor> outs{values};
    if (return_inverse) outs.push_back(inverse);
    if (return_counts) outs.push_back(counts);
    write_outputs(std::string(name) + ":" + std::to_string(count) + (return_inverse ? ":inv" : "") +
                      (return_counts ? ":cnt" : ""),
                  {read(x)}, outs, [=](Builder& b, const Vals& in) {
                    Vals u = ops::unique(b, b.reshape(in[0], rows), count, sorted);
                    Vals r{u[0]};
                    if (return_inverse) r.push_back(u[1]);
                    if (return_counts) r.push_back(u[2]);
                    return r;
                  });
    if (return_inverse) trust_indices(inverse, count);
  }
  if (dim.has_value()) values = values.movedim(0, at::maybe_wrap_dim(*dim, self.dim())).contiguous();
  return {values, inverse, counts};
}
}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> _unique2(const at::Tensor& self, bool /*sorted*/, bool return_inverse,
                                                        bool return_counts) {
  // Always sorted: a valid order for sorted=False as well.
  return unique_common(self, true, return_inverse, return_counts, std::nullopt);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_consecutive(const at::Tensor& self, bool return_inverse,
                                                                  bool return_counts, std::optional<int64_t> dim) {
  if (dim.has_value() && self.dim() <= 1) dim.reset();
  return unique_common(self, false, return_inverse, return_counts, dim);
}

at::Tensor repeat_interleave_Tensor(const at::Tensor& repeats, std::optional<c10::SymInt> output_size) {
  TORCH_CHECK(repeats.dim() == 1 || repeats.dim() == 0, "repeat_interleave only accept 1D vector as repeat");
  TORCH_CHECK(repeats.scalar_type() == at::kLong || repeats.scalar_type() == at::kInt,
              "repeats has to be Long or Int tensor");
  int64_t total = 0;
  if (output_size.has_value()) {
    total = output_size->expect_int();
    // The given size is trusted now and checked on the device, in the CPU's
    // order: the sum first, then the signs.
    if (repeats.numel() > 0) {
      engine::Ref ms = legacy_op("min_and_sum", {read(repeats)}, shlo::Type{shlo::DType::S64, {2}},
                                 [](Builder& b, const Vals& in) { return Vals{ops::min_and_sum(b, in[0])}; });
      engine::defer_check(ms, [total](const std::vector<int64_t>& v) {
        TORCH_CHECK(v[1] == total, "allocated size does not match required size");
        TORCH_CHECK(v[0] >= 0, "repeats can not be negative");
      });
    }
  } else if (repeats.numel() > 0) {
    // Data-dependent size: one read of [min, sum].
    std::vector<int64_t> ms =
        fetch_i64(legacy_op("min_and_sum", {read(repeats)}, shlo::Type{shlo::DType::S64, {2}},
                            [](Builder& b, const Vals& in) { return Vals{ops::min_and_sum(b, in[0])}; }));
    TORCH_CHECK(ms[0] >= 0, "repeats can not be negative");
    total = ms[1];
  }
  at::Tensor out = empty({total}, at::kLong, repeats.device());
  if (total == 0) return out;
  write(out, legacy_op("repeat_interleave:" + std::to_string(total), {read(repeats)}, type_of(out),
                       [total](Builder& b, const Vals& in) {
                         return Vals{ops::repeat_interleave_indices(b, in[0], total)};
                       }));
  trust_indices(out, std::max<int64_t>(repeats.numel(), 1));
  return out;
}

// F.one_hot. PyTorch's composite leaves the class checks of accelerator
// tensors to scatter's device assert; here they are deferred checks with
// the CPU's messages, and the encoding is one comparison with an iota.
at::Tensor one_hot(const at::Tensor& self, int64_t num_classes) {
  TORCH_CHECK(self.scalar_type() == at::kLong, "one_hot is only applicable to index tensor of type LongTensor.");
  std::vector<int64_t> shape = self.sizes().vec();
  if (self.numel() == 0) {
    TORCH_CHECK(num_classes > 0, "Can not infer total number of classes from empty tensor.");
    shape.push_back(num_classes);
    return at::empty(shape, self.options());
  }
  auto fail = [](int64_t v) {
    TORCH_CHECK(v >= 0, "Class values must be non-negative.");
    TORCH_CHECK(false, "Class values must be smaller than num_classes.");
  };
  if (num_classes == -1) {
    check_range(self, 0, std::numeric_limits<int64_t>::max(), fail);
    num_classes = self.max().item<int64_t>() + 1;  // the read raises a pending failure first
  } else {
    check_range(self, 0, num_classes, fail);
    // No class fits: the CPU raises at the call.
    if (num_classes <= 0) self.max().item();
  }
  return at::eq(self.unsqueeze(-1), at::arange(num_classes, self.options())).to(at::kLong);
}

void check_index_bounds(const at::Tensor& idx, int64_t lo, int64_t hi, const std::function<void(int64_t)>& fail) {
  check_range(idx, lo, hi, fail);
}

}  // namespace tpu
