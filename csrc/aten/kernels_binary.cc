// Binary arithmetic (add, sub, mul, div) and the binary part of the
// elementwise family: pow, maximum / minimum, remainder, bitwise and logical
// ops, comparisons, lerp, addcmul / addcdiv.
#include <ATen/ScalarOps.h>
#include <ATen/ops/add_meta.h>
#include <ATen/ops/addcdiv_meta.h>
#include <ATen/ops/addcmul_meta.h>
#include <ATen/ops/atan2_meta.h>
#include <ATen/ops/bitwise_and_meta.h>
#include <ATen/ops/bitwise_or_meta.h>
#include <ATen/ops/bitwise_xor_meta.h>
#include <ATen/ops/copysign_meta.h>
#include <ATen/ops/div_meta.h>
#include <ATen/ops/eq_meta.h>
#include <ATen/ops/fmax_meta.h>
#include <ATen/ops/fmin_meta.h>
#include <ATen/ops/fmod_meta.h>
#include <ATen/ops/ge_meta.h>
#include <ATen/ops/gt_meta.h>
#include <ATen/ops/heaviside_meta.h>
#include <ATen/ops/hypot_meta.h>
#include <ATen/ops/le_meta.h>
#include <ATen/ops/lerp_meta.h>
#include <ATen/ops/logaddexp2_meta.h>
#include <ATen/ops/logaddexp_meta.h>
#include <ATen/ops/lt_meta.h>
#include <ATen/ops/maximum_meta.h>
#include <ATen/ops/minimum_meta.h>
#include <ATen/ops/mul_meta.h>
#include <ATen/ops/ne_meta.h>
#include <ATen/ops/pow_meta.h>
#include <ATen/ops/remainder_meta.h>
#include <ATen/ops/sub_meta.h>
#include <ATen/ops/xlogy_meta.h>

#include "aten/data_checks.h"
#include "aten/ew_checks.h"
#include "aten/kernels.h"
#include "aten/structured.h"
#include "ops/elementwise/elementwise.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

template <class M>
void add_impl(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  shlo::DType c = to_shlo(m.common_dtype());
  pointwise(out, "add", {self, other}, c, {scalar_of(alpha, c)},
            [](Builder& b, const Vals& v) { return ops::add(b, v[0], v[1], v[2]); });
}

template <class M>
void sub_impl(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  shlo::DType c = to_shlo(m.common_dtype());
  pointwise(out, "sub", {self, other}, c, {scalar_of(alpha, c)},
            [](Builder& b, const Vals& v) { return ops::sub(b, v[0], v[1], v[2]); });
}

template <class M>
void mul_impl(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other) {
  shlo::DType c = to_shlo(m.common_dtype());
  pointwise(out, "mul", {self, other}, c, {}, [](Builder& b, const Vals& v) {
    return v[0].dtype() == shlo::DType::PRED ? b.op1("stablehlo.and", {v[0], v[1]}, v[0].type) : b.mul(v[0], v[1]);
  });
}

template <class M>
void div_impl(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other) {
  shlo::DType c = to_shlo(m.common_dtype());
  pointwise(out, "div", {self, other}, c, {}, [](Builder& b, const Vals& v) { return ops::div(b, v[0], v[1]); });
}

// Integer division and remainder by zero raise on the CPU instead of giving
// a value (its kernels check each divisor in the dtype they compute in): a
// host divisor (a Python scalar) is checked at the call, a device one like
// the other data preconditions (data_checks.h).
template <class M>
void check_divisor(M& m, const at::Tensor& out, const at::Tensor& divisor) {
  at::ScalarType t = m.common_dtype();
  if (!at::isIntegralType(t, /*includeBool=*/false) || out.numel() == 0) return;
  check_no_zero(divisor, t, [] { TORCH_CHECK(false, "ZeroDivisionError"); });
}

template <class M>
void div_mode_impl(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
                   std::optional<c10::string_view> mode) {
  shlo::DType c = to_shlo(m.common_dtype());
  std::string md = mode.has_value() ? std::string(*mode) : "";
  // The CPU has no rounding division of bools (the device could not
  // compile one): its error, kernel name included.
  TORCH_CHECK_NOT_IMPLEMENTED(md.empty() || m.common_dtype() != at::kBool, "\"div_", md,
                              "_cpu\" not implemented for 'Bool'");
  if (!md.empty()) check_divisor(m, out, other);
  pointwise(
      out, "div_rounding", {self, other}, c, {},
      [](Builder& b, const Vals& v, const std::string& md) { return ops::div(b, v[0], v[1], md); }, md);
}

using MAdd = at::meta::structured_add_Tensor;
using MSub = at::meta::structured_sub_Tensor;
using MMul = at::meta::structured_mul_Tensor;
using MDiv = at::meta::structured_div_Tensor;
using MDivMode = at::meta::structured_div_Tensor_mode;

}  // namespace

at::Tensor add_Tensor(const at::Tensor& s, const at::Tensor& o, const at::Scalar& a) {
  return functional<MAdd>(add_impl<Structured<MAdd>>, s, o, a);
}
at::Tensor& add__Tensor(at::Tensor& s, const at::Tensor& o, const at::Scalar& a) {
  return inplace<MAdd>(s, add_impl<Structured<MAdd>>, o, a);
}
at::Tensor& add_out(const at::Tensor& s, const at::Tensor& o, const at::Scalar& a, at::Tensor& out) {
  return out_variant<MAdd>(out, add_impl<Structured<MAdd>>, s, o, a);
}

at::Tensor sub_Tensor(const at::Tensor& s, const at::Tensor& o, const at::Scalar& a) {
  return functional<MSub>(sub_impl<Structured<MSub>>, s, o, a);
}
at::Tensor& sub__Tensor(at::Tensor& s, const at::Tensor& o, const at::Scalar& a) {
  return inplace<MSub>(s, sub_impl<Structured<MSub>>, o, a);
}
at::Tensor& sub_out(const at::Tensor& s, const at::Tensor& o, const at::Scalar& a, at::Tensor& out) {
  return out_variant<MSub>(out, sub_impl<Structured<MSub>>, s, o, a);
}

at::Tensor mul_Tensor(const at::Tensor& s, const at::Tensor& o) {
  return functional<MMul>(mul_impl<Structured<MMul>>, s, o);
}
at::Tensor& mul__Tensor(at::Tensor& s, const at::Tensor& o) { return inplace<MMul>(s, mul_impl<Structured<MMul>>, o); }
at::Tensor& mul_out(const at::Tensor& s, const at::Tensor& o, at::Tensor& out) {
  return out_variant<MMul>(out, mul_impl<Structured<MMul>>, s, o);
}

at::Tensor div_Tensor(const at::Tensor& s, const at::Tensor& o) {
  return functional<MDiv>(div_impl<Structured<MDiv>>, s, o);
}
at::Tensor& div__Tensor(at::Tensor& s, const at::Tensor& o) { return inplace<MDiv>(s, div_impl<Structured<MDiv>>, o); }
at::Tensor& div_out(const at::Tensor& s, const at::Tensor& o, at::Tensor& out) {
  return out_variant<MDiv>(out, div_impl<Structured<MDiv>>, s, o);
}
at::Tensor div_Tensor_mode(const at::Tensor& s, const at::Tensor& o, std::optional<c10::string_view> md) {
  return functional<MDivMode>(div_mode_impl<Structured<MDivMode>>, s, o, md);
}
at::Tensor& div__Tensor_mode(at::Tensor& s, const at::Tensor& o, std::optional<c10::string_view> md) {
  return inplace<MDivMode>(s, div_mode_impl<Structured<MDivMode>>, o, md);
}
at::Tensor& div_out_mode(const at::Tensor& s, const at::Tensor& o, std::optional<c10::string_view> md,
                         at::Tensor& out) {
  return out_variant<MDivMode>(out, div_mode_impl<Structured<MDivMode>>, s, o, md);
}

}  // namespace tpu

namespace tpu::ew {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;
using ops::Binary;

// TensorIterator configurations of the ops ATen implements without a
// structured kernel (the ones their CPU kernels build). Arguments past the
// tensors (scalars, flags) do not change the output metadata.
struct BinaryMeta : at::TensorIteratorBase {
  template <class... Rest>
  void meta(const at::Tensor& a, const at::Tensor& b, const Rest&...) {
    build_borrowing_binary_op(maybe_get_output(), a, b);
  }
};
// Inputs promoted to a common dtype, the output keeps its own (logical ops).
struct ComparisonMeta : at::TensorIteratorBase {
  void meta(const at::Tensor& a, const at::Tensor& b) { build_borrowing_comparison_op(maybe_get_output(), a, b); }
};

template <Binary B, Accepts A>
struct BinaryOp {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) const {
    check_dtype(ops::name(B), m.common_dtype(), A);
    if constexpr (B == Binary::Fmod || B == Binary::Remainder) check_divisor(m, out, b);
    pointwise(out, ops::name(B), {a, b}, common(m), {},
              [](Builder& bb, const Vals& v) { return ops::binary(bb, B, v[0], v[1]); });
  }
};

// x ** exponent (a scalar in the tensor's dtype, as the CPU kernel takes it).
struct PowTensorScalar {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& base, const at::Scalar& e) const {
    check_dtype("pow", m.common_dtype(), Accepts::NoBool);
    shlo::DType c = common(m);
    // The exponents PyTorch special-cases become fills, copies, multiplies
    // and roots (x.pow(2) in every RMSNorm, x.pow(1) in its backward):
    // faster than a generic power and the same values as the CPU. Only this
    // small set enters the cache key.
    if (shlo::is_float(c) && !e.isComplex()) {
      double v = e.toDouble();
      for (double special : {0.0, 1.0, 2.0, 3.0, 0.5, -0.5, -1.0, -2.0}) {
        if (v != special) continue;
        pointwise(
            out, "pow_special", {base}, c, {},
            [](Builder& b, const Vals& x, double v) { return ops::pow_special(b, x[0], v); }, v);
        return;
      }
    }
    pointwise(out, "pow_scalar_exponent", {base}, c, {scalar_of(e, c)},
              [](Builder& b, const Vals& v) { return ops::binary(b, Binary::Pow, v[0], ops::splat(b, v[1], v[0])); });
  }
};

// base ** exponent for a scalar base: computed in result_type(base, exponent).
struct PowScalarBase {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Scalar& base, const at::Tensor& e) const {
    at::ScalarType t = at::result_type(base, e);
    TORCH_CHECK(at::canCast(t, out.scalar_type()), "result type ", t, " can't be cast to the desired output type ",
                out.scalar_type());
    check_dtype("pow", t, Accepts::NoBool);
    shlo::DType c = to_shlo(t);
    pointwise(out, "pow_scalar_base", {e}, c, {scalar_of(base, c)},
              [](Builder& b, const Vals& v) { return ops::binary(b, Binary::Pow, ops::splat(b, v[1], v[0]), v[0]); });
  }
};

struct FloorDivide {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) const {
    check_dtype("floor_divide", m.common_dtype(), Accepts::NoBool);
    check_divisor(m, out, b);
    pointwise(out, "floor_divide", {a, b}, common(m), {},
              [](Builder& bb, const Vals& v) { return ops::div(bb, v[0], v[1], "floor"); });
  }
};

template <shlo::Cmp C>
struct CompareOp {
  static const char* key() {
    static const char* names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    return names[static_cast<int>(C)];
  }
  static const char* scalar_key() {
    static const char* names[] = {"eq_scalar", "ne_scalar", "lt_scalar", "le_scalar", "gt_scalar", "ge_scalar"};
    return names[static_cast<int>(C)];
  }
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) const {
    pointwise(out, key(), {a, b}, common(m), {},
              [](Builder& bb, const Vals& v) { return ops::compare(bb, C, v[0], v[1]); });
  }
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& a, const at::Scalar& s) const {
    shlo::DType c = common(m);
    pointwise(out, scalar_key(), {a}, c, {scalar_of(s, c)},
              [](Builder& bb, const Vals& v) { return ops::compare(bb, C, v[0], ops::splat(bb, v[1], v[0])); });
  }
};

// The scalar- and tensor-weight forms share one lowering (the weight is
// the third operand either way).
struct Lerp {
  Value operator()(Builder& b, const Vals& v) const { return ops::lerp(b, v[0], v[1], v[2]); }
};

struct LerpScalar {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& s, const at::Tensor& e, const at::Scalar& w) const {
    check_dtype("lerp", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    pointwise(out, "lerp_scalar_weight", {s, e}, c, {scalar_of(w, ops::opmath(c))}, Lerp{});
  }
};

struct LerpTensor {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& s, const at::Tensor& e, const at::Tensor& w) const {
    check_dtype("lerp", m.common_dtype(), Accepts::Float);
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

// ---- binary ops: NAME (functional), NAME_ (in-place), NAME_out, with the
// ATen overload name appended where the op has one.
#define EW_BINARY_FN(fn, Meta, Impl) \
  at::Tensor fn(const at::Tensor& s, const at::Tensor& o) { return functional<Meta>(Impl{}, s, o); }
#define EW_BINARY_INPLACE(fn, Meta, Impl) \
  at::Tensor& fn(at::Tensor& s, const at::Tensor& o) { return inplace<Meta>(s, Impl{}, o); }
#define EW_BINARY_OUT(fn, Meta, Impl)                                         \
  at::Tensor& fn(const at::Tensor& s, const at::Tensor& o, at::Tensor& out) { \
    return out_variant<Meta>(out, Impl{}, s, o);                              \
  }

#define EW_BINARY3(name, Meta, B, A)                   \
  using name##_impl = BinaryOp<Binary::B, Accepts::A>; \
  EW_BINARY_FN(name, Meta, name##_impl)                \
  EW_BINARY_INPLACE(name##_, Meta, name##_impl)        \
  EW_BINARY_OUT(name##_out, Meta, name##_impl)
#define EW_BINARY3_T(name, Meta, B, A)                 \
  using name##_impl = BinaryOp<Binary::B, Accepts::A>; \
  EW_BINARY_FN(name##_Tensor, Meta, name##_impl)       \
  EW_BINARY_INPLACE(name##__Tensor, Meta, name##_impl) \
  EW_BINARY_OUT(name##_Tensor_out, Meta, name##_impl)

EW_BINARY3(atan2, at::meta::structured_atan2, Atan2, All)
EW_BINARY3(heaviside, at::meta::structured_heaviside, Heaviside, All)
EW_BINARY3(hypot, at::meta::structured_hypot, Hypot, Float)
EW_BINARY3_T(bitwise_and, at::meta::structured_bitwise_and_Tensor, BitwiseAnd, IntBool)
EW_BINARY3_T(bitwise_or, at::meta::structured_bitwise_or_Tensor, BitwiseOr, IntBool)
EW_BINARY3_T(bitwise_xor, at::meta::structured_bitwise_xor_Tensor, BitwiseXor, IntBool)
EW_BINARY3_T(fmod, at::meta::structured_fmod_Tensor, Fmod, NoBool)
EW_BINARY3_T(remainder, at::meta::structured_remainder_Tensor, Remainder, NoBool)

// copysign.out and xlogy.OutTensor break the naming pattern.
using copysign_impl = BinaryOp<Binary::Copysign, Accepts::All>;
EW_BINARY_FN(copysign_Tensor, at::meta::structured_copysign_Tensor, copysign_impl)
EW_BINARY_INPLACE(copysign__Tensor, at::meta::structured_copysign_Tensor, copysign_impl)
EW_BINARY_OUT(copysign_out, at::meta::structured_copysign_Tensor, copysign_impl)
using xlogy_impl = BinaryOp<Binary::Xlogy, Accepts::All>;
EW_BINARY_FN(xlogy_Tensor, at::meta::structured_xlogy_Tensor, xlogy_impl)
EW_BINARY_INPLACE(xlogy__Tensor, at::meta::structured_xlogy_Tensor, xlogy_impl)
EW_BINARY_OUT(xlogy_OutTensor, at::meta::structured_xlogy_Tensor, xlogy_impl)

// No in-place overloads in ATen.
#define EW_BINARY2(name, B, A)                                 \
  using name##_impl = BinaryOp<Binary::B, Accepts::A>;         \
  EW_BINARY_FN(name, at::meta::structured_##name, name##_impl) \
  EW_BINARY_OUT(name##_out, at::meta::structured_##name, name##_impl)
EW_BINARY2(fmax, Fmax, All)
EW_BINARY2(fmin, Fmin, All)
EW_BINARY2(logaddexp, Logaddexp, Float)
EW_BINARY2(logaddexp2, Logaddexp2, Float)
EW_BINARY2(maximum, Maximum, All)
EW_BINARY2(minimum, Minimum, All)
#undef EW_BINARY2

EW_BINARY_FN(floor_divide, BinaryMeta, FloorDivide)
EW_BINARY_INPLACE(floor_divide__Tensor, BinaryMeta, FloorDivide)
EW_BINARY_OUT(floor_divide_out, BinaryMeta, FloorDivide)

at::Tensor remainder_Scalar_Tensor(const at::Scalar& s, const at::Tensor& o) {
  return ew::remainder_Tensor(at::native::wrapped_scalar_tensor(s), o);
}

// logical ops: a bool result unless out= / in-place say otherwise.
#define EW_LOGICAL(name, B)                                          \
  using name##_impl = BinaryOp<Binary::B, Accepts::All>;             \
  EW_BINARY_OUT(name##_out, ComparisonMeta, name##_impl)             \
  at::Tensor name(const at::Tensor& s, const at::Tensor& o) {        \
    at::Tensor out = empty({0}, at::kBool, common_device({&s, &o})); \
    return ew::name##_out(s, o, out);                                \
  }                                                                  \
  at::Tensor& name##_(at::Tensor& s, const at::Tensor& o) { return ew::name##_out(s, o, s); }
EW_LOGICAL(logical_and, LogicalAnd)
EW_LOGICAL(logical_or, LogicalOr)
EW_LOGICAL(logical_xor, LogicalXor)
#undef EW_LOGICAL

// ---- pow

using MPowTT = at::meta::structured_pow_Tensor_Tensor;
using pow_impl = BinaryOp<Binary::Pow, Accepts::NoBool>;
EW_BINARY_FN(pow_Tensor_Tensor, MPowTT, pow_impl)
EW_BINARY_INPLACE(pow__Tensor, MPowTT, pow_impl)
EW_BINARY_OUT(pow_Tensor_Tensor_out, MPowTT, pow_impl)

using MPowTS = at::meta::structured_pow_Tensor_Scalar;
at::Tensor pow_Tensor_Scalar(const at::Tensor& s, const at::Scalar& e) {
  return functional<MPowTS>(PowTensorScalar{}, s, e);
}
at::Tensor& pow__Scalar(at::Tensor& s, const at::Scalar& e) { return inplace<MPowTS>(s, PowTensorScalar{}, e); }
at::Tensor& pow_Tensor_Scalar_out(const at::Tensor& s, const at::Scalar& e, at::Tensor& out) {
  return out_variant<MPowTS>(out, PowTensorScalar{}, s, e);
}
at::Tensor pow_Scalar(const at::Scalar& s, const at::Tensor& e) {
  return functional<at::meta::structured_pow_Scalar>(PowScalarBase{}, s, e);
}
at::Tensor& pow_Scalar_out(const at::Scalar& s, const at::Tensor& e, at::Tensor& out) {
  return out_variant<at::meta::structured_pow_Scalar>(out, PowScalarBase{}, s, e);
}

#undef EW_BINARY3
#undef EW_BINARY3_T
#undef EW_BINARY_FN
#undef EW_BINARY_INPLACE
#undef EW_BINARY_OUT

// ---- comparisons

#define EW_COMPARE(name, C)                                                                  \
  at::Tensor name##_Tensor(const at::Tensor& s, const at::Tensor& o) {                       \
    return functional<at::meta::structured_##name##_Tensor>(CompareOp<C>{}, s, o);           \
  }                                                                                          \
  at::Tensor name##_Scalar(const at::Tensor& s, const at::Scalar& o) {                       \
    return functional<at::meta::structured_##name##_Scalar>(CompareOp<C>{}, s, o);           \
  }                                                                                          \
  at::Tensor& name##_Tensor_out(const at::Tensor& s, const at::Tensor& o, at::Tensor& out) { \
    return out_variant<at::meta::structured_##name##_Tensor>(out, CompareOp<C>{}, s, o);     \
  }                                                                                          \
  at::Tensor& name##_Scalar_out(const at::Tensor& s, const at::Scalar& o, at::Tensor& out) { \
    return out_variant<at::meta::structured_##name##_Scalar>(out, CompareOp<C>{}, s, o);     \
  }                                                                                          \
  at::Tensor& name##__Tensor(at::Tensor& s, const at::Tensor& o) {                           \
    return inplace<at::meta::structured_##name##_Tensor>(s, CompareOp<C>{}, o);              \
  }                                                                                          \
  at::Tensor& name##__Scalar(at::Tensor& s, const at::Scalar& o) {                           \
    return inplace<at::meta::structured_##name##_Scalar>(s, CompareOp<C>{}, o);              \
  }
EW_COMPARE(eq, shlo::Cmp::EQ)
EW_COMPARE(ge, shlo::Cmp::GE)
EW_COMPARE(gt, shlo::Cmp::GT)
EW_COMPARE(le, shlo::Cmp::LE)
EW_COMPARE(lt, shlo::Cmp::LT)
EW_COMPARE(ne, shlo::Cmp::NE)
#undef EW_COMPARE

// ---- rsub, lerp, addcmul, addcdiv

at::Tensor rsub_Tensor(const at::Tensor& s, const at::Tensor& o, const at::Scalar& alpha) {
  return tpu::sub_Tensor(o, s, alpha);
}

using MLerpS = at::meta::structured_lerp_Scalar;
using MLerpT = at::meta::structured_lerp_Tensor;
at::Tensor lerp_Scalar(const at::Tensor& s, const at::Tensor& e, const at::Scalar& w) {
  return functional<MLerpS>(LerpScalar{}, s, e, w);
}
at::Tensor& lerp__Scalar(at::Tensor& s, const at::Tensor& e, const at::Scalar& w) {
  return inplace<MLerpS>(s, LerpScalar{}, e, w);
}
at::Tensor& lerp_Scalar_out(const at::Tensor& s, const at::Tensor& e, const at::Scalar& w, at::Tensor& out) {
  return out_variant<MLerpS>(out, LerpScalar{}, s, e, w);
}
at::Tensor lerp_Tensor(const at::Tensor& s, const at::Tensor& e, const at::Tensor& w) {
  return functional<MLerpT>(LerpTensor{}, s, e, w);
}
at::Tensor& lerp__Tensor(at::Tensor& s, const at::Tensor& e, const at::Tensor& w) {
  return inplace<MLerpT>(s, LerpTensor{}, e, w);
}
at::Tensor& lerp_Tensor_out(const at::Tensor& s, const at::Tensor& e, const at::Tensor& w, at::Tensor& out) {
  return out_variant<MLerpT>(out, LerpTensor{}, s, e, w);
}

#define EW_ADDC(name, Div)                                                                                     \
  at::Tensor name(const at::Tensor& s, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& v) {      \
    return functional<at::meta::structured_##name>(AddcOp<Div>{}, s, t1, t2, v);                               \
  }                                                                                                            \
  at::Tensor& name##_(at::Tensor& s, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& v) {        \
    return inplace<at::meta::structured_##name>(s, AddcOp<Div>{}, t1, t2, v);                                  \
  }                                                                                                            \
  at::Tensor& name##_out(const at::Tensor& s, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& v, \
                         at::Tensor& out) {                                                                    \
    return out_variant<at::meta::structured_##name>(out, AddcOp<Div>{}, s, t1, t2, v);                         \
  }
EW_ADDC(addcdiv, true)
EW_ADDC(addcmul, false)
#undef EW_ADDC

}  // namespace tpu::ew
