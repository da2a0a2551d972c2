// Indexing along one dim: gather, scatter (src / value / reduce overloads),
// scatter_add, scatter_reduce, index_select, index_add, index_copy,
// index_fill and index_reduce. PyTorch's structured meta functions give the
// result's shape and dtype where the op has one; the indices are checked in
// range (aten_bounds.cc) with the CPU's error for each op; the lowerings are
// indexing.h.
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/gather_meta.h>
#include <ATen/ops/index_add_meta.h>
#include <ATen/ops/index_copy_meta.h>
#include <ATen/ops/index_reduce_meta.h>
#include <ATen/ops/scatter_add_meta.h>
#include <ATen/ops/scatter_meta.h>
#include <ATen/ops/scatter_reduce_meta.h>

#include "aten/library.h"
#include "ops/common/aten_common.h"
#include "ops/common/lowering.h"
#include "ops/indexing/indexing.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

// The "index V is out of bounds for dimension D with size S" check (gather,
// scatter, index_add: a RuntimeError on the CPU).
void check_dim_range(const at::Tensor& idx, int64_t dim, int64_t size) {
  check_index_bounds(idx, 0, size, [=](int64_t v) {
    TORCH_CHECK(false, "index ", v, " is out of bounds for dimension ", dim, " with size ", size);
  });
}

void check_index_dtype(const at::Tensor& idx, const char* op) {
  TORCH_CHECK_INDEX(idx.scalar_type() == at::kLong || idx.scalar_type() == at::kInt, op,
                    "(): Expected dtype int32/int64 for index but got ", idx.scalar_type());
}

// ---- gather / scatter

struct Gather {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index, bool) const {
    dim = at::maybe_wrap_dim(dim, self.dim());
    check_dim_range(index, dim, size_at(self, dim));
    if (out.numel() == 0) return;
    write_all(
        {out}, "gather", {read(self), read(index)},
        [](Builder& b, const Vals& in, int64_t d) { return Vals{ops::gather_dim(b, in[0], d, in[1])}; }, dim);
  }
};

// scatter with src a tensor or a scalar operand, combined by c (scatter,
// scatter_add, scatter(reduce=)) or, when `two`, reduced by `reduce`
// (scatter_reduce).
void scatter_common(const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                    engine::Ref src, ops::Combine c, ops::ReduceKind reduce, bool include_self, bool two) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  check_dim_range(index, dim, size_at(self, dim));
  if (out.numel() == 0) return;
  write_all(
      {out}, "scatter", {read(self), read(index), std::move(src)},
      [](Builder& b, const Vals& in, int64_t d, ops::Combine c, ops::ReduceKind reduce, bool include_self, bool two) {
        if (two) return Vals{ops::scatter_reduce(b, in[0], d, in[1], in[2], reduce, include_self)};
        return Vals{ops::scatter_dim(b, in[0], d, in[1], in[2], c)};
      },
      dim, c, reduce, two && include_self, two);
}

// scatter(reduce=)'s modes: add or multiply.
ops::Combine scatter_mode(c10::string_view reduce) {
  return reduce == "add" ? ops::Combine::Add : reduce == "multiply" ? ops::Combine::Mul : ops::Combine::Replace;
}

struct ScatterSrc {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  const at::Tensor& src) const {
    scatter_common(out, self, dim, index, read(src), ops::Combine::Replace, ops::ReduceKind::Sum, true, false);
  }
};
struct ScatterValue {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  const at::Scalar& value) const {
    scatter_common(out, self, dim, index, scalar_of(value, to_shlo(self.scalar_type())), ops::Combine::Replace,
                   ops::ReduceKind::Sum, true, false);
  }
};
struct ScatterReduce {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  const at::Tensor& src, c10::string_view reduce) const {
    scatter_common(out, self, dim, index, read(src), scatter_mode(reduce), ops::ReduceKind::Sum, true, false);
  }
};
struct ScatterValueReduce {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  const at::Scalar& value, c10::string_view reduce) const {
    scatter_common(out, self, dim, index, scalar_of(value, to_shlo(self.scalar_type())), scatter_mode(reduce),
                   ops::ReduceKind::Sum, true, false);
  }
};
struct ScatterAdd {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  const at::Tensor& src) const {
    scatter_common(out, self, dim, index, read(src), ops::Combine::Add, ops::ReduceKind::Sum, true, false);
  }
};
struct ScatterReduceTwo {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  const at::Tensor& src, c10::string_view reduce, bool include_self) const {
    scatter_common(out, self, dim, index, read(src), ops::Combine::Replace, ops::reduce_kind(reduce), include_self,
                   true);
  }
};

// ---- index_select

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
  check_index_bounds(index, 0, size_at(self, dim),
                     [](int64_t) { TORCH_CHECK_INDEX(false, "index out of range in self"); });
  resize_out(out, os, self.scalar_type(), "index_select");
  if (out.numel() == 0) return out;
  write_all(
      {out}, "index_select", {read(self), read(index)},
      [](Builder& b, const Vals& in, int64_t d) { return Vals{ops::index_select(b, in[0], d, in[1])}; }, dim);
  return out;
}
at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  at::Tensor out = empty({0}, self.scalar_type(), self.device());
  return index_select_out(self, dim, index, out);
}

// ---- index_add / index_copy / index_fill / index_reduce

struct IndexAdd {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  const at::Tensor& source, const at::Scalar& alpha) const {
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
      check_index_bounds(index, 0, size_at(self, dim),
                         [](int64_t) { TORCH_CHECK_INDEX(false, "index out of range in self"); });
    if (out.numel() == 0) return;
    shlo::DType d = to_shlo(self.scalar_type());
    write_all(
        {out}, "index_add", {read(self), read(index), read(source), scalar_of(alpha, d)},
        [](Builder& b, const Vals& in, int64_t dm) { return Vals{ops::index_add(b, in[0], dm, in[1], in[2], in[3])}; },
        dim);
  }
};

struct IndexCopy {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  const at::Tensor& source) const {
    dim = at::maybe_wrap_dim(dim, self.dim());
    int64_t size = size_at(self, dim);
    check_index_bounds(index, 0, size, [=](int64_t v) {
      TORCH_CHECK_INDEX(false, "index_copy_(): index ", v, " is out of bounds for dimension ", dim, " with size ",
                        size);
    });
    if (out.numel() == 0) return;
    write_all(
        {out}, "index_copy", {read(self), read(index), read(source)},
        [](Builder& b, const Vals& in, int64_t d) { return Vals{ops::index_copy(b, in[0], d, in[1], in[2])}; }, dim);
  }
};

at::Tensor& index_fill_common(at::Tensor& self, int64_t dim, const at::Tensor& index, engine::Ref value) {
  TORCH_CHECK_INDEX(index.scalar_type() == at::kLong, "index_fill_(): Expected dtype int64 for index.");
  TORCH_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
  dim = at::maybe_wrap_dim(dim, self.dim());
  int64_t size = size_at(self, dim);
  check_index_bounds(index, -size, size, [=](int64_t v) {
    TORCH_CHECK_INDEX(false, "index ", v, " is out of bounds for dimension ", dim, " with size ", size);
  });
  if (self.numel() == 0 || index.numel() == 0) return self;
  write_all(
      {self}, "index_fill", {read(self), read(index), std::move(value)},
      [](Builder& b, const Vals& in, int64_t d) {
        return Vals{ops::index_scatter(b, in[0], d, in[1], in[2], ops::Combine::Replace, true)};
      },
      dim);
  return self;
}

at::Tensor& index_fill__int_Scalar(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Scalar& v) {
  return index_fill_common(self, dim, index, scalar_of(v, to_shlo(self.scalar_type())));
}
at::Tensor& index_fill__int_Tensor(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& v) {
  TORCH_CHECK(v.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ", v.dim(),
              " dimension(s).");
  return index_fill_common(self, dim, index, read_as(v, to_shlo(self.scalar_type())));
}

struct IndexReduce {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  const at::Tensor& source, c10::string_view reduce, bool include_self) const {
    dim = at::maybe_wrap_dim(dim, self.dim());
    int64_t size = size_at(self, dim);
    check_index_bounds(index, 0, size, [](int64_t) { TORCH_CHECK_INDEX(false, "index out of range in self"); });
    if (out.numel() == 0) return;
    write_all(
        {out}, "index_reduce", {read(self), read(index), read(source)},
        [](Builder& b, const Vals& in, int64_t d, ops::ReduceKind r, bool include_self) {
          Value x = in[0], idx = in[1], src = in[2];
          bool scalar = x.rank() == 0;
          if (scalar) {  // a 0-d self indexes like a 1-element vector
            x = b.reshape(x, {1});
            src = b.reshape(src, {shlo::numel(src.shape())});
          }
          if (idx.rank() == 0) idx = b.reshape(idx, {1});
          Value res = ops::index_reduce(b, x, d, idx, src, r, include_self);
          return Vals{scalar ? b.reshape(res, {}) : res};
        },
        dim, ops::reduce_kind(reduce), include_self);
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.structured<at::meta::structured_gather>("gather", nullptr, "gather.out", Gather{});
  m.structured<at::meta::structured_index_add>("index_add", "index_add_", "index_add.out", IndexAdd{});
  m.structured<at::meta::structured_index_copy>("index_copy", "index_copy_", "index_copy.out", IndexCopy{});
  m.impl("index_fill_.int_Scalar", &index_fill__int_Scalar);
  m.impl("index_fill_.int_Tensor", &index_fill__int_Tensor);
  m.structured<at::meta::structured_index_reduce>("index_reduce", "index_reduce_", "index_reduce.out", IndexReduce{});
  m.impl("index_select", &index_select);
  m.impl("index_select.out", &index_select_out);
  m.structured<at::meta::structured_scatter_reduce>("scatter.reduce", "scatter_.reduce", "scatter.reduce_out",
                                                    ScatterReduce{});
  m.structured<at::meta::structured_scatter_src>("scatter.src", "scatter_.src", "scatter.src_out", ScatterSrc{});
  m.structured<at::meta::structured_scatter_value>("scatter.value", "scatter_.value", "scatter.value_out",
                                                   ScatterValue{});
  m.structured<at::meta::structured_scatter_value_reduce>("scatter.value_reduce", "scatter_.value_reduce",
                                                          "scatter.value_reduce_out", ScatterValueReduce{});
  m.structured<at::meta::structured_scatter_add>("scatter_add", "scatter_add_", "scatter_add.out", ScatterAdd{});
  m.structured<at::meta::structured_scatter_reduce_two>("scatter_reduce.two", "scatter_reduce_.two",
                                                        "scatter_reduce.two_out", ScatterReduceTwo{});
}

}  // namespace tpu
