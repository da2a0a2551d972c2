// The elementwise family's ops of a tensor and two more operands: clamp
// (clamp_min / clamp_max), where, masked_fill, lerp, addcmul / addcdiv: ATen
// entry points and their registration.
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/addcdiv_meta.h>
#include <ATen/ops/addcmul_meta.h>
#include <ATen/ops/clamp_max_meta.h>
#include <ATen/ops/clamp_meta.h>
#include <ATen/ops/clamp_min_meta.h>
#include <ATen/ops/lerp_meta.h>

#include "aten/library.h"
#include "ops/common/aten_common.h"
#include "ops/elementwise/aten_pointwise.h"
#include "ops/elementwise/elementwise.h"

namespace tpu::ew {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

// ---- clamp: Scalar bounds are scalar operands, Tensor bounds broadcast inputs.

// The bounds present (at least one) follow x, lo first.
struct Clamp {
  Value operator()(Builder& b, const Vals& v, bool has_lo, bool has_hi) const {
    std::optional<Value> l, h;
    if (has_lo) l = v[1];
    if (has_hi) h = v[has_lo ? 2 : 1];
    return ops::clamp(b, v[0], l, h);
  }
};

struct ClampScalar {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, at::OptionalScalarRef lo,
                  at::OptionalScalarRef hi) const {
    check_dtype("clamp", m.common_dtype(), Accepts::NoBool);
    shlo::DType c = common(m);
    std::vector<engine::Ref> bounds;
    if (lo) bounds.push_back(scalar_of(lo.get(), c));
    if (hi) bounds.push_back(scalar_of(hi.get(), c));
    pointwise(out, "clamp", {self}, c, std::move(bounds), Clamp{}, lo.has_value(), hi.has_value());
  }
};

struct ClampTensor {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, at::OptionalTensorRef lo,
                  at::OptionalTensorRef hi) const {
    // One tensor bound is a plain minimum / maximum, which the CPU allows for bool.
    check_dtype("clamp", m.common_dtype(), lo.has_value() != hi.has_value() ? Accepts::All : Accepts::NoBool);
    std::vector<std::reference_wrapper<const at::Tensor>> in{self};
    if (lo) in.push_back(*lo);
    if (hi) in.push_back(*hi);
    pointwise(out, "clamp_tensor", in, common(m), {}, Clamp{}, lo.has_value(), hi.has_value());
  }
};

// One-sided clamp_min / clamp_max as the two-sided impls.
template <bool Min>
struct ClampOneScalar {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Scalar& bound) const {
    Min ? ClampScalar{}(m, out, self, at::OptionalScalarRef(&bound), at::OptionalScalarRef())
        : ClampScalar{}(m, out, self, at::OptionalScalarRef(), at::OptionalScalarRef(&bound));
  }
};
template <bool Min>
struct ClampOneTensor {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& bound) const {
    Min ? ClampTensor{}(m, out, self, at::OptionalTensorRef(bound), at::OptionalTensorRef())
        : ClampTensor{}(m, out, self, at::OptionalTensorRef(), at::OptionalTensorRef(bound));
  }
};

at::OptionalScalarRef ref(const std::optional<at::Scalar>& s) {
  return s.has_value() ? at::OptionalScalarRef(&*s) : at::OptionalScalarRef();
}
at::OptionalTensorRef ref(const std::optional<at::Tensor>& t) {
  return t.has_value() && t->defined() ? at::OptionalTensorRef(*t) : at::OptionalTensorRef();
}

// The metas take OptionalScalarRef / OptionalTensorRef, the schemas
// optionals: the structured wrappers do not apply.
using MClamp = at::meta::structured_clamp;
using MClampT = at::meta::structured_clamp_Tensor;
at::Tensor clamp(const at::Tensor& s, const std::optional<at::Scalar>& lo, const std::optional<at::Scalar>& hi) {
  return functional<MClamp>(ClampScalar{}, s, ref(lo), ref(hi));
}
at::Tensor& clamp_(at::Tensor& s, const std::optional<at::Scalar>& lo, const std::optional<at::Scalar>& hi) {
  return inplace<MClamp>(s, ClampScalar{}, ref(lo), ref(hi));
}
at::Tensor& clamp_out(const at::Tensor& s, const std::optional<at::Scalar>& lo, const std::optional<at::Scalar>& hi,
                      at::Tensor& out) {
  return out_variant<MClamp>(out, ClampScalar{}, s, ref(lo), ref(hi));
}
at::Tensor clamp_Tensor(const at::Tensor& s, const std::optional<at::Tensor>& lo, const std::optional<at::Tensor>& hi) {
  return functional<MClampT>(ClampTensor{}, s, ref(lo), ref(hi));
}
at::Tensor& clamp__Tensor(at::Tensor& s, const std::optional<at::Tensor>& lo, const std::optional<at::Tensor>& hi) {
  return inplace<MClampT>(s, ClampTensor{}, ref(lo), ref(hi));
}
at::Tensor& clamp_Tensor_out(const at::Tensor& s, const std::optional<at::Tensor>& lo,
                             const std::optional<at::Tensor>& hi, at::Tensor& out) {
  return out_variant<MClampT>(out, ClampTensor{}, s, ref(lo), ref(hi));
}

// ---- where, masked_fill: out already has its final shape and dtype.

void where_into(const at::Tensor& out, const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other) {
  pointwise(out, "where", {cond, self, other}, to_shlo(out.scalar_type()), {},
            [](Builder& b, const Vals& v) { return ops::where(b, v[0], v[1], v[2]); });
}

at::ScalarType where_check(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other) {
  at::ScalarType c = cond.scalar_type();
  TORCH_CHECK(c == at::kBool || c == at::kByte,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ", c);
  if (c == at::kByte)
    TORCH_WARN_ONCE(
        "where received a uint8 condition tensor. This behavior is deprecated and will be removed "
        "in a future version of PyTorch. Use a boolean condition instead.");
  return at::result_type(self, other);
}

at::DimVector where_shape(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other) {
  return at::infer_size_dimvector(cond.sizes(), at::infer_size_dimvector(self.sizes(), other.sizes()));
}

at::Tensor where_self(const at::Tensor& cond, const at::Tensor& s, const at::Tensor& o) {
  at::ScalarType t = where_check(cond, s, o);
  at::Tensor out = empty(where_shape(cond, s, o), t, common_device({&s, &o, &cond}));
  where_into(out, cond, s, o);
  return out;
}
at::Tensor& where_self_out(const at::Tensor& cond, const at::Tensor& s, const at::Tensor& o, at::Tensor& out) {
  at::ScalarType t = where_check(cond, s, o);
  TORCH_CHECK(out.scalar_type() == t, "Expected out type to be ", t, " but got ", out.scalar_type());
  // The CPU's where is a TensorIterator op: its overlap rules (an input
  // may be out itself, never part of it) before anything is written.
  at::assert_no_internal_overlap(out);
  for (const at::Tensor* in : {&cond, &s, &o})
    if (!in->is_same(out)) at::assert_no_partial_overlap(out, *in);
  at::native::resize_output(out, where_shape(cond, s, o));
  where_into(out, cond, s, o);
  return out;
}

void masked_fill_check(const at::Tensor& mask) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
}

void masked_fill_into(const at::Tensor& out, const at::Tensor& self, const at::Tensor& mask, engine::Ref value) {
  pointwise(out, "masked_fill", {self, mask}, to_shlo(out.scalar_type()), {std::move(value)},
            [](Builder& b, const Vals& v) { return ops::where(b, v[1], ops::splat(b, v[2], v[0]), v[0]); });
}

engine::Ref fill_value(const at::Tensor& self, const at::Scalar& value) {
  // Same range check as the CPU kernel's value.to<scalar_t>().
  if (!c10::isBarebonesUnsignedType(self.scalar_type()))
    AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(at::kBool, at::kHalf, at::kBFloat16, self.scalar_type(), "masked_fill",
                                           [&] { (void)value.to<scalar_t>(); });
  return scalar_of(value, to_shlo(self.scalar_type()));
}

engine::Ref fill_value(const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  return read(value);
}

at::Tensor masked_fill_new(const at::Tensor& self, const at::Tensor& mask, engine::Ref value) {
  masked_fill_check(mask);
  at::Tensor out = empty(at::infer_size_dimvector(self.sizes(), mask.sizes()), self.scalar_type(), self.device());
  masked_fill_into(out, self, mask, std::move(value));
  return out;
}

at::Tensor& masked_fill_inplace(at::Tensor& self, const at::Tensor& mask, engine::Ref value) {
  masked_fill_check(mask);
  auto shape = at::infer_size_dimvector(self.sizes(), mask.sizes());
  TORCH_CHECK(at::IntArrayRef(shape) == self.sizes(), "masked_fill_: the mask of shape ", mask.sizes(),
              " cannot be broadcast to the shape ", self.sizes(), " of the tensor it fills in place");
  at::assert_no_partial_overlap(self, mask);
  masked_fill_into(self, self, mask, std::move(value));
  return self;
}

at::Tensor masked_fill_Scalar(const at::Tensor& s, const at::Tensor& mask, const at::Scalar& v) {
  return masked_fill_new(s, mask, fill_value(s, v));
}
at::Tensor masked_fill_Tensor(const at::Tensor& s, const at::Tensor& mask, const at::Tensor& v) {
  return masked_fill_new(s, mask, fill_value(v));
}
at::Tensor& masked_fill__Scalar(at::Tensor& s, const at::Tensor& mask, const at::Scalar& v) {
  return masked_fill_inplace(s, mask, fill_value(s, v));
}
at::Tensor& masked_fill__Tensor(at::Tensor& s, const at::Tensor& mask, const at::Tensor& v) {
  return masked_fill_inplace(s, mask, fill_value(v));
}

// ---- lerp, addcmul, addcdiv

// The scalar- and tensor-weight forms share one lowering (the weight is
// the third operand either way).
struct Lerp {
  Value operator()(Builder& b, const Vals& v) const { return ops::lerp(b, v[0], v[1], v[2]); }
};

struct LerpScalar {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& s, const at::Tensor& e, const at::Scalar& w) const {
    check_dtype("lerp", m.common_dtype(), Accepts::FloatComplex);
    shlo::DType c = common(m);
    pointwise(out, "lerp_scalar_weight", {s, e}, c, {scalar_of(w, ops::opmath(c))}, Lerp{});
  }
};

struct LerpTensor {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& s, const at::Tensor& e, const at::Tensor& w) const {
    check_dtype("lerp", m.common_dtype(), Accepts::FloatComplex);
    pointwise(out, "lerp", {s, e, w}, common(m), {}, Lerp{});
  }
};

template <bool Div>
struct AddcOp {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& s, const at::Tensor& t1, const at::Tensor& t2,
                  const at::Scalar& value) const {
    check_dtype(Div ? "addcdiv" : "addcmul", m.common_dtype(), Accepts::NoBool);
    shlo::DType c = common(m);
    pointwise(out, Div ? "addcdiv" : "addcmul", {s, t1, t2}, c, {scalar_of(value, ops::opmath(c))},
              [](Builder& b, const Vals& v) {
                return Div ? ops::addcdiv(b, v[0], v[1], v[2], v[3]) : ops::addcmul(b, v[0], v[1], v[2], v[3]);
              });
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  using namespace at::meta;
  m.structured<structured_addcdiv>("addcdiv", "addcdiv_", "addcdiv.out", AddcOp<true>{});
  m.structured<structured_addcmul>("addcmul", "addcmul_", "addcmul.out", AddcOp<false>{});
  m.impl("clamp", &clamp);
  m.impl("clamp.Tensor", &clamp_Tensor);
  m.impl("clamp.Tensor_out", &clamp_Tensor_out);
  m.impl("clamp.out", &clamp_out);
  m.impl("clamp_", &clamp_);
  m.impl("clamp_.Tensor", &clamp__Tensor);
  m.structured<structured_clamp_max>("clamp_max", "clamp_max_", "clamp_max.out", ClampOneScalar<false>{});
  m.structured<structured_clamp_max_Tensor>("clamp_max.Tensor", "clamp_max_.Tensor", "clamp_max.Tensor_out",
                                            ClampOneTensor<false>{});
  m.structured<structured_clamp_min>("clamp_min", "clamp_min_", "clamp_min.out", ClampOneScalar<true>{});
  m.structured<structured_clamp_min_Tensor>("clamp_min.Tensor", "clamp_min_.Tensor", "clamp_min.Tensor_out",
                                            ClampOneTensor<true>{});
  m.structured<structured_lerp_Scalar>("lerp.Scalar", "lerp_.Scalar", "lerp.Scalar_out", LerpScalar{});
  m.structured<structured_lerp_Tensor>("lerp.Tensor", "lerp_.Tensor", "lerp.Tensor_out", LerpTensor{});
  m.impl("masked_fill.Scalar", &masked_fill_Scalar);
  m.impl("masked_fill.Tensor", &masked_fill_Tensor);
  m.impl("masked_fill_.Scalar", &masked_fill__Scalar);
  m.impl("masked_fill_.Tensor", &masked_fill__Tensor);
  m.impl("where.self", &where_self);
  m.impl("where.self_out", &where_self_out);
}

}  // namespace tpu::ew
