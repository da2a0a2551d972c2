// Kernels added to raise OpInfo conformance (the `coverage` branch): ops that
// used to run through the CPU fallback. Lowerings live in ops/coverage.h.
#include <ATen/ExpandUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/bitwise_left_shift_meta.h>
#include <ATen/ops/bitwise_right_shift_meta.h>
#include <ATen/ops/gcd_meta.h>
#include <ATen/ops/glu_meta.h>
#include <ATen/ops/index_reduce_meta.h>
#include <ATen/ops/lcm_meta.h>
#include <ATen/ops/nextafter_meta.h>
#include <ATen/ops/renorm_meta.h>
#include <ATen/ops/smooth_l1_loss_meta.h>
#include <ATen/ops/special_xlog1py_meta.h>
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

// ---- conjugation

engine::Ref conj_ref(const at::Tensor& self) {
  engine::Ref v = read(self);
  if (!self.is_complex()) return v;
  return legacy_op("conj_physical", {v}, type_of(self),
                   [](Builder& b, const Vals& in) { return Vals{ops::conj(b, in[0])}; });
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

at::Tensor conj_physical(const at::Tensor& self) { return wrap(conj_ref(self), self.device()); }
at::Tensor& conj_physical_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "conj_physical: expected out dtype ", self.scalar_type(),
              ", got ", out.scalar_type());
  return store_out(out, conj_ref(self));
}
at::Tensor& conj_physical_(at::Tensor& self) {
  if (self.is_complex()) write(self, conj_ref(self));
  return self;
}

}  // namespace cov

namespace {

// ---- pointwise ops over a TensorIterator meta's broadcast inputs in its common dtype

using Fn2 = std::function<Value(Builder&, Value, Value)>;

template <class M>
void binary_into(M& m, const at::Tensor& out, const char* key, const at::Tensor& a, const at::Tensor& b, Fn2 fn) {
  legacy_pointwise(out, key, {a, b}, to_shlo(m.common_dtype()), {},
                   [fn](Builder& bb, const Vals& v) { return fn(bb, v[0], v[1]); });
}

void check_integral(const char* op, at::ScalarType t, bool allow_bool = false) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isIntegralType(t, allow_bool), "\"", op, "\" not implemented for '", at::toString(t),
                              "'");
}
void check_floating(const char* op, at::ScalarType t) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(t), "\"", op, "\" not implemented for '", at::toString(t), "'");
}

template <class M>
struct Gcd {
  bool is_lcm;
  void operator()(M& m, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) const {
    check_integral(is_lcm ? "lcm_tpu" : "gcd_tpu", m.common_dtype());
    binary_into(m, out, is_lcm ? "lcm" : "gcd", a, b, is_lcm ? Fn2(ops::lcm) : Fn2(ops::gcd));
  }
};

template <class M>
struct Shift {
  bool left;
  void operator()(M& m, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) const {
    check_integral(left ? "lshift_tpu" : "rshift_tpu", m.common_dtype());
    binary_into(m, out, left ? "shift_left" : "shift_right", a, b, left ? Fn2(ops::shift_left) : Fn2(ops::shift_right));
  }
};

template <class M>
void nextafter_impl(M& m, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  check_floating("nextafter_tpu", m.common_dtype());
  binary_into(m, out, "nextafter", a, b, ops::nextafter);
}

template <class M>
void xlog1py_impl(M& m, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  binary_into(m, out, "xlog1py", a, b, ops::xlog1py);
}

// The TensorIterator used by the __lshift__ / __rshift__ family (same as the shift metas).
struct ShiftMeta : at::TensorIteratorBase {
  void meta(const at::Tensor& a, const at::Tensor& b) { build_borrowing_binary_op(maybe_get_output(), a, b); }
};

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

// ---- glu

template <class M>
void glu_impl(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim) {
  check_floating("glu", self.scalar_type());
  dim = at::maybe_wrap_dim(dim, self.dim());
  write(out, legacy_op("glu:" + std::to_string(dim), {read(self)}, type_of(out),
                       [dim](Builder& b, const Vals& in) { return Vals{ops::glu(b, in[0], dim)}; }));
}
using MGlu = at::meta::structured_glu;

engine::Ref glu_backward_ref(const at::Tensor& grad, const at::Tensor& self, int64_t dim) {
  TORCH_CHECK(self.dim() > 0, "glu does not support 0-dimensional tensors");
  dim = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(self.size(dim) % 2 == 0, "Halving dimension must be even, but dimension ", dim, " is size ",
              self.size(dim));
  std::vector<int64_t> half(self.sizes().begin(), self.sizes().end());
  half[dim] /= 2;
  TORCH_CHECK(grad.sizes() == at::IntArrayRef(half), "glu_backward: grad_output of shape ", grad.sizes(),
              " does not match the halved input shape ", at::IntArrayRef(half));
  shlo::DType t = to_shlo(self.scalar_type());
  return legacy_op("glu_backward:" + std::to_string(dim), {read_as(grad, t), read(self)}, type_of(self),
                   [dim](Builder& b, const Vals& in) { return Vals{ops::glu_backward(b, in[0], in[1], dim)}; });
}

std::vector<int64_t> broadcast_shape(const at::Tensor& a, const at::Tensor& b) {
  auto s = at::infer_size_dimvector(a.sizes(), b.sizes());
  return std::vector<int64_t>(s.begin(), s.end());
}

// ---- linalg_cross / renorm

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

// ---- glu
at::Tensor glu(const at::Tensor& self, int64_t dim) { return functional<MGlu>(glu_impl<Structured<MGlu>>, self, dim); }
at::Tensor& glu_out(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  return out_variant<MGlu>(out, glu_impl<Structured<MGlu>>, self, dim);
}
at::Tensor glu_backward(const at::Tensor& grad, const at::Tensor& self, int64_t dim) {
  return wrap(glu_backward_ref(grad, self, dim), self.device());
}
at::Tensor& glu_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, int64_t dim,
                                    at::Tensor& grad_input) {
  return store_out(grad_input, glu_backward_ref(grad, self, dim));
}

// ---- gcd, lcm, shifts, nextafter, xlog1py
#define COV_BINARY(name, Meta, Impl)                                                                 \
  at::Tensor name(const at::Tensor& a, const at::Tensor& b) { return functional<Meta>(Impl, a, b); } \
  at::Tensor& name##_(at::Tensor& a, const at::Tensor& b) { return inplace<Meta>(a, Impl, b); }      \
  at::Tensor& name##_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {                \
    return out_variant<Meta>(out, Impl, a, b);                                                       \
  }
using MGcd = at::meta::structured_gcd;
using MLcm = at::meta::structured_lcm;
using MShl = at::meta::structured_bitwise_left_shift_Tensor;
using MShr = at::meta::structured_bitwise_right_shift_Tensor;
using MNextafter = at::meta::structured_nextafter;
using MXlog1py = at::meta::structured_special_xlog1py;
COV_BINARY(gcd, MGcd, Gcd<Structured<MGcd>>{false})
COV_BINARY(lcm, MLcm, Gcd<Structured<MLcm>>{true})
COV_BINARY(bitwise_left_shift, MShl, Shift<Structured<MShl>>{true})
COV_BINARY(bitwise_right_shift, MShr, Shift<Structured<MShr>>{false})
COV_BINARY(nextafter, MNextafter, nextafter_impl<Structured<MNextafter>>)
#undef COV_BINARY
at::Tensor special_xlog1py(const at::Tensor& a, const at::Tensor& b) {
  return functional<MXlog1py>(xlog1py_impl<Structured<MXlog1py>>, a, b);
}
at::Tensor& special_xlog1py_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return out_variant<MXlog1py>(out, xlog1py_impl<Structured<MXlog1py>>, a, b);
}

at::Tensor lshift_Tensor(const at::Tensor& a, const at::Tensor& b) {
  return functional<ShiftMeta>(Shift<Structured<ShiftMeta>>{true}, a, b);
}
at::Tensor lshift_Scalar(const at::Tensor& a, const at::Scalar& b) { return lshift_Tensor(a, scalar_operand(b)); }
at::Tensor& ilshift_Tensor(at::Tensor& a, const at::Tensor& b) {
  return inplace<ShiftMeta>(a, Shift<Structured<ShiftMeta>>{true}, b);
}
at::Tensor& ilshift_Scalar(at::Tensor& a, const at::Scalar& b) { return ilshift_Tensor(a, scalar_operand(b)); }
at::Tensor rshift_Tensor(const at::Tensor& a, const at::Tensor& b) {
  return functional<ShiftMeta>(Shift<Structured<ShiftMeta>>{false}, a, b);
}
at::Tensor rshift_Scalar(const at::Tensor& a, const at::Scalar& b) { return rshift_Tensor(a, scalar_operand(b)); }
at::Tensor& irshift_Tensor(at::Tensor& a, const at::Tensor& b) {
  return inplace<ShiftMeta>(a, Shift<Structured<ShiftMeta>>{false}, b);
}
at::Tensor& irshift_Scalar(at::Tensor& a, const at::Scalar& b) { return irshift_Tensor(a, scalar_operand(b)); }

// ---- linalg_cross, renorm
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
