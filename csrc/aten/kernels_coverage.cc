// Kernels added to raise OpInfo conformance (the `coverage` branch): ops that
// used to run through the CPU fallback. Lowerings live in ops/coverage.h.
#include <ATen/ExpandUtils.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/bitwise_left_shift_meta.h>
#include <ATen/ops/bitwise_right_shift_meta.h>
#include <ATen/ops/gcd_meta.h>
#include <ATen/ops/glu_meta.h>
#include <ATen/ops/lcm_meta.h>
#include <ATen/ops/nextafter_meta.h>
#include <ATen/ops/special_xlog1py_meta.h>

#include <cmath>

#include "aten/errors.h"
#include "aten/index_bounds.h"
#include "aten/kernels.h"
#include "aten/structured.h"
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

}  // namespace

namespace cov {

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

}  // namespace cov

}  // namespace tpu
