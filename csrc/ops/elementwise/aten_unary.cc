// The elementwise family's unary ops: math (exp, log, sin, ..., erf, lgamma,
// digamma, polygamma), rounding (round.decimals included), neg / abs / sign
// / sgn, the predicates (isinf, isnan, isposinf, isneginf, signbit),
// bitwise_not / logical_not, nan_to_num and complex conjugation: ATen entry
// points and their registration. Output metadata comes from PyTorch's
// structured meta classes, or for ops ATen implements without one, from the
// same TensorIterator configuration its CPU kernel builds (aten_metas.h).
#include <ATen/Dispatch.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/acos_meta.h>
#include <ATen/ops/acosh_meta.h>
#include <ATen/ops/asin_meta.h>
#include <ATen/ops/asinh_meta.h>
#include <ATen/ops/atan_meta.h>
#include <ATen/ops/atanh_meta.h>
#include <ATen/ops/bitwise_not_meta.h>
#include <ATen/ops/ceil_meta.h>
#include <ATen/ops/cos_meta.h>
#include <ATen/ops/cosh_meta.h>
#include <ATen/ops/digamma_meta.h>
#include <ATen/ops/erf_meta.h>
#include <ATen/ops/erfc_meta.h>
#include <ATen/ops/erfinv_meta.h>
#include <ATen/ops/exp2_meta.h>
#include <ATen/ops/exp_meta.h>
#include <ATen/ops/expm1_meta.h>
#include <ATen/ops/floor_meta.h>
#include <ATen/ops/frac_meta.h>
#include <ATen/ops/isneginf_meta.h>
#include <ATen/ops/isposinf_meta.h>
#include <ATen/ops/lgamma_meta.h>
#include <ATen/ops/log10_meta.h>
#include <ATen/ops/log1p_meta.h>
#include <ATen/ops/log2_meta.h>
#include <ATen/ops/log_meta.h>
#include <ATen/ops/neg_meta.h>
#include <ATen/ops/polygamma_meta.h>
#include <ATen/ops/reciprocal_meta.h>
#include <ATen/ops/round_meta.h>
#include <ATen/ops/rsqrt_meta.h>
#include <ATen/ops/sgn_meta.h>
#include <ATen/ops/sigmoid_meta.h>
#include <ATen/ops/sign_meta.h>
#include <ATen/ops/signbit_meta.h>
#include <ATen/ops/sin_meta.h>
#include <ATen/ops/sinc_meta.h>
#include <ATen/ops/sinh_meta.h>
#include <ATen/ops/sqrt_meta.h>
#include <ATen/ops/tan_meta.h>
#include <ATen/ops/tanh_meta.h>
#include <ATen/ops/trunc_meta.h>

#include <cmath>
#include <limits>

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
using ops::Unary;

template <Unary U, Accepts A>
struct UnaryOp {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self) const {
    check_dtype(ops::name(U), m.common_dtype(), A);
    pointwise(out, ops::name(U), {self}, common(m), {},
              [](Builder& b, const Vals& v) { return ops::unary(b, U, v[0]); });
  }
};

struct RoundDecimals {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, int64_t decimals) const {
    if (decimals == 0) return UnaryOp<Unary::Round, Accepts::NoBool>{}(m, out, self);
    check_dtype("round", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    bool negative = decimals < 0;
    double ten_pow = std::pow(10.0, static_cast<double>(negative ? -decimals : decimals));
    // 10^|decimals| is an operand (in the dtype the math runs in): other
    // decimals of the same sign share the program.
    pointwise(
        out, "round_decimals", {self}, c, {scalar_of(ten_pow, ops::opmath(c))},
        [](Builder& b, const Vals& v, bool negative) { return ops::round_decimals(b, v[0], v[1], negative); },
        negative);
  }
};

struct NanToNum {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, std::optional<double> nan,
                  std::optional<double> posinf, std::optional<double> neginf) const {
    // A complex value's parts are replaced one by one, with its parts' limits.
    at::ScalarType t = c10::toRealValueType(m.common_dtype());
    double hi = 0, lo = 0;
    if (at::isFloatingType(t)) {
      AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, t, "nan_to_num", [&] {
        hi = static_cast<double>(std::numeric_limits<scalar_t>::max());
        lo = static_cast<double>(std::numeric_limits<scalar_t>::lowest());
      });
    }
    shlo::DType c = common(m);
    shlo::DType part = shlo::is_complex(c) ? ops::real_of(c) : c;
    pointwise(out, "nan_to_num", {self}, c,
              {scalar_of(nan.value_or(0.0), part), scalar_of(posinf.value_or(hi), part),
               scalar_of(neginf.value_or(lo), part)},
              [](Builder& b, const Vals& v) { return ops::nan_to_num(b, v[0], v[1], v[2], v[3]); });
  }
};
using NanToNumMeta = UnaryMeta<std::optional<double>, std::optional<double>, std::optional<double>>;

struct Polygamma {
  template <class M>
  void operator()(M& m, const at::Tensor& out, int64_t n, const at::Tensor& self) const {
    if (n == 0) return UnaryOp<Unary::Digamma, Accepts::All>{}(m, out, self);
    shlo::DType c = common(m);
    pointwise(out, "polygamma", {self}, c, {scalar_of(n, ops::opmath(c))},
              [](Builder& b, const Vals& v) { return ops::polygamma(b, v[1], v[0]); });
  }
};

// ---- polygamma: n comes before self, so the structured wrappers do not apply.

using MPolygamma = at::meta::structured_polygamma;
at::Tensor polygamma(int64_t n, const at::Tensor& s) { return functional<MPolygamma>(Polygamma{}, n, s); }
at::Tensor& polygamma_out(int64_t n, const at::Tensor& s, at::Tensor& out) {
  return out_variant<MPolygamma>(out, Polygamma{}, n, s);
}
at::Tensor& polygamma_(at::Tensor& s, int64_t n) {
  // ATen's in-place overload puts self first; the meta wants (n, self).
  Structured<MPolygamma> m({s}, true);
  m.meta(n, s);
  Polygamma{}(m, s, n, s);
  return s;
}

// ---- abs: of a complex tensor, its real modulus (PyTorch's complex-to-float unary rule).

using AbsOp = UnaryOp<Unary::Abs, Accepts::NoBool>;

void complex_abs_into(const at::Tensor& out, const at::Tensor& s) {
  pointwise(out, "abs_complex", {s}, to_shlo(s.scalar_type()), {},
            [](Builder& b, const Vals& v) { return ops::unary(b, Unary::Abs, v[0]); });
}
at::Tensor abs(const at::Tensor& s) {
  if (!s.is_complex()) return functional<UnaryMeta<>>(AbsOp{}, s);
  at::Tensor out = empty(s.sizes(), c10::toRealValueType(s.scalar_type()), s.device());
  complex_abs_into(out, s);
  return out;
}
at::Tensor& abs_(at::Tensor& s) {
  TORCH_CHECK(!s.is_complex(), "In-place abs is not supported for complex tensors.");
  return inplace<UnaryMeta<>>(s, AbsOp{});
}
at::Tensor& abs_out(const at::Tensor& s, at::Tensor& out) {
  if (!s.is_complex()) return out_variant<UnaryMeta<>>(out, AbsOp{}, s);
  // As the CPU: |z| into any out its real dtype casts to (a complex out
  // gets |z| + 0i).
  at::ScalarType real = c10::toRealValueType(s.scalar_type());
  TORCH_CHECK(at::canCast(real, out.scalar_type()), "result type ", real, " can't be cast to the desired output type ",
              out.scalar_type());
  at::native::resize_output(out, s.sizes());
  if (out.scalar_type() == real) {
    complex_abs_into(out, s);
  } else {
    out.copy_(ew::abs(s));
  }
  return out;
}

// ---- logical_not: a bool result unless out= / in-place say otherwise.

using LogicalNotOp = UnaryOp<Unary::LogicalNot, Accepts::All>;
at::Tensor logical_not(const at::Tensor& s) {
  at::Tensor out = empty({0}, at::kBool, s.device());
  return out_variant<AnyOutUnaryMeta>(out, LogicalNotOp{}, s);
}
at::Tensor& logical_not_(at::Tensor& s) { return out_variant<AnyOutUnaryMeta>(s, LogicalNotOp{}, s); }

// ---- complex conjugation (real tensors: the identity)

engine::Ref conj_ref(const at::Tensor& self) {
  engine::Ref v = read(self);
  if (!self.is_complex()) return v;
  return op1("conj_physical", {v}, type_of(self), [](Builder& b, const Vals& in) { return Vals{ops::conj(b, in[0])}; });
}
at::Tensor conj_physical(const at::Tensor& self) { return wrap(conj_ref(self), self.device()); }
at::Tensor& conj_physical_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "conj_physical: expected out dtype ", self.scalar_type(),
              ", got ", out.scalar_type());
  engine::Ref v = conj_ref(self);
  at::native::resize_output(out, v.type().shape);
  write(out, std::move(v));
  return out;
}
at::Tensor& conj_physical_(at::Tensor& self) {
  if (self.is_complex()) write(self, conj_ref(self));
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  // NAME, NAME_ (in-place), NAME.out of a structured unary op.
#define EW_UNARY(n, U, A) m.structured<at::meta::structured_##n>(#n, #n "_", #n ".out", UnaryOp<Unary::U, Accepts::A>{})
  m.impl("_conj_physical", &conj_physical);
  m.impl("abs", &abs);
  m.impl("abs.out", &abs_out);
  m.impl("abs_", &abs_);
  EW_UNARY(acos, Acos, All);
  EW_UNARY(acosh, Acosh, All);
  EW_UNARY(asin, Asin, All);
  EW_UNARY(asinh, Asinh, All);
  EW_UNARY(atan, Atan, All);
  EW_UNARY(atanh, Atanh, All);
  EW_UNARY(bitwise_not, BitwiseNot, IntBool);
  EW_UNARY(ceil, Ceil, NoBool);
  m.impl("conj_physical.out", &conj_physical_out);
  m.impl("conj_physical_", &conj_physical_);
  EW_UNARY(cos, Cos, All);
  EW_UNARY(cosh, Cosh, All);
  EW_UNARY(digamma, Digamma, All);
  EW_UNARY(erf, Erf, All);
  EW_UNARY(erfc, Erfc, All);
  EW_UNARY(erfinv, Erfinv, All);
  EW_UNARY(exp, Exp, All);
  EW_UNARY(exp2, Exp2, All);
  EW_UNARY(expm1, Expm1, All);
  EW_UNARY(floor, Floor, NoBool);
  EW_UNARY(frac, Frac, Float);
  m.structured<BoolUnaryMeta>("isinf", nullptr, nullptr, UnaryOp<Unary::Isinf, Accepts::All>{});
  m.structured<BoolUnaryMeta>("isnan", nullptr, nullptr, UnaryOp<Unary::Isnan, Accepts::All>{});
  m.structured<at::meta::structured_isneginf>("isneginf", nullptr, "isneginf.out",
                                              UnaryOp<Unary::Isneginf, Accepts::All>{});
  m.structured<at::meta::structured_isposinf>("isposinf", nullptr, "isposinf.out",
                                              UnaryOp<Unary::Isposinf, Accepts::All>{});
  EW_UNARY(lgamma, Lgamma, All);
  EW_UNARY(log, Log, All);
  EW_UNARY(log10, Log10, All);
  EW_UNARY(log1p, Log1p, All);
  EW_UNARY(log2, Log2, All);
  m.impl("logical_not", &logical_not);
  m.structured<AnyOutUnaryMeta>(nullptr, nullptr, "logical_not.out", LogicalNotOp{});
  m.impl("logical_not_", &logical_not_);
  m.structured<NanToNumMeta>("nan_to_num", "nan_to_num_", "nan_to_num.out", NanToNum{});
  EW_UNARY(neg, Neg, All);
  m.impl("polygamma", &polygamma);
  m.impl("polygamma.out", &polygamma_out);
  m.impl("polygamma_", &polygamma_);
  EW_UNARY(reciprocal, Reciprocal, All);
  EW_UNARY(round, Round, NoBool);
  m.structured<at::meta::structured_round_decimals>("round.decimals", "round_.decimals", "round.decimals_out",
                                                    RoundDecimals{});
  EW_UNARY(rsqrt, Rsqrt, All);
  EW_UNARY(sgn, Sign, All);
  EW_UNARY(sigmoid, Sigmoid, All);
  EW_UNARY(sign, Sign, All);
  m.structured<at::meta::structured_signbit>("signbit", nullptr, "signbit.out",
                                             UnaryOp<Unary::Signbit, Accepts::All>{});
  EW_UNARY(sin, Sin, All);
  EW_UNARY(sinc, Sinc, All);
  EW_UNARY(sinh, Sinh, All);
  EW_UNARY(sqrt, Sqrt, All);
  EW_UNARY(tan, Tan, All);
  EW_UNARY(tanh, Tanh, All);
  EW_UNARY(trunc, Trunc, NoBool);
#undef EW_UNARY
}

}  // namespace tpu::ew
