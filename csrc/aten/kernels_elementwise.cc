// The elementwise family, part one: unary math and predicates, activations
// and their backward formulas, where, clamp, masked_fill (binary ops and
// comparisons are in kernels_binary.cc). Output metadata comes from
// PyTorch's structured meta classes, or for ops ATen implements without one,
// from the same TensorIterator configuration its CPU kernel builds.
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/ops/acos_meta.h>
#include <ATen/ops/acosh_meta.h>
#include <ATen/ops/asin_meta.h>
#include <ATen/ops/asinh_meta.h>
#include <ATen/ops/atan_meta.h>
#include <ATen/ops/atanh_meta.h>
#include <ATen/ops/bitwise_not_meta.h>
#include <ATen/ops/ceil_meta.h>
#include <ATen/ops/clamp_max_meta.h>
#include <ATen/ops/clamp_meta.h>
#include <ATen/ops/clamp_min_meta.h>
#include <ATen/ops/cos_meta.h>
#include <ATen/ops/cosh_meta.h>
#include <ATen/ops/digamma_meta.h>
#include <ATen/ops/elu_backward_meta.h>
#include <ATen/ops/elu_meta.h>
#include <ATen/ops/erf_meta.h>
#include <ATen/ops/erfc_meta.h>
#include <ATen/ops/erfinv_meta.h>
#include <ATen/ops/exp2_meta.h>
#include <ATen/ops/exp_meta.h>
#include <ATen/ops/expm1_meta.h>
#include <ATen/ops/floor_meta.h>
#include <ATen/ops/frac_meta.h>
#include <ATen/ops/gelu_backward_meta.h>
#include <ATen/ops/gelu_meta.h>
#include <ATen/ops/hardshrink_backward_meta.h>
#include <ATen/ops/hardshrink_meta.h>
#include <ATen/ops/hardsigmoid_backward_meta.h>
#include <ATen/ops/hardsigmoid_meta.h>
#include <ATen/ops/isneginf_meta.h>
#include <ATen/ops/isposinf_meta.h>
#include <ATen/ops/leaky_relu_backward_meta.h>
#include <ATen/ops/leaky_relu_meta.h>
#include <ATen/ops/lgamma_meta.h>
#include <ATen/ops/log10_meta.h>
#include <ATen/ops/log1p_meta.h>
#include <ATen/ops/log2_meta.h>
#include <ATen/ops/log_meta.h>
#include <ATen/ops/logit_backward_meta.h>
#include <ATen/ops/mish_meta.h>
#include <ATen/ops/neg_meta.h>
#include <ATen/ops/polygamma_meta.h>
#include <ATen/ops/reciprocal_meta.h>
#include <ATen/ops/round_meta.h>
#include <ATen/ops/rsqrt_meta.h>
#include <ATen/ops/sgn_meta.h>
#include <ATen/ops/sigmoid_backward_meta.h>
#include <ATen/ops/sigmoid_meta.h>
#include <ATen/ops/sign_meta.h>
#include <ATen/ops/signbit_meta.h>
#include <ATen/ops/silu_backward_meta.h>
#include <ATen/ops/silu_meta.h>
#include <ATen/ops/sin_meta.h>
#include <ATen/ops/sinc_meta.h>
#include <ATen/ops/sinh_meta.h>
#include <ATen/ops/softplus_backward_meta.h>
#include <ATen/ops/softplus_meta.h>
#include <ATen/ops/softshrink_backward_meta.h>
#include <ATen/ops/softshrink_meta.h>
#include <ATen/ops/sqrt_meta.h>
#include <ATen/ops/tan_meta.h>
#include <ATen/ops/tanh_backward_meta.h>
#include <ATen/ops/tanh_meta.h>
#include <ATen/ops/threshold_backward_meta.h>
#include <ATen/ops/threshold_meta.h>
#include <ATen/ops/trunc_meta.h>

#include <cmath>
#include <limits>

#include "aten/ew_checks.h"
#include "aten/kernels.h"
#include "aten/structured.h"
#include "ops/elementwise/elementwise.h"

namespace tpu::ew {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;
using ops::Binary;
using ops::Unary;

// Scalar parameters (slopes, coefficients) in the dtype the math runs in.
engine::Ref param(const at::Scalar& s, shlo::DType compute) { return scalar_of(s, ops::opmath(compute)); }

// TensorIterator configurations of the ops ATen implements without a
// structured kernel (the ones their CPU kernels build). Arguments past the
// tensors (scalars, flags) do not change the output metadata.
struct UnaryMeta : at::TensorIteratorBase {
  template <class... Rest>
  void meta(const at::Tensor& a, const Rest&...) {
    build_borrowing_unary_op(maybe_get_output(), a);
  }
};
// TensorIterator::unary_float_op (logit): integer inputs compute in float.
struct UnaryFloatMeta : at::TensorIteratorBase {
  template <class... Rest>
  void meta(const at::Tensor& a, const Rest&...) {
    build_borrowing_unary_float_op(maybe_get_output(), a);
  }
};
struct BoolUnaryMeta : at::TensorIteratorBase {
  void meta(const at::Tensor& a) { build_borrowing_unary_force_boolean_op(maybe_get_output(), a); }
};
// The output keeps whatever dtype it has (logical_not).
struct AnyOutUnaryMeta : at::TensorIteratorBase {
  void meta(const at::Tensor& a) {
    at::TensorIteratorConfig config;
    config.check_all_same_dtype(false).add_output(maybe_get_output()).add_const_input(a);
    build(config);
  }
};
struct BinaryMeta : at::TensorIteratorBase {
  template <class... Rest>
  void meta(const at::Tensor& a, const at::Tensor& b, const Rest&...) {
    build_borrowing_binary_op(maybe_get_output(), a, b);
  }
};

template <Unary U, Accepts A>
struct UnaryOp {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self) const {
    check_dtype(ops::name(U), m.common_dtype(), A);
    legacy_pointwise(out, ops::name(U), {self}, common(m), {},
                     [](Builder& b, const Vals& v) { return ops::unary(b, U, v[0]); });
  }
};

// (grad, saved tensor) backward formulas.
template <Binary B>
struct BackwardOp {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& saved) const {
    check_dtype(ops::name(B), m.common_dtype(), Accepts::Float);
    legacy_pointwise(out, ops::name(B), {grad, saved}, common(m), {},
                     [](Builder& b, const Vals& v) { return ops::binary(b, B, v[0], v[1]); });
  }
};

bool gelu_is_tanh(c10::string_view approximate) {
  if (approximate == "none") return false;
  TORCH_CHECK(approximate == "tanh", "approximate argument must be either none or tanh.");
  return true;
}

struct RoundDecimals {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, int64_t decimals) const {
    if (decimals == 0) return UnaryOp<Unary::Round, Accepts::NoBool>{}(m, out, self);
    check_dtype("round", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    bool negative = decimals < 0;
    double ten_pow = std::pow(10.0, static_cast<double>(negative ? -decimals : decimals));
    legacy_pointwise(out, negative ? "round_decimals_neg" : "round_decimals", {self}, c, {param(ten_pow, c)},
                     [negative](Builder& b, const Vals& v) { return ops::round_decimals(b, v[0], v[1], negative); });
  }
};

struct NanToNum {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, std::optional<double> nan,
                  std::optional<double> posinf, std::optional<double> neginf) const {
    at::ScalarType t = m.common_dtype();
    double hi = 0, lo = 0;
    if (at::isFloatingType(t)) {
      AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, t, "nan_to_num", [&] {
        hi = static_cast<double>(std::numeric_limits<scalar_t>::max());
        lo = static_cast<double>(std::numeric_limits<scalar_t>::lowest());
      });
    }
    shlo::DType c = common(m);
    legacy_pointwise(
        out, "nan_to_num", {self}, c,
        {scalar_of(nan.value_or(0.0), c), scalar_of(posinf.value_or(hi), c), scalar_of(neginf.value_or(lo), c)},
        [](Builder& b, const Vals& v) { return ops::nan_to_num(b, v[0], v[1], v[2], v[3]); });
  }
};

struct Threshold {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Scalar& th,
                  const at::Scalar& value) const {
    check_dtype("threshold", m.common_dtype(), Accepts::NoBool);
    shlo::DType c = common(m);
    legacy_pointwise(out, "threshold", {self}, c, {param(th, c), param(value, c)},
                     [](Builder& b, const Vals& v) { return ops::threshold(b, v[0], v[0], v[1], v[2]); });
  }
};

struct ThresholdBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& self,
                  const at::Scalar& th) const {
    check_dtype("threshold_backward", m.common_dtype(), Accepts::NoBool);
    shlo::DType c = common(m);
    legacy_pointwise(out, "threshold_backward", {self, grad}, c, {param(th, c), scalar_of(0, c)},
                     [](Builder& b, const Vals& v) { return ops::threshold(b, v[0], v[1], v[2], v[3]); });
  }
};

struct Gelu {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, c10::string_view approximate) const {
    if (gelu_is_tanh(approximate)) return UnaryOp<Unary::GeluTanh, Accepts::Float>{}(m, out, self);
    UnaryOp<Unary::Gelu, Accepts::Float>{}(m, out, self);
  }
};

struct GeluBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& self,
                  c10::string_view approximate) const {
    if (gelu_is_tanh(approximate)) return BackwardOp<Binary::GeluTanhBackward>{}(m, out, grad, self);
    BackwardOp<Binary::GeluBackward>{}(m, out, grad, self);
  }
};

struct LeakyRelu {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Scalar& slope) const {
    check_dtype("leaky_relu", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    legacy_pointwise(out, "leaky_relu", {self}, c, {param(slope, c)},
                     [](Builder& b, const Vals& v) { return ops::leaky_relu(b, v[0], v[1]); });
  }
};

struct LeakyReluBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& self, const at::Scalar& slope,
                  bool /*self_is_result: checked by the meta*/) const {
    check_dtype("leaky_relu_backward", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    legacy_pointwise(out, "leaky_relu_backward", {grad, self}, c, {param(slope, c)},
                     [](Builder& b, const Vals& v) { return ops::leaky_relu_backward(b, v[0], v[1], v[2]); });
  }
};

struct Elu {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Scalar& alpha, const at::Scalar& scale,
                  const at::Scalar& input_scale) const {
    check_dtype("elu", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    legacy_pointwise(out, "elu", {self}, c, {param(alpha, c), param(scale, c), param(input_scale, c)},
                     [](Builder& b, const Vals& v) { return ops::elu(b, v[0], v[1], v[2], v[3]); });
  }
};

struct EluBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Scalar& alpha, const at::Scalar& scale,
                  const at::Scalar& input_scale, bool is_result, const at::Tensor& self_or_result) const {
    check_dtype("elu_backward", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    legacy_pointwise(out, is_result ? "elu_backward_result" : "elu_backward", {grad, self_or_result}, c,
                     {param(alpha, c), param(scale, c), param(input_scale, c)}, [is_result](Builder& b, const Vals& v) {
                       return ops::elu_backward(b, v[0], v[1], v[2], v[3], v[4], is_result);
                     });
  }
};

struct HardtanhBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& self, const at::Scalar& lo,
                  const at::Scalar& hi) const {
    check_dtype("hardtanh_backward", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    legacy_pointwise(out, "hardtanh_backward", {grad, self}, c, {param(lo, c), param(hi, c)},
                     [](Builder& b, const Vals& v) { return ops::hardtanh_backward(b, v[0], v[1], v[2], v[3]); });
  }
};

struct Softplus {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Scalar& beta,
                  const at::Scalar& threshold) const {
    check_dtype("softplus", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    legacy_pointwise(out, "softplus", {self}, c, {param(beta, c), param(threshold, c)},
                     [](Builder& b, const Vals& v) { return ops::softplus(b, v[0], v[1], v[2]); });
  }
};

struct SoftplusBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& self, const at::Scalar& beta,
                  const at::Scalar& threshold) const {
    check_dtype("softplus_backward", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    legacy_pointwise(out, "softplus_backward", {grad, self}, c, {param(beta, c), param(threshold, c)},
                     [](Builder& b, const Vals& v) { return ops::softplus_backward(b, v[0], v[1], v[2], v[3]); });
  }
};

template <bool Soft>
struct Shrink {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Scalar& lambd) const {
    const char* name = Soft ? "softshrink" : "hardshrink";
    check_dtype(name, m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    legacy_pointwise(out, name, {self}, c, {Soft ? param(lambd, c) : scalar_of(lambd, c)},
                     [](Builder& b, const Vals& v) { return ops::shrink(b, v[0], v[1], Soft); });
  }
};

struct ShrinkBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& self,
                  const at::Scalar& lambd) const {
    check_dtype("shrink_backward", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    legacy_pointwise(out, "shrink_backward", {grad, self}, c, {scalar_of(lambd, c)},
                     [](Builder& b, const Vals& v) { return ops::shrink_backward(b, v[0], v[1], v[2]); });
  }
};

struct Polygamma {
  template <class M>
  void operator()(M& m, const at::Tensor& out, int64_t n, const at::Tensor& self) const {
    if (n == 0) return UnaryOp<Unary::Digamma, Accepts::All>{}(m, out, self);
    shlo::DType c = common(m);
    legacy_pointwise(out, "polygamma", {self}, c, {scalar_of(n, ops::opmath(c))},
                     [](Builder& b, const Vals& v) { return ops::polygamma(b, v[1], v[0]); });
  }
};

// eps absent or negative: no clamping (the CPU kernel's rule).
bool logit_clamps(std::optional<double> eps) { return eps.has_value() && *eps >= 0; }

struct Logit {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, std::optional<double> eps) const {
    check_dtype("logit", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    bool clamps = logit_clamps(eps);
    std::vector<engine::Ref> extra;
    if (clamps) extra.push_back(param(*eps, c));
    legacy_pointwise(out, clamps ? "logit_eps" : "logit", {self}, c, extra, [clamps](Builder& b, const Vals& v) {
      return ops::logit(b, v[0], clamps ? std::optional<Value>(v[1]) : std::nullopt);
    });
  }
};

struct LogitBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& self,
                  std::optional<double> eps) const {
    check_dtype("logit_backward", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    bool clamps = logit_clamps(eps);
    std::vector<engine::Ref> extra;
    if (clamps) extra.push_back(param(*eps, c));
    legacy_pointwise(out, clamps ? "logit_backward_eps" : "logit_backward", {grad, self}, c, extra,
                     [clamps](Builder& b, const Vals& v) {
                       return ops::logit_backward(b, v[0], v[1], clamps ? std::optional<Value>(v[2]) : std::nullopt);
                     });
  }
};

// clamp with Scalar bounds (scalar operands) or Tensor bounds (broadcast inputs).
struct ClampScalar {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, at::OptionalScalarRef lo,
                  at::OptionalScalarRef hi) const {
    check_dtype("clamp", m.common_dtype(), Accepts::NoBool);
    shlo::DType c = common(m);
    std::vector<engine::Ref> bounds;
    if (lo) bounds.push_back(scalar_of(lo.get(), c));
    if (hi) bounds.push_back(scalar_of(hi.get(), c));
    bool has_lo = lo.has_value(), has_hi = hi.has_value();
    legacy_pointwise(out, std::string("clamp") + (has_lo ? "_lo" : "") + (has_hi ? "_hi" : ""), {self}, c, bounds,
                     [has_lo, has_hi](Builder& b, const Vals& v) {
                       std::optional<Value> l, h;
                       if (has_lo) l = v[1];
                       if (has_hi) h = v[has_lo ? 2 : 1];
                       return ops::clamp(b, v[0], l, h);
                     });
  }
};

struct ClampTensor {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, at::OptionalTensorRef lo,
                  at::OptionalTensorRef hi) const {
    // One tensor bound is a plain minimum / maximum, which the CPU allows for bool.
    check_dtype("clamp", m.common_dtype(), lo.has_value() != hi.has_value() ? Accepts::All : Accepts::NoBool);
    std::vector<at::Tensor> in{self};
    if (lo) in.push_back(*lo);
    if (hi) in.push_back(*hi);
    bool has_lo = lo.has_value(), has_hi = hi.has_value();
    legacy_pointwise(out, std::string("clamp_t") + (has_lo ? "_lo" : "") + (has_hi ? "_hi" : ""), in, common(m), {},
                     [has_lo, has_hi](Builder& b, const Vals& v) {
                       std::optional<Value> l, h;
                       if (has_lo) l = v[1];
                       if (has_hi) h = v[has_lo ? 2 : 1];
                       return ops::clamp(b, v[0], l, h);
                     });
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

// where / masked_fill: out already has its final shape and dtype.
void where_into(const at::Tensor& out, const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other) {
  legacy_pointwise(out, "where", {cond, self, other}, to_shlo(out.scalar_type()), {},
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

void masked_fill_check(const at::Tensor& mask) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
}

void masked_fill_into(const at::Tensor& out, const at::Tensor& self, const at::Tensor& mask, engine::Ref value) {
  legacy_pointwise(out, "masked_fill", {self, mask}, to_shlo(out.scalar_type()), {value},
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

}  // namespace

// ---- unary math and predicates: NAME, NAME_ (in-place), NAME_out
#define EW_UNARY(n, Meta, U, A)                                                                      \
  at::Tensor n(const at::Tensor& s) { return functional<Meta>(UnaryOp<Unary::U, Accepts::A>{}, s); } \
  at::Tensor& n##_(at::Tensor& s) { return inplace<Meta>(s, UnaryOp<Unary::U, Accepts::A>{}); }      \
  at::Tensor& n##_out(const at::Tensor& s, at::Tensor& out) {                                        \
    return out_variant<Meta>(out, UnaryOp<Unary::U, Accepts::A>{}, s);                               \
  }

EW_UNARY(acos, at::meta::structured_acos, Acos, All)
EW_UNARY(acosh, at::meta::structured_acosh, Acosh, All)
EW_UNARY(asin, at::meta::structured_asin, Asin, All)
EW_UNARY(asinh, at::meta::structured_asinh, Asinh, All)
EW_UNARY(atan, at::meta::structured_atan, Atan, All)
EW_UNARY(atanh, at::meta::structured_atanh, Atanh, All)
EW_UNARY(bitwise_not, at::meta::structured_bitwise_not, BitwiseNot, IntBool)
EW_UNARY(ceil, at::meta::structured_ceil, Ceil, NoBool)
EW_UNARY(cos, at::meta::structured_cos, Cos, All)
EW_UNARY(cosh, at::meta::structured_cosh, Cosh, All)
EW_UNARY(digamma, at::meta::structured_digamma, Digamma, All)
EW_UNARY(erf, at::meta::structured_erf, Erf, All)
EW_UNARY(erfc, at::meta::structured_erfc, Erfc, All)
EW_UNARY(erfinv, at::meta::structured_erfinv, Erfinv, All)
EW_UNARY(exp, at::meta::structured_exp, Exp, All)
EW_UNARY(exp2, at::meta::structured_exp2, Exp2, All)
EW_UNARY(expm1, at::meta::structured_expm1, Expm1, All)
EW_UNARY(floor, at::meta::structured_floor, Floor, NoBool)
EW_UNARY(frac, at::meta::structured_frac, Frac, Float)
EW_UNARY(hardsigmoid, at::meta::structured_hardsigmoid, Hardsigmoid, Float)
EW_UNARY(hardswish, UnaryMeta, Hardswish, Float)
EW_UNARY(lgamma, at::meta::structured_lgamma, Lgamma, All)
EW_UNARY(log, at::meta::structured_log, Log, All)
EW_UNARY(log10, at::meta::structured_log10, Log10, All)
EW_UNARY(log1p, at::meta::structured_log1p, Log1p, All)
EW_UNARY(log2, at::meta::structured_log2, Log2, All)
EW_UNARY(mish, at::meta::structured_mish, Mish, Float)
EW_UNARY(neg, at::meta::structured_neg, Neg, All)
EW_UNARY(reciprocal, at::meta::structured_reciprocal, Reciprocal, All)
EW_UNARY(round, at::meta::structured_round, Round, NoBool)
EW_UNARY(rsqrt, at::meta::structured_rsqrt, Rsqrt, All)
EW_UNARY(sgn, at::meta::structured_sgn, Sign, All)
EW_UNARY(sigmoid, at::meta::structured_sigmoid, Sigmoid, All)
EW_UNARY(sign, at::meta::structured_sign, Sign, All)
EW_UNARY(silu, at::meta::structured_silu, Silu, Float)
EW_UNARY(sin, at::meta::structured_sin, Sin, All)
EW_UNARY(sinc, at::meta::structured_sinc, Sinc, All)
EW_UNARY(sinh, at::meta::structured_sinh, Sinh, All)
EW_UNARY(sqrt, at::meta::structured_sqrt, Sqrt, All)
EW_UNARY(tan, at::meta::structured_tan, Tan, All)
EW_UNARY(tanh, at::meta::structured_tanh, Tanh, All)
EW_UNARY(trunc, at::meta::structured_trunc, Trunc, NoBool)
#undef EW_UNARY

// abs of a complex tensor is its real modulus (PyTorch's complex-to-float unary rule).
namespace {
void complex_abs_into(const at::Tensor& out, const at::Tensor& s) {
  legacy_pointwise(out, "abs", {s}, to_shlo(s.scalar_type()), {},
                   [](Builder& b, const Vals& v) { return ops::unary(b, Unary::Abs, v[0]); });
}
}  // namespace
at::Tensor abs(const at::Tensor& s) {
  if (!s.is_complex()) return functional<UnaryMeta>(UnaryOp<Unary::Abs, Accepts::NoBool>{}, s);
  at::Tensor out = empty(s.sizes(), c10::toRealValueType(s.scalar_type()), s.device());
  complex_abs_into(out, s);
  return out;
}
at::Tensor& abs_(at::Tensor& s) {
  TORCH_CHECK(!s.is_complex(), "In-place abs is not supported for complex tensors.");
  return inplace<UnaryMeta>(s, UnaryOp<Unary::Abs, Accepts::NoBool>{});
}
at::Tensor& abs_out(const at::Tensor& s, at::Tensor& out) {
  if (!s.is_complex()) return out_variant<UnaryMeta>(out, UnaryOp<Unary::Abs, Accepts::NoBool>{}, s);
  TORCH_CHECK(out.scalar_type() == c10::toRealValueType(s.scalar_type()), "abs: expected out dtype ",
              c10::toRealValueType(s.scalar_type()), ", got ", out.scalar_type());
  at::native::resize_output(out, s.sizes());
  complex_abs_into(out, s);
  return out;
}

at::Tensor round_decimals(const at::Tensor& s, int64_t d) {
  return functional<at::meta::structured_round_decimals>(RoundDecimals{}, s, d);
}
at::Tensor& round__decimals(at::Tensor& s, int64_t d) {
  return inplace<at::meta::structured_round_decimals>(s, RoundDecimals{}, d);
}
at::Tensor& round_decimals_out(const at::Tensor& s, int64_t d, at::Tensor& out) {
  return out_variant<at::meta::structured_round_decimals>(out, RoundDecimals{}, s, d);
}

at::Tensor isinf(const at::Tensor& s) { return functional<BoolUnaryMeta>(UnaryOp<Unary::Isinf, Accepts::All>{}, s); }
at::Tensor isnan(const at::Tensor& s) { return functional<BoolUnaryMeta>(UnaryOp<Unary::Isnan, Accepts::All>{}, s); }
at::Tensor isneginf(const at::Tensor& s) {
  return functional<at::meta::structured_isneginf>(UnaryOp<Unary::Isneginf, Accepts::All>{}, s);
}
at::Tensor& isneginf_out(const at::Tensor& s, at::Tensor& out) {
  return out_variant<at::meta::structured_isneginf>(out, UnaryOp<Unary::Isneginf, Accepts::All>{}, s);
}
at::Tensor isposinf(const at::Tensor& s) {
  return functional<at::meta::structured_isposinf>(UnaryOp<Unary::Isposinf, Accepts::All>{}, s);
}
at::Tensor& isposinf_out(const at::Tensor& s, at::Tensor& out) {
  return out_variant<at::meta::structured_isposinf>(out, UnaryOp<Unary::Isposinf, Accepts::All>{}, s);
}
at::Tensor signbit(const at::Tensor& s) {
  return functional<at::meta::structured_signbit>(UnaryOp<Unary::Signbit, Accepts::All>{}, s);
}
at::Tensor& signbit_out(const at::Tensor& s, at::Tensor& out) {
  return out_variant<at::meta::structured_signbit>(out, UnaryOp<Unary::Signbit, Accepts::All>{}, s);
}

at::Tensor& logical_not_out(const at::Tensor& s, at::Tensor& out) {
  return out_variant<AnyOutUnaryMeta>(out, UnaryOp<Unary::LogicalNot, Accepts::All>{}, s);
}
at::Tensor logical_not(const at::Tensor& s) {
  at::Tensor out = empty({0}, at::kBool, s.device());
  return ew::logical_not_out(s, out);
}
at::Tensor& logical_not_(at::Tensor& s) { return ew::logical_not_out(s, s); }

at::Tensor nan_to_num(const at::Tensor& s, std::optional<double> nan, std::optional<double> posinf,
                      std::optional<double> neginf) {
  return functional<UnaryMeta>(NanToNum{}, s, nan, posinf, neginf);
}
at::Tensor& nan_to_num_(at::Tensor& s, std::optional<double> nan, std::optional<double> posinf,
                        std::optional<double> neginf) {
  return inplace<UnaryMeta>(s, NanToNum{}, nan, posinf, neginf);
}
at::Tensor& nan_to_num_out(const at::Tensor& s, std::optional<double> nan, std::optional<double> posinf,
                           std::optional<double> neginf, at::Tensor& out) {
  return out_variant<UnaryMeta>(out, NanToNum{}, s, nan, posinf, neginf);
}

// ---- activations and their backward formulas

at::Tensor relu(const at::Tensor& s) {
  TORCH_CHECK(s.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  return functional<UnaryMeta>(UnaryOp<Unary::Relu, Accepts::All>{}, s);
}
at::Tensor& relu_(at::Tensor& s) {
  TORCH_CHECK(s.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  return inplace<UnaryMeta>(s, UnaryOp<Unary::Relu, Accepts::All>{});
}

using MThreshold = at::meta::structured_threshold;
at::Tensor threshold(const at::Tensor& s, const at::Scalar& th, const at::Scalar& v) {
  return functional<MThreshold>(Threshold{}, s, th, v);
}
at::Tensor& threshold_(at::Tensor& s, const at::Scalar& th, const at::Scalar& v) {
  return inplace<MThreshold>(s, Threshold{}, th, v);
}
at::Tensor& threshold_out(const at::Tensor& s, const at::Scalar& th, const at::Scalar& v, at::Tensor& out) {
  return out_variant<MThreshold>(out, Threshold{}, s, th, v);
}

using MThresholdBackward = at::meta::structured_threshold_backward;
at::Tensor threshold_backward(const at::Tensor& g, const at::Tensor& s, const at::Scalar& th) {
  return functional<MThresholdBackward>(ThresholdBackward{}, g, s, th);
}
at::Tensor& threshold_backward_grad_input(const at::Tensor& g, const at::Tensor& s, const at::Scalar& th,
                                          at::Tensor& gi) {
  return out_variant<MThresholdBackward>(gi, ThresholdBackward{}, g, s, th);
}

at::Tensor gelu(const at::Tensor& s, c10::string_view a) { return functional<at::meta::structured_gelu>(Gelu{}, s, a); }
at::Tensor& gelu_(at::Tensor& s, c10::string_view a) { return inplace<at::meta::structured_gelu>(s, Gelu{}, a); }
at::Tensor& gelu_out(const at::Tensor& s, c10::string_view a, at::Tensor& out) {
  return out_variant<at::meta::structured_gelu>(out, Gelu{}, s, a);
}
at::Tensor gelu_backward(const at::Tensor& g, const at::Tensor& s, c10::string_view a) {
  return functional<at::meta::structured_gelu_backward>(GeluBackward{}, g, s, a);
}
at::Tensor& gelu_backward_grad_input(const at::Tensor& g, const at::Tensor& s, c10::string_view a, at::Tensor& gi) {
  return out_variant<at::meta::structured_gelu_backward>(gi, GeluBackward{}, g, s, a);
}

#define EW_BACKWARD(n, Meta, B)                                                                                      \
  at::Tensor n(const at::Tensor& g, const at::Tensor& s) { return functional<Meta>(BackwardOp<Binary::B>{}, g, s); } \
  at::Tensor& n##_grad_input(const at::Tensor& g, const at::Tensor& s, at::Tensor& gi) {                             \
    return out_variant<Meta>(gi, BackwardOp<Binary::B>{}, g, s);                                                     \
  }
EW_BACKWARD(hardsigmoid_backward, at::meta::structured_hardsigmoid_backward, HardsigmoidBackward)
EW_BACKWARD(sigmoid_backward, at::meta::structured_sigmoid_backward, SigmoidBackward)
EW_BACKWARD(silu_backward, at::meta::structured_silu_backward, SiluBackward)
EW_BACKWARD(tanh_backward, at::meta::structured_tanh_backward, TanhBackward)
#undef EW_BACKWARD

at::Tensor hardswish_backward(const at::Tensor& g, const at::Tensor& s) {
  return functional<BinaryMeta>(BackwardOp<Binary::HardswishBackward>{}, g, s);
}
at::Tensor mish_backward(const at::Tensor& g, const at::Tensor& s) {
  return functional<BinaryMeta>(BackwardOp<Binary::MishBackward>{}, g, s);
}

using MLeakyRelu = at::meta::structured_leaky_relu;
at::Tensor leaky_relu(const at::Tensor& s, const at::Scalar& slope) {
  return functional<MLeakyRelu>(LeakyRelu{}, s, slope);
}
at::Tensor& leaky_relu_(at::Tensor& s, const at::Scalar& slope) { return inplace<MLeakyRelu>(s, LeakyRelu{}, slope); }
at::Tensor& leaky_relu_out(const at::Tensor& s, const at::Scalar& slope, at::Tensor& out) {
  return out_variant<MLeakyRelu>(out, LeakyRelu{}, s, slope);
}
using MLeakyReluBackward = at::meta::structured_leaky_relu_backward;
at::Tensor leaky_relu_backward(const at::Tensor& g, const at::Tensor& s, const at::Scalar& slope, bool is_result) {
  return functional<MLeakyReluBackward>(LeakyReluBackward{}, g, s, slope, is_result);
}
at::Tensor& leaky_relu_backward_grad_input(const at::Tensor& g, const at::Tensor& s, const at::Scalar& slope,
                                           bool is_result, at::Tensor& gi) {
  return out_variant<MLeakyReluBackward>(gi, LeakyReluBackward{}, g, s, slope, is_result);
}

using MElu = at::meta::structured_elu;
at::Tensor elu(const at::Tensor& s, const at::Scalar& a, const at::Scalar& sc, const at::Scalar& is) {
  return functional<MElu>(Elu{}, s, a, sc, is);
}
at::Tensor& elu_(at::Tensor& s, const at::Scalar& a, const at::Scalar& sc, const at::Scalar& is) {
  return inplace<MElu>(s, Elu{}, a, sc, is);
}
at::Tensor& elu_out(const at::Tensor& s, const at::Scalar& a, const at::Scalar& sc, const at::Scalar& is,
                    at::Tensor& out) {
  return out_variant<MElu>(out, Elu{}, s, a, sc, is);
}
using MEluBackward = at::meta::structured_elu_backward;
at::Tensor elu_backward(const at::Tensor& g, const at::Scalar& a, const at::Scalar& sc, const at::Scalar& is,
                        bool is_result, const at::Tensor& x) {
  return functional<MEluBackward>(EluBackward{}, g, a, sc, is, is_result, x);
}
at::Tensor& elu_backward_grad_input(const at::Tensor& g, const at::Scalar& a, const at::Scalar& sc,
                                    const at::Scalar& is, bool is_result, const at::Tensor& x, at::Tensor& gi) {
  return out_variant<MEluBackward>(gi, EluBackward{}, g, a, sc, is, is_result, x);
}

namespace {
// hardtanh is clamp; integer inputs take integer limits, as on the CPU.
std::pair<at::Scalar, at::Scalar> hardtanh_limits(const at::Tensor& s, const at::Scalar& lo, const at::Scalar& hi) {
  TORCH_CHECK(s.scalar_type() != at::kBool, "Bool inputs not supported for hardtanh");
  if (!at::isIntegralType(s.scalar_type(), /*includeBool=*/false)) return {lo, hi};
  int64_t l = lo.toLong(), h = hi.toLong();
  TORCH_CHECK(s.scalar_type() != at::kByte || (l >= 0 && h >= 0),
              "cannot do hardtanh on an unsigned type with negative limits");
  return {at::Scalar(l), at::Scalar(h)};
}
}  // namespace

at::Tensor hardtanh(const at::Tensor& s, const at::Scalar& lo, const at::Scalar& hi) {
  auto [l, h] = hardtanh_limits(s, lo, hi);
  return ew::clamp(s, l, h);
}
at::Tensor& hardtanh_(at::Tensor& s, const at::Scalar& lo, const at::Scalar& hi) {
  auto [l, h] = hardtanh_limits(s, lo, hi);
  return ew::clamp_(s, l, h);
}
at::Tensor& hardtanh_out(const at::Tensor& s, const at::Scalar& lo, const at::Scalar& hi, at::Tensor& out) {
  auto [l, h] = hardtanh_limits(s, lo, hi);
  return ew::clamp_out(s, l, h, out);
}
at::Tensor hardtanh_backward(const at::Tensor& g, const at::Tensor& s, const at::Scalar& lo, const at::Scalar& hi) {
  return functional<BinaryMeta>(HardtanhBackward{}, g, s, lo, hi);
}
at::Tensor& hardtanh_backward_grad_input(const at::Tensor& g, const at::Tensor& s, const at::Scalar& lo,
                                         const at::Scalar& hi, at::Tensor& gi) {
  return out_variant<BinaryMeta>(gi, HardtanhBackward{}, g, s, lo, hi);
}

using MSoftplus = at::meta::structured_softplus;
at::Tensor softplus(const at::Tensor& s, const at::Scalar& beta, const at::Scalar& th) {
  return functional<MSoftplus>(Softplus{}, s, beta, th);
}
at::Tensor& softplus_out(const at::Tensor& s, const at::Scalar& beta, const at::Scalar& th, at::Tensor& out) {
  return out_variant<MSoftplus>(out, Softplus{}, s, beta, th);
}
using MSoftplusBackward = at::meta::structured_softplus_backward;
at::Tensor softplus_backward(const at::Tensor& g, const at::Tensor& s, const at::Scalar& beta, const at::Scalar& th) {
  return functional<MSoftplusBackward>(SoftplusBackward{}, g, s, beta, th);
}
at::Tensor& softplus_backward_grad_input(const at::Tensor& g, const at::Tensor& s, const at::Scalar& beta,
                                         const at::Scalar& th, at::Tensor& gi) {
  return out_variant<MSoftplusBackward>(gi, SoftplusBackward{}, g, s, beta, th);
}

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

#define EW_SHRINK(n, Soft)                                                                                             \
  at::Tensor n(const at::Tensor& s, const at::Scalar& l) {                                                             \
    return functional<at::meta::structured_##n>(Shrink<Soft>{}, s, l);                                                 \
  }                                                                                                                    \
  at::Tensor& n##_out(const at::Tensor& s, const at::Scalar& l, at::Tensor& out) {                                     \
    return out_variant<at::meta::structured_##n>(out, Shrink<Soft>{}, s, l);                                           \
  }                                                                                                                    \
  at::Tensor n##_backward(const at::Tensor& g, const at::Tensor& s, const at::Scalar& l) {                             \
    return functional<at::meta::structured_##n##_backward>(ShrinkBackward{}, g, s, l);                                 \
  }                                                                                                                    \
  at::Tensor& n##_backward_grad_input(const at::Tensor& g, const at::Tensor& s, const at::Scalar& l, at::Tensor& gi) { \
    return out_variant<at::meta::structured_##n##_backward>(gi, ShrinkBackward{}, g, s, l);                            \
  }
EW_SHRINK(hardshrink, false)
EW_SHRINK(softshrink, true)
#undef EW_SHRINK

at::Tensor logit(const at::Tensor& s, std::optional<double> eps) { return functional<UnaryFloatMeta>(Logit{}, s, eps); }
at::Tensor& logit_(at::Tensor& s, std::optional<double> eps) { return inplace<UnaryFloatMeta>(s, Logit{}, eps); }
at::Tensor& logit_out(const at::Tensor& s, std::optional<double> eps, at::Tensor& out) {
  return out_variant<UnaryFloatMeta>(out, Logit{}, s, eps);
}
at::Tensor logit_backward(const at::Tensor& g, const at::Tensor& s, std::optional<double> eps) {
  return functional<at::meta::structured_logit_backward>(LogitBackward{}, g, s, eps);
}
at::Tensor& logit_backward_grad_input(const at::Tensor& g, const at::Tensor& s, std::optional<double> eps,
                                      at::Tensor& gi) {
  return out_variant<at::meta::structured_logit_backward>(gi, LogitBackward{}, g, s, eps);
}

// The buffer is left empty (as on CUDA): the backward recomputes what it needs.
std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& s) {
  at::Tensor out = functional<UnaryMeta>(UnaryOp<Unary::LogSigmoid, Accepts::Float>{}, s);
  return {out, empty({0}, s.scalar_type(), s.device())};
}
std::tuple<at::Tensor&, at::Tensor&> log_sigmoid_forward_output(const at::Tensor& s, at::Tensor& out,
                                                                at::Tensor& buffer) {
  out_variant<UnaryMeta>(out, UnaryOp<Unary::LogSigmoid, Accepts::Float>{}, s);
  return {out, buffer};
}
at::Tensor log_sigmoid_backward(const at::Tensor& g, const at::Tensor& s, const at::Tensor& /*buffer*/) {
  return functional<BinaryMeta>(BackwardOp<Binary::LogSigmoidBackward>{}, g, s);
}
at::Tensor& log_sigmoid_backward_grad_input(const at::Tensor& g, const at::Tensor& s, const at::Tensor& /*buffer*/,
                                            at::Tensor& gi) {
  return out_variant<BinaryMeta>(gi, BackwardOp<Binary::LogSigmoidBackward>{}, g, s);
}

// ---- clamp

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

#define EW_CLAMP_ONE(n, IsMin)                                                                 \
  at::Tensor n(const at::Tensor& s, const at::Scalar& v) {                                     \
    return functional<at::meta::structured_##n>(ClampOneScalar<IsMin>{}, s, v);                \
  }                                                                                            \
  at::Tensor& n##_(at::Tensor& s, const at::Scalar& v) {                                       \
    return inplace<at::meta::structured_##n>(s, ClampOneScalar<IsMin>{}, v);                   \
  }                                                                                            \
  at::Tensor& n##_out(const at::Tensor& s, const at::Scalar& v, at::Tensor& out) {             \
    return out_variant<at::meta::structured_##n>(out, ClampOneScalar<IsMin>{}, s, v);          \
  }                                                                                            \
  at::Tensor n##_Tensor(const at::Tensor& s, const at::Tensor& v) {                            \
    return functional<at::meta::structured_##n##_Tensor>(ClampOneTensor<IsMin>{}, s, v);       \
  }                                                                                            \
  at::Tensor& n##__Tensor(at::Tensor& s, const at::Tensor& v) {                                \
    return inplace<at::meta::structured_##n##_Tensor>(s, ClampOneTensor<IsMin>{}, v);          \
  }                                                                                            \
  at::Tensor& n##_Tensor_out(const at::Tensor& s, const at::Tensor& v, at::Tensor& out) {      \
    return out_variant<at::meta::structured_##n##_Tensor>(out, ClampOneTensor<IsMin>{}, s, v); \
  }
EW_CLAMP_ONE(clamp_max, false)
EW_CLAMP_ONE(clamp_min, true)
#undef EW_CLAMP_ONE

// ---- where, masked_fill

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

}  // namespace tpu::ew
