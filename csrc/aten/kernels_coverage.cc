// Kernels added to raise OpInfo conformance (the `coverage` branch): ops that
// used to run through the CPU fallback. Lowerings live in ops/coverage.h.
#include <ATen/ExpandUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/index_reduce_meta.h>
#include <ATen/ops/linalg_cross_meta.h>
#include <ATen/ops/renorm_meta.h>
#include <ATen/ops/smooth_l1_loss_meta.h>
#include <ATen/ops/sum_meta.h>

#include <cmath>

#include "aten/errors.h"
#include "aten/index_bounds.h"
#include "aten/kernels.h"
#include "aten/structured.h"
#include "engine/checks.h"
#include "ops/checks/checks.h"
#include "ops/coverage.h"
#include "ops/indexing/indexing.h"

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

// Stores `v` into out (resized to v's shape first, as out= ops do).
at::Tensor& store_out(at::Tensor& out, engine::Ref v) {
  at::native::resize_output(out, v.type().shape);
  write(out, std::move(v));
  return out;
}

// ---- FFT

// Wrapped dims, in the caller's order (r2c / c2r treat the last one specially).
std::vector<int64_t> fft_dims(const at::Tensor& self, at::IntArrayRef dim) {
  std::vector<int64_t> dims;
  for (int64_t d : dim) {
    int64_t w = at::maybe_wrap_dim(d, self.dim());
    TORCH_CHECK(std::find(dims.begin(), dims.end(), w) == dims.end(), "FFT dims must be unique");
    dims.push_back(w);
  }
  return dims;
}

void check_norm(int64_t normalization) {
  TORCH_CHECK(normalization >= 0 && normalization <= 2, "Invalid normalization mode: ", normalization);
}

engine::Ref fft_c2c_ref(const at::Tensor& self, at::IntArrayRef dim, int64_t norm, bool forward) {
  TORCH_CHECK(self.is_complex(), "_fft_c2c expects a complex input tensor, but got ", self.scalar_type());
  check_norm(norm);
  std::vector<int64_t> dims = fft_dims(self, dim);
  return legacy_op(
      "fft_c2c" + ints(dims) + std::to_string(norm) + (forward ? "f" : "b"), {read(self)}, type_of(self),
      [dims, norm, forward](Builder& b, const Vals& in) { return Vals{ops::fft_c2c(b, in[0], dims, norm, forward)}; });
}

engine::Ref fft_r2c_ref(const at::Tensor& self, at::IntArrayRef dim, int64_t norm, bool onesided) {
  TORCH_CHECK(self.is_floating_point(), "_fft_r2c expects a floating point input tensor, but got ", self.scalar_type());
  TORCH_CHECK(self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble, "Unsupported dtype ",
              self.scalar_type());
  check_norm(norm);
  std::vector<int64_t> dims = fft_dims(self, dim);
  TORCH_CHECK(!dims.empty(), "_fft_r2c expects at least one dim");
  shlo::Type t = type_of(self);
  t.dtype = self.scalar_type() == at::kDouble ? shlo::DType::C128 : shlo::DType::C64;
  if (onesided) t.shape[dims.back()] = t.shape[dims.back()] / 2 + 1;
  return legacy_op("fft_r2c" + ints(dims) + std::to_string(norm) + (onesided ? "o" : "t"), {read(self)}, t,
                   [dims, norm, onesided](Builder& b, const Vals& in) {
                     return Vals{ops::fft_r2c(b, in[0], dims, norm, onesided)};
                   });
}

engine::Ref fft_c2r_ref(const at::Tensor& self, at::IntArrayRef dim, int64_t norm, int64_t last_dim_size) {
  TORCH_CHECK(self.is_complex(), "_fft_c2r expects a complex input tensor, but got ", self.scalar_type());
  check_norm(norm);
  std::vector<int64_t> dims = fft_dims(self, dim);
  TORCH_CHECK(!dims.empty(), "_fft_c2r expects at least one dim");
  TORCH_CHECK(last_dim_size >= 1, "Invalid number of data points (", last_dim_size, ") specified");
  shlo::Type t = type_of(self);
  t.dtype = self.scalar_type() == at::kComplexDouble ? shlo::DType::F64 : shlo::DType::F32;
  t.shape[dims.back()] = last_dim_size;
  return legacy_op("fft_c2r" + ints(dims) + std::to_string(norm) + ":" + std::to_string(last_dim_size), {read(self)}, t,
                   [dims, norm, last_dim_size](Builder& b, const Vals& in) {
                     return Vals{ops::fft_c2r(b, in[0], dims, norm, last_dim_size)};
                   });
}

// ---- small device reads (data-dependent sizes and input checks)

template <class T>
std::vector<T> fetch(engine::Ref v) {
  std::vector<T> out(shlo::numel(v.type().shape));
  if (!out.empty()) guarded("reading a value back", [&] { engine::to_host(v, out.data(), out.size() * sizeof(T)); });
  return out;
}

// ---- reductions

std::vector<int64_t> reduce_dims(const at::Tensor& self, at::OptionalIntArrayRef dim) {
  std::vector<int64_t> d;
  int64_t r = self.dim();
  if (r == 0) {
    if (dim.has_value())
      for (int64_t x : *dim) c10::maybe_wrap_dim(x, r);
    return d;
  }
  if (!dim.has_value() || dim->empty()) {
    for (int64_t i = 0; i < r; ++i) d.push_back(i);
    return d;
  }
  for (int64_t x : *dim) d.push_back(c10::maybe_wrap_dim(x, r));
  std::sort(d.begin(), d.end());
  for (size_t i = 1; i < d.size(); ++i)
    TORCH_CHECK(d[i] != d[i - 1], "dim ", d[i], " appears multiple times in the list of dims");
  return d;
}

using MSum = at::meta::structured_sum_dim_IntList;

void nansum_into(const at::Tensor& out, const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  TORCH_CHECK(!c10::isComplexType(self.scalar_type()), "nansum does not support complex inputs");
  std::vector<int64_t> dims = reduce_dims(self, dim);
  shlo::DType o = to_shlo(out.scalar_type());
  write(out, legacy_op("nansum" + ints(dims) + (keepdim ? "k>" : ">") + shlo::dtype_name(o), {read(self)}, type_of(out),
                       [=](Builder& b, const Vals& in) { return Vals{ops::nansum(b, in[0], dims, keepdim, o)}; }));
}

}  // namespace

namespace cov {

at::Tensor _fft_c2c(const at::Tensor& self, c10::SymIntArrayRef dim, int64_t normalization, bool forward) {
  return wrap(fft_c2c_ref(self, C10_AS_INTARRAYREF_SLOW(dim), normalization, forward), self.device());
}
at::Tensor& _fft_c2c_out(const at::Tensor& self, c10::SymIntArrayRef dim, int64_t normalization, bool forward,
                         at::Tensor& out) {
  return store_out(out, fft_c2c_ref(self, C10_AS_INTARRAYREF_SLOW(dim), normalization, forward));
}
at::Tensor _fft_r2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, bool onesided) {
  return wrap(fft_r2c_ref(self, dim, normalization, onesided), self.device());
}
at::Tensor& _fft_r2c_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, bool onesided,
                         at::Tensor& out) {
  return store_out(out, fft_r2c_ref(self, dim, normalization, onesided));
}
at::Tensor _fft_c2r(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, c10::SymInt last_dim_size) {
  return wrap(fft_c2r_ref(self, dim, normalization, last_dim_size.expect_int()), self.device());
}
at::Tensor& _fft_c2r_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, c10::SymInt last_dim_size,
                         at::Tensor& out) {
  return store_out(out, fft_c2r_ref(self, dim, normalization, last_dim_size.expect_int()));
}

}  // namespace cov

namespace {

void check_floating(const char* op, at::ScalarType t) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t), "\"", op, "\" not implemented for '", at::toString(t), "'");
}

// A Scalar argument as the 0-d wrapped-number tensor ATen's composites pass.
at::Tensor scalar_operand(const at::Scalar& s) {
  at::Tensor t = c10::scalar_to_tensor(s);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

// ---- index_reduce

template <class M>
void index_reduce_impl(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                       const at::Tensor& source, c10::string_view reduce, bool include_self) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  check_index_bounds(index, 0, size, [](int64_t) { TORCH_CHECK_INDEX(false, "index out of range in self"); });
  if (out.numel() == 0) return;
  std::string r(reduce);
  write(out, legacy_op("index_reduce:" + std::to_string(dim) + r + (include_self ? "+" : "-"),
                       {read(self), read(index), read(source)}, type_of(out), [=](Builder& b, const Vals& in) {
                         Value x = in[0], idx = in[1], src = in[2];
                         bool scalar = x.rank() == 0;
                         if (scalar) {  // a 0-d self indexes like a 1-element vector
                           x = b.reshape(x, {1});
                           src = b.reshape(src, {shlo::numel(src.shape())});
                         }
                         if (idx.rank() == 0) idx = b.reshape(idx, {1});
                         Value res = ops::index_reduce(b, x, dim, idx, src, r, include_self);
                         return Vals{scalar ? b.reshape(res, {}) : res};
                       }));
}
using MIndexReduce = at::meta::structured_index_reduce;

std::vector<int64_t> broadcast_shape(const at::Tensor& a, const at::Tensor& b) {
  auto s = at::infer_size_dimvector(a.sizes(), b.sizes());
  return std::vector<int64_t>(s.begin(), s.end());
}

// ---- linalg_cross / renorm

template <class M>
void cross_impl(M&, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other, int64_t dim) {
  TORCH_CHECK(self.scalar_type() == other.scalar_type(),
              "linalg.cross: expected input and other to have the same "
              "dtype, but got ",
              self.scalar_type(), " and ", other.scalar_type());
  int64_t d = at::maybe_wrap_dim(dim, static_cast<int64_t>(out.dim()));
  shlo::Shape shape = shape_of(out.sizes());
  shlo::DType t = to_shlo(out.scalar_type());
  write(out, legacy_op("cross:" + std::to_string(d), {read_as(self, t), read_as(other, t)}, type_of(out),
                       [d, shape](Builder& b, const Vals& in) {
                         return Vals{ops::cross(b, b.broadcast_to(in[0], shape), b.broadcast_to(in[1], shape), d)};
                       }));
}
using MCross = at::meta::structured_linalg_cross;

template <class M>
void renorm_impl(M&, const at::Tensor& out, const at::Tensor& self, const at::Scalar& p, int64_t dim,
                 const at::Scalar& maxnorm) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  double pv = p.toDouble();
  int kind = pv == 0 ? 1 : pv == 1 ? 2 : pv == 2 ? 3 : std::isinf(pv) ? (pv > 0 ? 4 : 5) : 0;
  if (out.numel() == 0) return;
  shlo::DType acc = self.scalar_type() == at::kDouble ? shlo::DType::F64 : shlo::DType::F32;
  write(out, legacy_op("renorm:" + std::to_string(dim) + ":" + std::to_string(kind),
                       {read(self), scalar_of(p, acc), scalar_of(maxnorm, acc)}, type_of(out),
                       [dim, kind](Builder& b, const Vals& in) {
                         return Vals{ops::renorm(b, in[0], in[1], dim, in[2], kind)};
                       }));
}
using MRenorm = at::meta::structured_renorm;

// ---- searchsorted / bucketize

at::Tensor search_impl(const at::Tensor& boundaries, const at::Tensor& values, bool out_int32, bool right,
                       std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter,
                       const at::Tensor* out_arg, const char* name) {
  if (side.has_value()) {
    TORCH_CHECK(*side == "left" || *side == "right",
                "torch.searchsorted(): side can only be 'left' or 'right' "
                "but got ",
                *side);
    TORCH_CHECK(!right || *side == "right",
                "torch.searchsorted(): side and right can't be set to opposites, "
                "got side of ",
                *side, " while right was True");
    right = *side == "right";
  }
  TORCH_CHECK(boundaries.dim() >= 1, name,
              "(): boundaries tensor should be 1 dimension or the first N-1 "
              "dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor ",
              boundaries.sizes(), " and input value tensor ", values.sizes());
  if (boundaries.dim() > 1) {
    bool ok = values.dim() == boundaries.dim() &&
              boundaries.sizes().slice(0, boundaries.dim() - 1) == values.sizes().slice(0, values.dim() - 1);
    TORCH_CHECK(ok, name,
                "(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
                "tensor and input value tensor must match, but we got boundaries tensor ",
                boundaries.sizes(), " and input value tensor ", values.sizes());
  }
  bool has_sorter = sorter.has_value() && sorter->defined();
  if (has_sorter) {
    TORCH_CHECK(sorter->scalar_type() == at::kLong, name, "(): sorter must be a tensor of long dtype but got dtype ",
                sorter->scalar_type());
    TORCH_CHECK(sorter->sizes() == boundaries.sizes(), name,
                "(): boundary and sorter must have the same size, but "
                "got boundary tensor ",
                boundaries.sizes(), "and got sorter tensor ", sorter->sizes());
    int64_t n = boundaries.size(-1);
    check_index_bounds(*sorter, 0, n, [name](int64_t) { TORCH_CHECK(false, name, "(): sorter index out of range"); });
  }
  at::ScalarType common = at::result_type(boundaries, values);
  at::ScalarType odt = out_int32 ? at::kInt : at::kLong;
  at::Tensor out;
  if (out_arg) {
    out = *out_arg;
    TORCH_CHECK(out.scalar_type() == odt, name,
                "(): output tensor's dtype is wrong, it can only be Int(int32) or "
                "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype ",
                out.scalar_type(), " and out_int32 flag is ", (out_int32 ? "True" : "False"));
    at::native::resize_output(out, values.sizes());
  } else {
    out = empty(values.sizes(), odt, common_device({&boundaries, &values}));
  }
  if (out.numel() == 0) return out;
  shlo::DType c = to_shlo(common), o = to_shlo(odt);
  std::vector<engine::Ref> in{read_as(boundaries, c), read_as(values, c)};
  if (has_sorter) in.push_back(read(*sorter));
  int64_t last = boundaries.dim() - 1;
  write(out,
        legacy_op(std::string("searchsorted") + (right ? "R" : "L") + (has_sorter ? "s>" : ">") + shlo::dtype_name(o),
                  in, type_of(out), [=](Builder& b, const Vals& v) {
                    Value bd = v[0];
                    if (has_sorter) bd = ops::gather_dim(b, bd, last, v[2]);
                    return Vals{ops::search_sorted(b, bd, v[1], right, o)};
                  }));
  return out;
}

// ---- max_unpool

engine::Ref max_unpool_ref(const at::Tensor& self, const at::Tensor& indices, at::IntArrayRef output_size,
                           size_t spatial, const char* name) {
  int64_t dims = static_cast<int64_t>(spatial);
  TORCH_CHECK(indices.scalar_type() == at::kLong,
              "elements in indices should be type int64 but got: ", indices.scalar_type());
  TORCH_CHECK(output_size.size() == spatial, "There should be exactly ", spatial,
              " elements (height, width) in output_size, but got ", output_size.size(), " elements.");
  TORCH_CHECK(self.dim() == dims + 1 || self.dim() == dims + 2, "Input to ", name, " should be a ", dims + 1, "d or ",
              dims + 2, "d Tensor, but got a tensor with ", self.dim(), " dimensions.");
  TORCH_CHECK(self.sizes() == indices.sizes(), "Expected shape of indices to be same as that of the input tensor (",
              self.sizes(), ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < self.dim(); ++i)
    TORCH_CHECK(self.size(i) > 0, name, "(): Expected input to have non-zero size for non-batch dimensions, but got ",
                self.sizes(), " with dimension ", i, " being empty.");
  int64_t plane = 1;
  for (int64_t s : output_size) plane *= s;
  // Device indices are checked later (at the next host read): capture by value.
  std::string volume = c10::Join("x", output_size);
  check_index_bounds(indices, 0, plane, [volume](int64_t v) {
    TORCH_CHECK(false, "Found an invalid max index: ", v, " (output volumes are of size ", volume, ")");
  });
  bool batched = self.dim() == dims + 2;
  shlo::Type t = type_of(self);
  std::vector<int64_t> lead(self.sizes().begin(), self.sizes().end() - dims);
  if (!batched) lead.insert(lead.begin(), 1);
  std::vector<int64_t> in_shape = lead;
  in_shape.insert(in_shape.end(), self.sizes().end() - dims, self.sizes().end());
  shlo::Shape out_spatial(output_size.begin(), output_size.end());
  t.shape.assign(lead.begin() + (batched ? 0 : 1), lead.end());
  t.shape.insert(t.shape.end(), out_spatial.begin(), out_spatial.end());
  shlo::Shape final_shape = t.shape;
  return legacy_op("max_unpool" + ints(output_size), {read(self), read(indices)}, t, [=](Builder& b, const Vals& in) {
    Value x = b.reshape(in[0], in_shape), idx = b.reshape(in[1], in_shape);
    return Vals{b.reshape(ops::max_unpool(b, x, idx, out_spatial), final_shape)};
  });
}

// ---- losses

std::vector<int64_t> loss_out_shape(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  TORCH_CHECK(reduction >= 0 && reduction <= 2, "invalid reduction: ", reduction);
  if (reduction != 0) return {};
  return broadcast_shape(self, target);
}

engine::Ref robust_loss_ref(const at::Tensor& self, const at::Tensor& target, int64_t reduction, int kind,
                            double param) {
  TORCH_CHECK(!self.is_complex(), kind == 0 ? "huber_loss" : "smooth_l1_loss", " does not support complex inputs");
  std::vector<int64_t> shape = broadcast_shape(self, target);
  shlo::DType t = to_shlo(at::result_type(self, target));
  shlo::Type ot{t, shape_of(loss_out_shape(self, target, reduction))};
  shlo::Shape bs = shape_of(shape);
  return legacy_op(
      "robust_loss:" + std::to_string(kind) + ":" + std::to_string(reduction) + ":" + std::to_string(param),
      {read_as(self, t), read_as(target, t)}, ot, [=](Builder& b, const Vals& in) {
        return Vals{ops::robust_loss(b, b.broadcast_to(in[0], bs), b.broadcast_to(in[1], bs), kind, param, reduction)};
      });
}

engine::Ref robust_loss_backward_ref(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                     int64_t reduction, int kind, double param) {
  std::vector<int64_t> shape = broadcast_shape(self, target);
  TORCH_CHECK(at::IntArrayRef(shape) == self.sizes(), "loss backward: target of shape ", target.sizes(),
              " broadcasts beyond the input's shape ", self.sizes());
  shlo::DType t = to_shlo(self.scalar_type());
  shlo::Shape bs = shape_of(shape);
  return legacy_op(
      "robust_loss_backward:" + std::to_string(kind) + ":" + std::to_string(reduction) + ":" + std::to_string(param),
      {read_as(grad, t), read(self), read_as(target, t)}, type_of(self), [=](Builder& b, const Vals& in) {
        return Vals{ops::robust_loss_backward(b, in[0], in[1], b.broadcast_to(in[2], bs), kind, param, reduction)};
      });
}

// The CPU loop checks input then target at each element in turn and
// reports the first failure; answered by the device at the next host read.
void check_unit_range(const at::Tensor& self, const at::Tensor& target) {
  int64_t n = self.numel();
  if (n == 0) return;
  shlo::DType t = to_shlo(self.scalar_type());
  engine::Ref first = legacy_op(
      "bce_unit_range", {read(self), read_as(target, t), scalar_of(0, t), scalar_of(1, t)},
      shlo::Type{shlo::DType::S64, {2}}, [](Builder& b, const Vals& in) {
        return Vals{b.concatenate(
            {ops::first_outside_closed(b, in[0], in[2], in[3]), ops::first_outside_closed(b, in[1], in[2], in[3])}, 0)};
      });
  engine::defer_check(first, [n](const std::vector<int64_t>& at) {
    TORCH_CHECK(at[0] == n || at[0] > at[1], "all elements of input should be between 0 and 1");
    TORCH_CHECK(at[1] == n, "all elements of target should be between 0 and 1");
  });
}

engine::Ref bce_ref(const std::optional<at::Tensor>& grad, const at::Tensor& self, const at::Tensor& target,
                    const std::optional<at::Tensor>& weight, int64_t reduction) {
  TORCH_CHECK(reduction >= 0 && reduction <= 2, "invalid reduction: ", reduction);
  TORCH_CHECK(self.sizes() == target.sizes(), "Using a target size (", target.sizes(),
              ") that is different to the "
              "input size (",
              self.sizes(), ") is deprecated. Please ensure they have the same size.");
  check_floating("binary_cross_entropy", self.scalar_type());
  bool has_w = weight.has_value() && weight->defined();
  if (has_w) (void)at::infer_size(weight->sizes(), self.sizes());
  if (!grad) check_unit_range(self, target);
  shlo::DType t = to_shlo(self.scalar_type());
  std::vector<engine::Ref> in{read(self), read_as(target, t)};
  if (has_w) in.push_back(read_as(*weight, t));
  if (grad) in.push_back(read_as(*grad, t));
  bool backward = grad.has_value();
  shlo::Type ot = backward || reduction == 0 ? type_of(self) : shlo::Type{t, {}};
  shlo::Shape xs = shape_of(self.sizes());
  return legacy_op(std::string(backward ? "bce_backward:" : "bce:") + std::to_string(reduction) + (has_w ? "w" : ""),
                   in, ot, [=](Builder& b, const Vals& v) {
                     std::optional<Value> w;
                     if (has_w) w = v[2];
                     if (!backward) return Vals{ops::binary_cross_entropy(b, v[0], v[1], w, reduction)};
                     return Vals{ops::binary_cross_entropy_backward(b, v.back(), v[0], v[1], w, reduction)};
                   });
}

}  // namespace

namespace cov {

// ---- nansum, equal, trace
at::Tensor nansum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType> dtype) {
  Structured<MSum> m;
  m.meta(self, dim, keepdim, dtype);
  nansum_into(m.outs[0], self, dim, keepdim);
  return m.outs[0];
}
at::Tensor& nansum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype, at::Tensor& out) {
  Structured<MSum> m({out});
  m.meta(self, dim, keepdim, dtype);
  nansum_into(out, self, dim, keepdim);
  return out;
}

bool equal(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.device() == other.device(), "Cannot compare two tensors on different devices. Got: ", self.device(),
              " and ", other.device());
  if (self.sizes() != other.sizes()) return false;
  if (self.numel() == 0) return true;
  shlo::DType c = to_shlo(at::result_type(self, other));
  engine::Ref r = legacy_op("equal", {read_as(self, c), read_as(other, c)}, shlo::Type{shlo::DType::PRED, {}},
                            [](Builder& b, const Vals& in) { return Vals{ops::all_equal(b, in[0], in[1])}; });
  return fetch<uint8_t>(r)[0];
}

at::Tensor trace(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  at::ScalarType ot = at::isIntegralType(self.scalar_type(), true) ? at::kLong : self.scalar_type();
  shlo::DType o = to_shlo(ot);
  return wrap(legacy_op("trace", {read(self)}, shlo::Type{o, {}},
                        [o](Builder& b, const Vals& in) { return Vals{ops::trace(b, in[0], o)}; }),
              self.device());
}

// ---- cummax / cummin
void _cummax_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  int64_t d = self.dim() == 0 ? 0 : dim;
  legacy_write_all({values, indices}, "cummax:" + std::to_string(d), {read(self)}, [d](Builder& b, const Vals& in) {
    auto [v, i] = ops::cum_extreme(b, in[0], d, true);
    return Vals{v, i};
  });
}
void _cummin_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  int64_t d = self.dim() == 0 ? 0 : dim;
  legacy_write_all({values, indices}, "cummin:" + std::to_string(d), {read(self)}, [d](Builder& b, const Vals& in) {
    auto [v, i] = ops::cum_extreme(b, in[0], d, false);
    return Vals{v, i};
  });
}

// ---- index_reduce
at::Tensor index_reduce(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                        c10::string_view reduce, bool include_self) {
  return functional<MIndexReduce>(index_reduce_impl<Structured<MIndexReduce>>, s, dim, i, src, reduce, include_self);
}
at::Tensor& index_reduce_(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                          c10::string_view reduce, bool include_self) {
  return inplace<MIndexReduce>(s, index_reduce_impl<Structured<MIndexReduce>>, dim, i, src, reduce, include_self);
}
at::Tensor& index_reduce_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                             c10::string_view reduce, bool include_self, at::Tensor& out) {
  return out_variant<MIndexReduce>(out, index_reduce_impl<Structured<MIndexReduce>>, s, dim, i, src, reduce,
                                   include_self);
}

// ---- linalg_cross, renorm
at::Tensor linalg_cross(const at::Tensor& a, const at::Tensor& b, int64_t dim) {
  return functional<MCross>(cross_impl<Structured<MCross>>, a, b, dim);
}
at::Tensor& linalg_cross_out(const at::Tensor& a, const at::Tensor& b, int64_t dim, at::Tensor& out) {
  return out_variant<MCross>(out, cross_impl<Structured<MCross>>, a, b, dim);
}
at::Tensor renorm(const at::Tensor& s, const at::Scalar& p, int64_t dim, const at::Scalar& maxnorm) {
  return functional<MRenorm>(renorm_impl<Structured<MRenorm>>, s, p, dim, maxnorm);
}
at::Tensor& renorm_(at::Tensor& s, const at::Scalar& p, int64_t dim, const at::Scalar& maxnorm) {
  return inplace<MRenorm>(s, renorm_impl<Structured<MRenorm>>, p, dim, maxnorm);
}
at::Tensor& renorm_out(const at::Tensor& s, const at::Scalar& p, int64_t dim, const at::Scalar& maxnorm,
                       at::Tensor& out) {
  return out_variant<MRenorm>(out, renorm_impl<Structured<MRenorm>>, s, p, dim, maxnorm);
}

// ---- searchsorted, bucketize
at::Tensor searchsorted_Tensor(const at::Tensor& seq, const at::Tensor& self, bool out_int32, bool right,
                               std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter) {
  return search_impl(seq, self, out_int32, right, side, sorter, nullptr, "torch.searchsorted");
}
at::Tensor& searchsorted_Tensor_out(const at::Tensor& seq, const at::Tensor& self, bool out_int32, bool right,
                                    std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter,
                                    at::Tensor& out) {
  search_impl(seq, self, out_int32, right, side, sorter, &out, "torch.searchsorted");
  return out;
}
at::Tensor searchsorted_Scalar(const at::Tensor& seq, const at::Scalar& self, bool out_int32, bool right,
                               std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter) {
  TORCH_CHECK(seq.dim() == 1,
              "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
              "dimension is 1, but we got boundaries tensor dim(",
              seq.dim(), ") and input value's dim(0) numel(1)");
  return search_impl(seq, scalar_operand(self), out_int32, right, side, sorter, nullptr, "torch.searchsorted");
}
at::Tensor& searchsorted_Scalar_out(const at::Tensor& seq, const at::Scalar& self, bool out_int32, bool right,
                                    std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter,
                                    at::Tensor& out) {
  search_impl(seq, scalar_operand(self), out_int32, right, side, sorter, &out, "torch.searchsorted");
  return out;
}
at::Tensor bucketize_Tensor(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32, bool right) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return search_impl(boundaries, self, out_int32, right, std::nullopt, std::nullopt, nullptr, "torch.bucketize");
}
at::Tensor& bucketize_Tensor_out(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32, bool right,
                                 at::Tensor& out) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  search_impl(boundaries, self, out_int32, right, std::nullopt, std::nullopt, &out, "torch.bucketize");
  return out;
}
at::Tensor bucketize_Scalar(const at::Scalar& self, const at::Tensor& boundaries, bool out_int32, bool right) {
  return bucketize_Tensor(scalar_operand(self), boundaries, out_int32, right);
}

// ---- bincount (histc is in kernels_models.cc)
at::Tensor bincount(const at::Tensor& self, const std::optional<at::Tensor>& weights, c10::SymInt minlength_s) {
  int64_t minlength = minlength_s.expect_int();
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  TORCH_CHECK(self.dim() == 1 && at::isIntegralType(self.scalar_type(), false),
              "bincount only supports 1-d non-negative integral inputs.");
  bool has_w = weights.has_value() && weights->defined();
  if (has_w)
    TORCH_CHECK(weights->dim() == 1 && weights->size(0) == self.size(0),
                "weights should be 1-d and have the same length as input");
  at::ScalarType ot = !has_w ? at::kLong : weights->scalar_type() == at::kFloat ? at::kFloat : at::kDouble;
  int64_t length = minlength;
  if (self.numel() > 0) {
    // The output length depends on the data: one read of [min, max].
    engine::Ref mm =
        legacy_op("bincount_range", {read(self)}, shlo::Type{shlo::DType::S64, {2}}, [](Builder& b, const Vals& in) {
          Value f = b.convert(in[0], shlo::DType::S64);
          Value lo = b.reshape(b.reduce(f, b.highest(shlo::DType::S64), {0}, "minimum"), {1});
          Value hi = b.reshape(b.reduce(f, b.lowest(shlo::DType::S64), {0}, "maximum"), {1});
          return Vals{b.concatenate({lo, hi}, 0)};
        });
    std::vector<int64_t> r = fetch<int64_t>(mm);
    TORCH_CHECK(r[0] >= 0, "bincount only supports 1-d non-negative integral inputs.");
    length = std::max(length, r[1] + 1);
  }
  at::Tensor out = empty({length}, ot, self.device());
  if (length == 0) return out;
  shlo::DType o = to_shlo(ot);
  std::vector<engine::Ref> in{read(self)};
  if (has_w) in.push_back(read(*weights));
  write(out, legacy_op("bincount:" + std::to_string(length) + (has_w ? "w" : ""), in, shlo::Type{o, {length}},
                       [=](Builder& b, const Vals& v) {
                         std::optional<Value> w;
                         if (has_w) w = v[1];
                         return Vals{ops::bincount(b, v[0], w, length, o)};
                       }));
  return out;
}

// ---- max_unpool
at::Tensor max_unpool2d(const at::Tensor& self, const at::Tensor& indices, c10::SymIntArrayRef output_size) {
  return wrap(max_unpool_ref(self, indices, C10_AS_INTARRAYREF_SLOW(output_size), 2, "max_unpool2d"), self.device());
}
at::Tensor& max_unpool2d_out(const at::Tensor& self, const at::Tensor& indices, c10::SymIntArrayRef output_size,
                             at::Tensor& out) {
  return store_out(out, max_unpool_ref(self, indices, C10_AS_INTARRAYREF_SLOW(output_size), 2, "max_unpool2d"));
}
at::Tensor max_unpool3d(const at::Tensor& self, const at::Tensor& indices, c10::SymIntArrayRef output_size,
                        at::IntArrayRef stride, at::IntArrayRef padding) {
  TORCH_CHECK(stride.size() == 3 && padding.size() == 3, "max_unpool3d: stride and padding must have 3 elements");
  return wrap(max_unpool_ref(self, indices, C10_AS_INTARRAYREF_SLOW(output_size), 3, "max_unpool3d"), self.device());
}
at::Tensor& max_unpool3d_out(const at::Tensor& self, const at::Tensor& indices, c10::SymIntArrayRef output_size,
                             at::IntArrayRef stride, at::IntArrayRef padding, at::Tensor& out) {
  TORCH_CHECK(stride.size() == 3 && padding.size() == 3, "max_unpool3d: stride and padding must have 3 elements");
  return store_out(out, max_unpool_ref(self, indices, C10_AS_INTARRAYREF_SLOW(output_size), 3, "max_unpool3d"));
}

// ---- losses
at::Tensor huber_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double delta) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  return wrap(robust_loss_ref(self, target, reduction, 0, delta), self.device());
}
at::Tensor& huber_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double delta,
                           at::Tensor& out) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  return store_out(out, robust_loss_ref(self, target, reduction, 0, delta));
}
at::Tensor huber_loss_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                               int64_t reduction, double delta) {
  return wrap(robust_loss_backward_ref(grad, self, target, reduction, 0, delta), self.device());
}
at::Tensor& huber_loss_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                    int64_t reduction, double delta, at::Tensor& grad_input) {
  return store_out(grad_input, robust_loss_backward_ref(grad, self, target, reduction, 0, delta));
}
at::Tensor smooth_l1_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double beta) {
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  return wrap(robust_loss_ref(self, target, reduction, 1, beta), self.device());
}
at::Tensor& smooth_l1_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double beta,
                               at::Tensor& out) {
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  return store_out(out, robust_loss_ref(self, target, reduction, 1, beta));
}
at::Tensor smooth_l1_loss_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                   int64_t reduction, double beta) {
  return wrap(robust_loss_backward_ref(grad, self, target, reduction, 1, beta), self.device());
}
at::Tensor& smooth_l1_loss_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                        int64_t reduction, double beta, at::Tensor& grad_input) {
  return store_out(grad_input, robust_loss_backward_ref(grad, self, target, reduction, 1, beta));
}
at::Tensor binary_cross_entropy(const at::Tensor& self, const at::Tensor& target,
                                const std::optional<at::Tensor>& weight, int64_t reduction) {
  return wrap(bce_ref(std::nullopt, self, target, weight, reduction), self.device());
}
at::Tensor& binary_cross_entropy_out(const at::Tensor& self, const at::Tensor& target,
                                     const std::optional<at::Tensor>& weight, int64_t reduction, at::Tensor& out) {
  return store_out(out, bce_ref(std::nullopt, self, target, weight, reduction));
}
at::Tensor binary_cross_entropy_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                         const std::optional<at::Tensor>& weight, int64_t reduction) {
  return wrap(bce_ref(grad, self, target, weight, reduction), self.device());
}
at::Tensor& binary_cross_entropy_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                              const std::optional<at::Tensor>& weight, int64_t reduction,
                                              at::Tensor& grad_input) {
  return store_out(grad_input, bce_ref(grad, self, target, weight, reduction));
}

}  // namespace cov

}  // namespace tpu
