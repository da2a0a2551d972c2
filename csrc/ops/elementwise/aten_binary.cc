// The elementwise family's binary ops: arithmetic (add, sub, rsub, mul, div
// with its rounding modes, floor_divide, remainder, fmod, pow), float math
// (atan2, hypot, copysign, xlogy, xlog1py, logaddexp, nextafter, heaviside),
// maximum / minimum / fmax / fmin, integer and bit math (gcd, lcm, bitwise
// and / or / xor, shifts), logical ops and comparisons: ATen entry points
// and their registration. Output metadata comes from PyTorch's structured
// meta classes, or for ops ATen implements without one, from the same
// TensorIterator configuration its CPU kernel builds (aten_metas.h).
#include <ATen/MemoryOverlap.h>
#include <ATen/ScalarOps.h>
#include <ATen/ops/add_meta.h>
#include <ATen/ops/atan2_meta.h>
#include <ATen/ops/bitwise_and_meta.h>
#include <ATen/ops/bitwise_left_shift_meta.h>
#include <ATen/ops/bitwise_or_meta.h>
#include <ATen/ops/bitwise_right_shift_meta.h>
#include <ATen/ops/bitwise_xor_meta.h>
#include <ATen/ops/copysign_meta.h>
#include <ATen/ops/div_meta.h>
#include <ATen/ops/eq_meta.h>
#include <ATen/ops/fmax_meta.h>
#include <ATen/ops/fmin_meta.h>
#include <ATen/ops/fmod_meta.h>
#include <ATen/ops/gcd_meta.h>
#include <ATen/ops/ge_meta.h>
#include <ATen/ops/gt_meta.h>
#include <ATen/ops/heaviside_meta.h>
#include <ATen/ops/hypot_meta.h>
#include <ATen/ops/lcm_meta.h>
#include <ATen/ops/le_meta.h>
#include <ATen/ops/logaddexp2_meta.h>
#include <ATen/ops/logaddexp_meta.h>
#include <ATen/ops/lt_meta.h>
#include <ATen/ops/maximum_meta.h>
#include <ATen/ops/minimum_meta.h>
#include <ATen/ops/mul_meta.h>
#include <ATen/ops/ne_meta.h>
#include <ATen/ops/nextafter_meta.h>
#include <ATen/ops/pow_meta.h>
#include <ATen/ops/remainder_meta.h>
#include <ATen/ops/special_xlog1py_meta.h>
#include <ATen/ops/sub_meta.h>
#include <ATen/ops/xlogy_meta.h>

#include "aten/data_checks.h"
#include "aten/library.h"
#include "ops/common/aten_common.h"
#include "ops/common/lowering.h"
#include "ops/elementwise/aten_metas.h"
#include "ops/elementwise/aten_pointwise.h"
#include "ops/elementwise/elementwise.h"

namespace tpu::ew {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;
using ops::Binary;

// ---- add, sub, mul, div

// alpha 1, nearly every add and sub, is no operand: a program reads one
// buffer fewer and multiplies by nothing. Complex sums keep the product:
// PyTorch's kernels compute a + alpha * b with a complex multiply even for
// alpha 1, which turns an infinite part of b into NaNs.
struct Add {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
                  const at::Scalar& alpha) const {
    shlo::DType c = to_shlo(m.common_dtype());
    if (alpha.equal(1) && !shlo::is_complex(c)) {
      pointwise(out, "add", {self, other}, c, {}, [](Builder& b, const Vals& v) { return b.add(v[0], v[1]); });
      return;
    }
    pointwise(out, "add_alpha", {self, other}, c, {scalar_of(alpha, c)},
              [](Builder& b, const Vals& v) { return ops::add(b, v[0], v[1], v[2]); });
  }
};

struct Sub {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
                  const at::Scalar& alpha) const {
    shlo::DType c = to_shlo(m.common_dtype());
    if (alpha.equal(1) && !shlo::is_complex(c)) {
      pointwise(out, "sub", {self, other}, c, {}, [](Builder& b, const Vals& v) { return b.sub(v[0], v[1]); });
      return;
    }
    pointwise(out, "sub_alpha", {self, other}, c, {scalar_of(alpha, c)},
              [](Builder& b, const Vals& v) { return ops::sub(b, v[0], v[1], v[2]); });
  }
};

struct Mul {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other) const {
    shlo::DType c = to_shlo(m.common_dtype());
    pointwise(out, "mul", {self, other}, c, {}, [](Builder& b, const Vals& v) {
      return v[0].dtype() == shlo::DType::PRED ? ops::logical_and(b, v[0], v[1]) : b.mul(v[0], v[1]);
    });
  }
};

struct Div {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other) const {
    shlo::DType c = to_shlo(m.common_dtype());
    pointwise(out, "div", {self, other}, c, {}, [](Builder& b, const Vals& v) { return ops::div(b, v[0], v[1]); });
  }
};

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

struct DivMode {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
                  std::optional<c10::string_view> mode) const {
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
};

// self - alpha * other with the operands swapped.
at::Tensor rsub_Tensor(const at::Tensor& s, const at::Tensor& o, const at::Scalar& alpha) {
  return functional<at::meta::structured_sub_Tensor>(Sub{}, o, s, alpha);
}

// ---- binary math through ops::binary

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

using RemainderOp = BinaryOp<Binary::Remainder, Accepts::NoBool>;
at::Tensor remainder_Scalar_Tensor(const at::Scalar& s, const at::Tensor& o) {
  return functional<at::meta::structured_remainder_Tensor>(RemainderOp{}, at::native::wrapped_scalar_tensor(s), o);
}

struct FloorDivide {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) const {
    check_dtype("floor_divide", m.common_dtype(), Accepts::NoBool);
    check_divisor(m, out, b);
    pointwise(out, "floor_divide", {a, b}, common(m), {},
              [](Builder& bb, const Vals& v) { return ops::div(bb, v[0], v[1], "floor"); });
  }
};

// ---- pow

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
    if ((shlo::is_float(c) || shlo::is_complex(c)) && !e.isComplex()) {
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

// A scalar base comes first: the structured wrappers do not apply.
at::Tensor pow_Scalar(const at::Scalar& s, const at::Tensor& e) {
  return functional<at::meta::structured_pow_Scalar>(PowScalarBase{}, s, e);
}
at::Tensor& pow_Scalar_out(const at::Scalar& s, const at::Tensor& e, at::Tensor& out) {
  // Its meta builds no TensorIterator (the CPU redispatches to the tensor
  // overload, whose iterator checks): the overlap checks are ours.
  at::assert_no_internal_overlap(out);
  at::assert_no_partial_overlap(out, e);
  return out_variant<at::meta::structured_pow_Scalar>(out, PowScalarBase{}, s, e);
}

// ---- integer and bit math, nextafter, xlog1py

void check_integral(const char* op, at::ScalarType t) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isIntegralType(t, /*includeBool=*/false), "\"", op, "\" not implemented for '",
                              at::toString(t), "'");
}

template <bool Lcm>
struct Gcd {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) const {
    check_integral(Lcm ? "lcm_tpu" : "gcd_tpu", m.common_dtype());
    pointwise(out, Lcm ? "lcm" : "gcd", {a, b}, common(m), {},
              [](Builder& bb, const Vals& v) { return Lcm ? ops::lcm(bb, v[0], v[1]) : ops::gcd(bb, v[0], v[1]); });
  }
};

template <bool Left>
struct Shift {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) const {
    check_integral(Left ? "lshift_tpu" : "rshift_tpu", m.common_dtype());
    pointwise(out, Left ? "shift_left" : "shift_right", {a, b}, common(m), {}, [](Builder& bb, const Vals& v) {
      return Left ? ops::shift_left(bb, v[0], v[1]) : ops::shift_right(bb, v[0], v[1]);
    });
  }
};

// __lshift__ / __rshift__ and their in-place forms: the shift metas'
// TensorIterator; a Scalar operand is the 0-d wrapped number ATen's
// composites pass.
using ShiftMeta = BinaryMeta<>;
at::Tensor lshift_Scalar(const at::Tensor& a, const at::Scalar& b) {
  return functional<ShiftMeta>(Shift<true>{}, a, at::native::wrapped_scalar_tensor(b));
}
at::Tensor& ilshift_Scalar(at::Tensor& a, const at::Scalar& b) {
  return inplace<ShiftMeta>(a, Shift<true>{}, at::native::wrapped_scalar_tensor(b));
}
at::Tensor rshift_Scalar(const at::Tensor& a, const at::Scalar& b) {
  return functional<ShiftMeta>(Shift<false>{}, a, at::native::wrapped_scalar_tensor(b));
}
at::Tensor& irshift_Scalar(at::Tensor& a, const at::Scalar& b) {
  return inplace<ShiftMeta>(a, Shift<false>{}, at::native::wrapped_scalar_tensor(b));
}

struct Nextafter {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) const {
    at::ScalarType t = m.common_dtype();
    check_dtype("nextafter_tpu", t, Accepts::Float);
    pointwise(out, "nextafter", {a, b}, common(m), {},
              [](Builder& bb, const Vals& v) { return ops::nextafter(bb, v[0], v[1]); });
  }
};

struct Xlog1py {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) const {
    pointwise(out, "xlog1py", {a, b}, common(m), {},
              [](Builder& bb, const Vals& v) { return ops::xlog1py(bb, v[0], v[1]); });
  }
};

// ---- comparisons and logical ops

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

// logical ops: a bool result unless out= / in-place say otherwise.
template <Binary B>
at::Tensor logical(const at::Tensor& s, const at::Tensor& o) {
  at::Tensor out = empty({0}, at::kBool, common_device({&s, &o}));
  return out_variant<ComparisonMeta>(out, BinaryOp<B, Accepts::All>{}, s, o);
}
template <Binary B>
at::Tensor& logical_(at::Tensor& s, const at::Tensor& o) {
  return out_variant<ComparisonMeta>(s, BinaryOp<B, Accepts::All>{}, s, o);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  using namespace at::meta;
  // NAME, NAME_ (in-place), NAME.out of a structured binary op.
#define EW_BINARY(n, B, A) m.structured<structured_##n>(#n, #n "_", #n ".out", BinaryOp<Binary::B, Accepts::A>{})
  // NAME.Tensor, NAME_.Tensor, NAME.Tensor_out.
#define EW_BINARY_T(n, B, A)                                                           \
  m.structured<structured_##n##_Tensor>(#n ".Tensor", #n "_.Tensor", #n ".Tensor_out", \
                                        BinaryOp<Binary::B, Accepts::A>{})
  // NAME, NAME.out: no in-place overload in ATen.
#define EW_BINARY2(n, B, A) m.structured<structured_##n>(#n, nullptr, #n ".out", BinaryOp<Binary::B, Accepts::A>{})
  // NAME.Tensor / NAME.Scalar, their in-place and out= overloads.
#define EW_COMPARE(n, C)                                                                                           \
  m.structured<structured_##n##_Scalar>(#n ".Scalar", #n "_.Scalar", #n ".Scalar_out", CompareOp<shlo::Cmp::C>{}); \
  m.structured<structured_##n##_Tensor>(#n ".Tensor", #n "_.Tensor", #n ".Tensor_out", CompareOp<shlo::Cmp::C>{})
  m.impl("__ilshift__.Scalar", &ilshift_Scalar);
  m.impl("__irshift__.Scalar", &irshift_Scalar);
  m.structured<ShiftMeta>("__lshift__.Tensor", "__ilshift__.Tensor", nullptr, Shift<true>{});
  m.impl("__lshift__.Scalar", &lshift_Scalar);
  m.structured<ShiftMeta>("__rshift__.Tensor", "__irshift__.Tensor", nullptr, Shift<false>{});
  m.impl("__rshift__.Scalar", &rshift_Scalar);
  m.structured<structured_add_Tensor>("add.Tensor", "add_.Tensor", "add.out", Add{});
  EW_BINARY(atan2, Atan2, All);
  EW_BINARY_T(bitwise_and, BitwiseAnd, IntBool);
  m.structured<structured_bitwise_left_shift_Tensor>("bitwise_left_shift.Tensor", "bitwise_left_shift_.Tensor",
                                                     "bitwise_left_shift.Tensor_out", Shift<true>{});
  EW_BINARY_T(bitwise_or, BitwiseOr, IntBool);
  m.structured<structured_bitwise_right_shift_Tensor>("bitwise_right_shift.Tensor", "bitwise_right_shift_.Tensor",
                                                      "bitwise_right_shift.Tensor_out", Shift<false>{});
  EW_BINARY_T(bitwise_xor, BitwiseXor, IntBool);
  m.structured<structured_copysign_Tensor>("copysign.Tensor", "copysign_.Tensor", "copysign.out",
                                           BinaryOp<Binary::Copysign, Accepts::All>{});
  m.structured<structured_div_Tensor>("div.Tensor", "div_.Tensor", "div.out", Div{});
  m.structured<structured_div_Tensor_mode>("div.Tensor_mode", "div_.Tensor_mode", "div.out_mode", DivMode{});
  EW_COMPARE(eq, EQ);
  m.structured<BinaryMeta<>>("floor_divide", "floor_divide_.Tensor", "floor_divide.out", FloorDivide{});
  EW_BINARY2(fmax, Fmax, All);
  EW_BINARY2(fmin, Fmin, All);
  EW_BINARY_T(fmod, Fmod, NoBool);
  m.structured<structured_gcd>("gcd", "gcd_", "gcd.out", Gcd<false>{});
  EW_COMPARE(ge, GE);
  EW_COMPARE(gt, GT);
  EW_BINARY(heaviside, Heaviside, All);
  EW_BINARY(hypot, Hypot, Float);
  m.structured<structured_lcm>("lcm", "lcm_", "lcm.out", Gcd<true>{});
  EW_COMPARE(le, LE);
  EW_BINARY2(logaddexp, Logaddexp, FloatComplex);
  EW_BINARY2(logaddexp2, Logaddexp2, Float);
  m.impl("logical_and", &logical<Binary::LogicalAnd>);
  m.structured<ComparisonMeta>(nullptr, nullptr, "logical_and.out", BinaryOp<Binary::LogicalAnd, Accepts::All>{});
  m.impl("logical_and_", &logical_<Binary::LogicalAnd>);
  m.impl("logical_or", &logical<Binary::LogicalOr>);
  m.structured<ComparisonMeta>(nullptr, nullptr, "logical_or.out", BinaryOp<Binary::LogicalOr, Accepts::All>{});
  m.impl("logical_or_", &logical_<Binary::LogicalOr>);
  m.impl("logical_xor", &logical<Binary::LogicalXor>);
  m.structured<ComparisonMeta>(nullptr, nullptr, "logical_xor.out", BinaryOp<Binary::LogicalXor, Accepts::All>{});
  m.impl("logical_xor_", &logical_<Binary::LogicalXor>);
  EW_COMPARE(lt, LT);
  EW_BINARY2(maximum, Maximum, All);
  EW_BINARY2(minimum, Minimum, All);
  m.structured<structured_mul_Tensor>("mul.Tensor", "mul_.Tensor", "mul.out", Mul{});
  EW_COMPARE(ne, NE);
  m.structured<structured_nextafter>("nextafter", "nextafter_", "nextafter.out", Nextafter{});
  m.impl("pow.Scalar", &pow_Scalar);
  m.impl("pow.Scalar_out", &pow_Scalar_out);
  m.structured<structured_pow_Tensor_Scalar>("pow.Tensor_Scalar", "pow_.Scalar", "pow.Tensor_Scalar_out",
                                             PowTensorScalar{});
  m.structured<structured_pow_Tensor_Tensor>("pow.Tensor_Tensor", "pow_.Tensor", "pow.Tensor_Tensor_out",
                                             BinaryOp<Binary::Pow, Accepts::NoBool>{});
  m.impl("remainder.Scalar_Tensor", &remainder_Scalar_Tensor);
  m.structured<structured_remainder_Tensor>("remainder.Tensor", "remainder_.Tensor", "remainder.Tensor_out",
                                            RemainderOp{});
  m.impl("rsub.Tensor", &rsub_Tensor);
  m.structured<structured_special_xlog1py>("special_xlog1py", nullptr, "special_xlog1py.out", Xlog1py{});
  m.structured<structured_sub_Tensor>("sub.Tensor", "sub_.Tensor", "sub.out", Sub{});
  m.structured<structured_xlogy_Tensor>("xlogy.Tensor", "xlogy_.Tensor", "xlogy.OutTensor",
                                        BinaryOp<Binary::Xlogy, Accepts::All>{});
#undef EW_BINARY
#undef EW_BINARY_T
#undef EW_BINARY2
#undef EW_COMPARE
}

}  // namespace tpu::ew
