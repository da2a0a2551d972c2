// Advanced indexing and the ops built on it or on data-dependent counts:
// index.Tensor, _index_put_impl_, take, masked_select, masked_scatter_,
// embedding_dense_backward, one_hot and repeat_interleave. Indices are
// checked in range (ops/common/aten_bounds.cc); data-dependent shapes
// (bool-mask indexing, repeat_interleave, masked_scatter's count check)
// read one count back from the device. The lowerings are indexing.h.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>

#include <limits>

#include "aten/library.h"
#include "engine/checks.h"
#include "ops/common/aten_common.h"
#include "ops/indexing/indexing.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

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
      // Every call warns, as the CPU's does: callers count the warnings.
      if (t.scalar_type() == at::kByte)
        TORCH_WARN("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.");
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
    // No index fits a dim of size 0: raised here, as on the CPU, without a
    // program (a gather from an empty dim does not compile).
    TORCH_CHECK_INDEX(size != 0 || e.idx[i].numel() == 0, "index is out of bounds for dimension with size 0");
    check_index_bounds(e.idx[i], -size, size, [=](int64_t v) {
      TORCH_CHECK_INDEX(false, "index ", v, " is out of bounds for dimension ", dim, " with size ", size);
    });
  }
  return e;
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
  write_all(
      {out}, "index", std::move(in),
      [](Builder& b, const Vals& v, const std::vector<int64_t>& dims, const shlo::Shape& B) {
        return Vals{ops::advanced_index(b, v[0], dims, Vals(v.begin() + 1, v.end()), B)};
      },
      e.dims, B);
  return out;
}

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
  // As the CPU's: the written tensor may not share memory with what it reads.
  at::assert_no_overlap(self, values);
  for (const std::optional<at::Tensor>& i : indices)
    if (i.has_value() && i->defined()) at::assert_no_overlap(self, *i);
  Expanded e = expand_indices(self, indices);
  // The CPU checks the values' shape first, then their dtype.
  auto check_dtype = [&] {
    TORCH_CHECK(values.scalar_type() == self.scalar_type(),
                "Index put requires the source and destination dtypes match, got ", self.scalar_type(),
                " for the destination and ", values.scalar_type(), " for the source.");
  };
  engine::Ref v = values.device().is_cpu() && values.dim() > 0 ? read(values.to(self.device())) : read(values);
  if (e.idx.empty()) {
    TORCH_CHECK(at::is_expandable_to(values.sizes(), self.sizes()), "shape mismatch: value tensor of shape ",
                values.sizes(), " cannot be broadcast to indexing result of shape ", self.sizes());
    check_dtype();
    if (self.numel()) write(self, broadcast(v, shape_of(self.sizes())));
    return self;
  }
  shlo::Shape B = shape_of(e.B);
  shlo::Shape os = ops::advanced_index_shape(shape_of(self.sizes()), e.dims, B);
  TORCH_CHECK(at::is_expandable_to(values.sizes(), at::IntArrayRef(os)), "shape mismatch: value tensor of shape ",
              values.sizes(), " cannot be broadcast to indexing result of shape ", at::IntArrayRef(os));
  check_dtype();
  if (shlo::numel(os) == 0 || self.numel() == 0) return self;
  std::vector<engine::Ref> in{read(self), v};
  for (const at::Tensor& t : e.idx) in.push_back(index_ref(t, self.device()));
  write_all(
      {self}, "index_put", std::move(in),
      [](Builder& b, const Vals& x, const std::vector<int64_t>& dims, const shlo::Shape& B, bool accumulate) {
        return Vals{ops::advanced_index_put(b, x[0], dims, Vals(x.begin() + 2, x.end()), B, x[1], accumulate)};
      },
      e.dims, B, accumulate);
  return self;
}

// ---- take, masked_select, masked_scatter_

at::Tensor& take_out(const at::Tensor& self, const at::Tensor& index, at::Tensor& out) {
  TORCH_CHECK(index.scalar_type() == at::kLong, "take(): Expected a long tensor for index, but got ",
              index.scalar_type());
  TORCH_CHECK_INDEX(!(self.numel() == 0 && index.numel() != 0), "take(): tried to take from an empty tensor");
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, index);
  at::assert_no_overlap(out, self);
  int64_t n = self.numel();
  check_index_bounds(index, -n, n, [=](int64_t v) {
    TORCH_CHECK_INDEX(false, "out of range: tried to access index ", v, " on a tensor of ", n, " elements.");
  });
  resize_out(out, index.sizes(), self.scalar_type(), "take");
  if (out.numel() == 0) return out;
  write_all({out}, "take", {read(self), read(index)},
            [](Builder& b, const Vals& in) { return Vals{ops::take(b, in[0], in[1])}; });
  return out;
}
at::Tensor take(const at::Tensor& self, const at::Tensor& index) {
  at::Tensor out = empty({0}, self.scalar_type(), self.device());
  return take_out(self, index, out);
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
  int64_t count = fetch_count_true(m);
  TORCH_CHECK(count <= source.numel(), "Number of elements of source < number of ones in mask");
  if (count == 0) return self;
  write_all({self}, "masked_scatter", {read(self), m, read(source)},
            [](Builder& b, const Vals& in) { return Vals{ops::masked_scatter(b, in[0], in[1], in[2])}; });
  return self;
}

// ---- embedding backward

at::Tensor embedding_dense_backward(const at::Tensor& grad, const at::Tensor& indices, c10::SymInt num_weights_,
                                    c10::SymInt padding_idx_, bool scale_grad_by_freq) {
  int64_t num_weights = num_weights_.expect_int(), padding_idx = padding_idx_.expect_int();
  check_index_dtype(indices, "embedding_backward");
  check_index_bounds(indices, 0, num_weights, [](int64_t) { TORCH_CHECK_INDEX(false, "index out of range in self"); });
  int64_t D = grad.dim() == 0 ? 1 : grad.size(-1);
  at::Tensor out = empty({num_weights, D}, grad.scalar_type(), grad.device());
  if (out.numel() == 0) return out;
  write_all(
      {out}, "embedding_backward", {read(grad), read(indices)},
      [](Builder& b, const Vals& in, int64_t num_weights, int64_t padding_idx, bool scale_grad_by_freq) {
        return Vals{ops::embedding_backward(b, in[0], in[1], num_weights, padding_idx, scale_grad_by_freq)};
      },
      num_weights, padding_idx, scale_grad_by_freq);
  return out;
}

// ---- one_hot, repeat_interleave

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
    check_index_bounds(self, 0, std::numeric_limits<int64_t>::max(), fail);
    num_classes = self.max().item<int64_t>() + 1;  // the read raises a pending failure first
  } else {
    check_index_bounds(self, 0, num_classes, fail);
    // No class fits: the CPU raises at the call.
    if (num_classes <= 0) self.max().item();
  }
  return at::eq(self.unsqueeze(-1), at::arange(num_classes, self.options())).to(at::kLong);
}

// [min, sum] of the repeats, as s64[2] on the device.
engine::Ref min_and_sum(const at::Tensor& repeats) {
  return op1("min_and_sum", {read(repeats)}, shlo::Type{shlo::DType::S64, {2}},
             [](Builder& b, const Vals& in) { return Vals{ops::min_and_sum(b, in[0])}; });
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
      engine::defer_check(min_and_sum(repeats), [total](const std::vector<int64_t>& v) {
        TORCH_CHECK(v[1] == total, "allocated size does not match required size");
        TORCH_CHECK(v[0] >= 0, "repeats can not be negative");
      });
    }
  } else if (repeats.numel() > 0) {
    // Data-dependent size: one read of [min, sum].
    std::vector<int64_t> ms = fetch_i64(min_and_sum(repeats));
    TORCH_CHECK(ms[0] >= 0, "repeats can not be negative");
    total = ms[1];
  }
  at::Tensor out = empty({total}, at::kLong, repeats.device());
  if (total == 0) return out;
  write_all(
      {out}, "repeat_interleave", {read(repeats)},
      [](Builder& b, const Vals& in, int64_t total) { return Vals{ops::repeat_interleave_indices(b, in[0], total)}; },
      total);
  trust_indices(out, std::max<int64_t>(repeats.numel(), 1));
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("_index_put_impl_", &_index_put_impl_);
  m.impl("embedding_dense_backward", &embedding_dense_backward);
  m.impl("index.Tensor", &index_Tensor);
  m.impl("index.Tensor_out", &index_Tensor_out);
  m.impl("masked_scatter_", &masked_scatter_);
  m.impl("masked_select", &masked_select);
  m.impl("masked_select.out", &masked_select_out);
  m.impl("one_hot", &one_hot);
  m.impl("repeat_interleave.Tensor", &repeat_interleave_Tensor);
  m.impl("take", &take);
  m.impl("take.out", &take_out);
}

}  // namespace tpu
