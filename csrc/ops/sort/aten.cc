// Sorting and selection: sort, topk, kthvalue, median, nanmedian, mode, unique
// (_unique2), unique_consecutive, and nonzero / nonzero_static (the nonzero
// elements' positions sorted ahead of the rest). The index outputs are in range by
// construction and marked so (aten_bounds.h): ops indexing with them never
// check them. unique's size depends on the data: one count is read back
// from the device. The lowerings are sort.h.
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/sort_meta.h>
#include <ATen/ops/topk_meta.h>

#include <algorithm>
#include <cmath>

#include "aten/library.h"
#include "ops/common/aten_common.h"
#include "ops/elementwise/elementwise.h"
#include "ops/sort/sort.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;
using MTopk = at::meta::structured_topk;
using MSort = at::meta::structured_sort_stable;

// The lowering of a node whose outputs are yielded flat: F's results
// reshaped to `types` (1-D) and converted to their dtypes.
template <class F, class... A>
struct FlatOutputs {
  Vals operator()(Builder& b, const Vals& in, const std::vector<shlo::Type>& types, const A&... a) const {
    Vals v = F{}(b, in, a...);
    for (size_t i = 0; i < v.size(); ++i) v[i] = ops::convert(b, b.reshape(v[i], types[i].shape), types[i].dtype);
    return v;
  }
};

// Records one node with several outputs and stores them into `outs` (each
// output shaped like its tensor); lower(builder, inputs, attrs...) as for
// op(). The node yields its outputs flat so that contiguous outputs take
// them as they are: storing the first then runs one program computing all
// of them, instead of one program per output.
template <class F, class... A>
void write_outputs(engine::OpName name, std::vector<engine::Ref> inputs, const std::vector<at::Tensor>& outs, F,
                   A... attrs) {
  std::vector<shlo::Type> types;
  for (const at::Tensor& t : outs) types.push_back(shlo::Type{to_shlo(t.scalar_type()), {t.numel()}});
  std::vector<engine::Ref> r = op(name, std::move(inputs), types, FlatOutputs<F, A...>{}, types, std::move(attrs)...);
  for (size_t i = 0; i < outs.size(); ++i) {
    const at::Tensor& t = outs[i];
    if (t.numel() == 0) continue;
    if (t.is_contiguous()) {
      write(t.view({-1}), r[i]);
    } else {
      write(t, op1(
                   "unflatten_output", {r[i]}, type_of(t),
                   [](Builder& b, const Vals& in, const shlo::Shape& s) { return Vals{b.reshape(in[0], s)}; },
                   shape_of(t.sizes())));
    }
  }
}

// (values, indices) of a sort-family lowering, lower(builder, x, attrs...)
// -> pair, stored into two tensors. The indices address dim `dim` of self.
template <class F>
struct PairOutputs {
  template <class... A>
  Vals operator()(Builder& b, const Vals& in, const A&... a) const {
    auto [v, i] = F{}(b, in[0], a...);
    return Vals{v, i};
  }
};
template <class F, class... A>
void write_pair(engine::OpName name, const at::Tensor& self, int64_t dim, const at::Tensor& values,
                const at::Tensor& indices, F, A... attrs) {
  write_outputs(name, {read(self)}, {values, indices}, PairOutputs<F>{}, std::move(attrs)...);
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

// ---- sort, topk

void topk_into(const at::Tensor& self, int64_t k, int64_t dim, bool largest, const at::Tensor& values,
               const at::Tensor& indices) {
  if (values.numel() == 0) return;
  dim = at::maybe_wrap_dim(dim, self.dim());
  write_pair(
      "topk", self, dim, values, indices,
      [](Builder& b, Value x, int64_t k, int64_t d, bool largest) { return ops::topk(b, x, k, d, largest); }, k, dim,
      largest);
}
void sort_into(const at::Tensor& self, int64_t dim, bool descending, const at::Tensor& values,
               const at::Tensor& indices) {
  if (values.numel() == 0) return;
  dim = at::maybe_wrap_dim(dim, self.dim());
  write_pair(
      "sort", self, dim, values, indices,
      [](Builder& b, Value x, int64_t d, bool descending) { return ops::sort(b, x, d, descending); }, dim, descending);
}

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

// ---- kthvalue, median

std::tuple<at::Tensor&, at::Tensor&> kthvalue_values(const at::Tensor& self, c10::SymInt k_, int64_t dim, bool keepdim,
                                                     at::Tensor& values, at::Tensor& indices) {
  int64_t k = k_.expect_int();
  dim = at::maybe_wrap_dim(dim, self.dim());
  int64_t size = size_at(self, dim);
  at::native::zero_numel_check_dims(self, dim, "kthvalue()");
  TORCH_CHECK(k >= 1 && k <= size, "kthvalue(): selected number k out of range for dimension ", dim);
  at::DimVector os = reduced_shape(self, dim, keepdim);
  resize_out(values, os, self.scalar_type(), "kthvalue");
  resize_out(indices, os, at::kLong, "kthvalue");
  if (values.numel() == 0) return {values, indices};
  write_pair(
      "kthvalue", self, dim, values, indices,
      [](Builder& b, Value x, int64_t k, int64_t d) { return ops::kthvalue(b, x, k, d); }, k, dim);
  return {values, indices};
}
std::tuple<at::Tensor, at::Tensor> kthvalue(const at::Tensor& self, c10::SymInt k, int64_t dim, bool keepdim) {
  at::Tensor v = empty({0}, self.scalar_type(), self.device()), i = empty({0}, at::kLong, self.device());
  kthvalue_values(self, k, dim, keepdim, v, i);
  return {v, i};
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
  write_pair(
      name, self, dim, values, indices,
      [](Builder& b, Value x, int64_t d, bool ignore_nan) { return ops::median(b, x, d, ignore_nan); }, dim,
      ignore_nan);
}

// ---- mode

std::tuple<at::Tensor&, at::Tensor&> mode_values(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& values,
                                                 at::Tensor& indices) {
  TORCH_CHECK(self.scalar_type() == values.scalar_type(), "expected scalar type '", self.scalar_type(), "' but got '",
              values.scalar_type(), "' for values output");
  TORCH_CHECK(indices.scalar_type() == at::kLong, "expected scalar type '", at::kLong, "' but got '",
              indices.scalar_type(), "' for indices output");
  dim = at::maybe_wrap_dim(dim, self.dim());
  if (self.numel() == 0) {
    // An empty reduced dim raises, as on the CPU; other empty inputs give empty results.
    auto sizes = at::native::get_zero_numel_tensor_size(self, dim, keepdim, "mode()");
    at::native::resize_output(values, sizes);
    at::native::resize_output(indices, sizes);
    return {values, indices};
  }
  at::DimVector os = reduced_shape(self, dim, keepdim);
  resize_out(values, os, self.scalar_type(), "mode");
  resize_out(indices, os, at::kLong, "mode");
  write_pair(
      "mode", self, dim, values, indices, [](Builder& b, Value x, int64_t d) { return ops::mode(b, x, d); }, dim);
  return {values, indices};
}
std::tuple<at::Tensor, at::Tensor> mode(const at::Tensor& self, int64_t dim, bool keepdim) {
  at::Tensor values = at::empty({0}, self.options()), indices = at::empty({0}, self.options().dtype(at::kLong));
  mode_values(self, dim, keepdim, values, indices);
  return {values, indices};
}

at::Tensor median_all(const at::Tensor& self, bool ignore_nan) {
  at::Tensor flat = self.reshape({-1});
  at::Tensor values = empty({}, self.scalar_type(), self.device());
  if (self.numel() == 0) return values.fill_(NAN);
  at::Tensor indices = empty({}, at::kLong, self.device());
  median_common(flat, 0, false, values, indices, ignore_nan);
  return values;
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

// ---- unique

// What unique's node computes besides the distinct rows.
struct UniqueOutputs {
  shlo::Shape rows;
  int64_t count;
  bool sorted, inverse, counts;
  auto fields() const { return std::tie(rows, count, sorted, inverse, counts); }
};

// unique / unique_consecutive of the rows of self moved so that `dim` leads
// (dim: nullopt treats self as a flat vector).
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_common(const at::Tensor& self, bool sorted, bool return_inverse,
                                                             bool return_counts, std::optional<int64_t> dim) {
  at::Tensor x = dim.has_value() ? self.movedim(at::maybe_wrap_dim(*dim, self.dim()), 0) : self.reshape({-1});
  if (x.dim() == 0) x = x.reshape({1});
  int64_t N = x.size(0), M = N ? x.numel() / N : 0;
  shlo::Shape rows{N, M};
  int64_t count = 0;
  if (N > 0)
    count = fetch_count(op1(
        sorted ? "unique_count" : "unique_consecutive_count", {read(x)}, shlo::Type{shlo::DType::S64, {}},
        [](Builder& b, const Vals& in, const shlo::Shape& rows, bool sorted) {
          return Vals{ops::unique_count(b, b.reshape(in[0], rows), sorted)};
        },
        rows, sorted));
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
    write_outputs(
        sorted ? "unique" : "unique_consecutive", {read(x)}, outs,
        [](Builder& b, const Vals& in, const UniqueOutputs& u) {
          Vals all = ops::unique(b, b.reshape(in[0], u.rows), u.count, u.sorted);
          Vals r{all[0]};
          if (u.inverse) r.push_back(all[1]);
          if (u.counts) r.push_back(all[2]);
          return r;
        },
        UniqueOutputs{rows, count, sorted, return_inverse, return_counts});
    if (return_inverse) trust_indices(inverse, count);
  }
  if (dim.has_value()) values = values.movedim(0, at::maybe_wrap_dim(*dim, self.dim())).contiguous();
  return {values, inverse, counts};
}

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

// ---- nonzero

at::Tensor& nonzero_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong,
              "nonzero: Expected out tensor to have scalar type Long but got scalar type", out.scalar_type());
  int64_t count = self.numel() > 0 ? fetch_count_true(read(self)) : 0;
  at::native::resize_output(out, {count, self.dim()});
  if (out.numel() == 0) return out;
  write_all(
      {out}, "nonzero", {read(self)},
      [](Builder& b, const Vals& in, int64_t count) { return Vals{ops::nonzero(b, in[0], count)}; }, count);
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
  write_all(
      {out}, "nonzero_static", {read(self), engine::scalar_i64(fill_value)},
      [](Builder& b, const Vals& in, int64_t size) { return Vals{ops::nonzero_static(b, in[0], size, in[1])}; }, size);
  return out;
}
at::Tensor nonzero_static(const at::Tensor& self, c10::SymInt size, int64_t fill_value) {
  at::Tensor out = empty({0}, at::kLong, self.device());
  return nonzero_static_out(self, size, fill_value, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("_unique2", &_unique2);
  m.impl("kthvalue", &kthvalue);
  m.impl("kthvalue.values", &kthvalue_values);
  m.impl("median", &median);
  m.impl("mode", &mode);
  m.impl("mode.values", &mode_values);
  m.impl("median.dim_values", &median_dim_values);
  m.impl("nonzero", &nonzero);
  m.impl("nonzero.out", &nonzero_out);
  m.impl("nonzero_static", &nonzero_static);
  m.impl("nonzero_static.out", &nonzero_static_out);
  m.impl("nanmedian", &nanmedian);
  m.impl("nanmedian.dim_values", &nanmedian_dim_values);
  m.impl("sort.stable", &sort_stable);
  m.impl("sort.values_stable", &sort_values_stable);
  m.impl("topk", &topk);
  m.impl("topk.values", &topk_values);
  m.impl("unique_consecutive", &unique_consecutive);
}

}  // namespace tpu
