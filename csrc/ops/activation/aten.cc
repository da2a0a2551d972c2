// Activations and their backward formulas: relu, threshold, gelu, silu,
// mish, elu, hardtanh, hardsigmoid, hardswish, softplus, hardshrink /
// softshrink, leaky_relu, logit, log_sigmoid, glu and PReLU (the one
// elementwise op on autocast's lower-precision list): ATen entry points and
// their registration. Output metadata comes from PyTorch's structured meta
// classes, or for ops ATen implements without one, from the same
// TensorIterator configuration its CPU kernel builds. The lowering is
// activation.h.
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/elu_backward_meta.h>
#include <ATen/ops/elu_meta.h>
#include <ATen/ops/gelu_backward_meta.h>
#include <ATen/ops/gelu_meta.h>
#include <ATen/ops/glu_meta.h>
#include <ATen/ops/hardshrink_backward_meta.h>
#include <ATen/ops/hardshrink_meta.h>
#include <ATen/ops/hardsigmoid_backward_meta.h>
#include <ATen/ops/hardsigmoid_meta.h>
#include <ATen/ops/leaky_relu_backward_meta.h>
#include <ATen/ops/leaky_relu_meta.h>
#include <ATen/ops/logit_backward_meta.h>
#include <ATen/ops/mish_meta.h>
#include <ATen/ops/sigmoid_backward_meta.h>
#include <ATen/ops/silu_backward_meta.h>
#include <ATen/ops/silu_meta.h>
#include <ATen/ops/softplus_backward_meta.h>
#include <ATen/ops/softplus_meta.h>
#include <ATen/ops/softshrink_backward_meta.h>
#include <ATen/ops/softshrink_meta.h>
#include <ATen/ops/tanh_backward_meta.h>
#include <ATen/ops/threshold_backward_meta.h>
#include <ATen/ops/threshold_meta.h>

#include "aten/library.h"
#include "ops/activation/activation.h"
#include "ops/common/aten_common.h"
#include "ops/elementwise/aten_metas.h"
#include "ops/elementwise/aten_pointwise.h"
#include "ops/elementwise/elementwise.h"

namespace tpu {

namespace {

using ew::BinaryMeta;
using ew::common;
using ew::UnaryMeta;
using ops::Activation;
using ops::ActivationGrad;
using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

// Scalar parameters (slopes, coefficients) in the dtype the math runs in.
engine::Ref param(const at::Scalar& s, shlo::DType compute) { return scalar_of(s, ops::opmath(compute)); }

template <Activation F, Accepts A>
struct ActivationOp {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self) const {
    check_dtype(ops::name(F), m.common_dtype(), A);
    pointwise(out, ops::name(F), {self}, common(m), {},
              [](Builder& b, const Vals& v) { return ops::activation(b, F, v[0]); });
  }
};

// (grad, saved tensor) backward formulas.
template <ActivationGrad G>
struct BackwardOp {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& saved) const {
    check_dtype(ops::name(G), m.common_dtype(), Accepts::Float);
    pointwise(out, ops::name(G), {grad, saved}, common(m), {},
              [](Builder& b, const Vals& v) { return ops::activation_grad(b, G, v[0], v[1]); });
  }
};

// ---- relu, threshold

using ReluOp = ActivationOp<Activation::Relu, Accepts::All>;
at::Tensor relu(const at::Tensor& s) {
  TORCH_CHECK(s.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  return functional<UnaryMeta<>>(ReluOp{}, s);
}
at::Tensor& relu_(at::Tensor& s) {
  TORCH_CHECK(s.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  return inplace<UnaryMeta<>>(s, ReluOp{});
}

struct Threshold {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Scalar& th,
                  const at::Scalar& value) const {
    check_dtype("threshold", m.common_dtype(), Accepts::NoBool);
    shlo::DType c = common(m);
    pointwise(out, "threshold", {self}, c, {param(th, c), param(value, c)},
              [](Builder& b, const Vals& v) { return ops::threshold(b, v[0], v[0], v[1], v[2]); });
  }
};

struct ThresholdBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& self,
                  const at::Scalar& th) const {
    check_dtype("threshold_backward", m.common_dtype(), Accepts::NoBool);
    shlo::DType c = common(m);
    pointwise(out, "threshold_backward", {self, grad}, c, {param(th, c), scalar_of(0, c)},
              [](Builder& b, const Vals& v) { return ops::threshold(b, v[0], v[1], v[2], v[3]); });
  }
};

// ---- gelu

bool gelu_is_tanh(c10::string_view approximate) {
  if (approximate == "none") return false;
  TORCH_CHECK(approximate == "tanh", "approximate argument must be either none or tanh.");
  return true;
}

struct Gelu {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, c10::string_view approximate) const {
    if (gelu_is_tanh(approximate)) return ActivationOp<Activation::GeluTanh, Accepts::Float>{}(m, out, self);
    ActivationOp<Activation::Gelu, Accepts::Float>{}(m, out, self);
  }
};

struct GeluBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& self,
                  c10::string_view approximate) const {
    if (gelu_is_tanh(approximate)) return BackwardOp<ActivationGrad::GeluTanhBackward>{}(m, out, grad, self);
    BackwardOp<ActivationGrad::GeluBackward>{}(m, out, grad, self);
  }
};

// ---- leaky_relu, elu

struct LeakyRelu {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Scalar& slope) const {
    check_dtype("leaky_relu", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    pointwise(out, "leaky_relu", {self}, c, {param(slope, c)},
              [](Builder& b, const Vals& v) { return ops::leaky_relu(b, v[0], v[1]); });
  }
};

struct LeakyReluBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& self, const at::Scalar& slope,
                  bool /*self_is_result: checked by the meta*/) const {
    check_dtype("leaky_relu_backward", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    pointwise(out, "leaky_relu_backward", {grad, self}, c, {param(slope, c)},
              [](Builder& b, const Vals& v) { return ops::leaky_relu_backward(b, v[0], v[1], v[2]); });
  }
};

struct Elu {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Scalar& alpha, const at::Scalar& scale,
                  const at::Scalar& input_scale) const {
    check_dtype("elu", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    pointwise(out, "elu", {self}, c, {param(alpha, c), param(scale, c), param(input_scale, c)},
              [](Builder& b, const Vals& v) { return ops::elu(b, v[0], v[1], v[2], v[3]); });
  }
};

struct EluBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Scalar& alpha, const at::Scalar& scale,
                  const at::Scalar& input_scale, bool is_result, const at::Tensor& self_or_result) const {
    check_dtype("elu_backward", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    pointwise(
        out, "elu_backward", {grad, self_or_result}, c, {param(alpha, c), param(scale, c), param(input_scale, c)},
        [](Builder& b, const Vals& v, bool is_result) {
          return ops::elu_backward(b, v[0], v[1], v[2], v[3], v[4], is_result);
        },
        is_result);
  }
};

// ---- hardtanh: clamp; integer inputs take integer limits, as on the CPU.

std::pair<at::Scalar, at::Scalar> hardtanh_limits(const at::Tensor& s, const at::Scalar& lo, const at::Scalar& hi) {
  TORCH_CHECK(s.scalar_type() != at::kBool, "Bool inputs not supported for hardtanh");
  if (!at::isIntegralType(s.scalar_type(), /*includeBool=*/false)) return {lo, hi};
  int64_t l = lo.toLong(), h = hi.toLong();
  TORCH_CHECK(s.scalar_type() != at::kByte || (l >= 0 && h >= 0),
              "cannot do hardtanh on an unsigned type with negative limits");
  return {at::Scalar(l), at::Scalar(h)};
}

at::Tensor hardtanh(const at::Tensor& s, const at::Scalar& lo, const at::Scalar& hi) {
  auto [l, h] = hardtanh_limits(s, lo, hi);
  return at::clamp(s, l, h);
}
at::Tensor& hardtanh_(at::Tensor& s, const at::Scalar& lo, const at::Scalar& hi) {
  auto [l, h] = hardtanh_limits(s, lo, hi);
  return at::clamp_(s, l, h);
}
at::Tensor& hardtanh_out(const at::Tensor& s, const at::Scalar& lo, const at::Scalar& hi, at::Tensor& out) {
  auto [l, h] = hardtanh_limits(s, lo, hi);
  return at::clamp_out(out, s, l, h);
}

struct HardtanhBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& self, const at::Scalar& lo,
                  const at::Scalar& hi) const {
    check_dtype("hardtanh_backward", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    pointwise(out, "hardtanh_backward", {grad, self}, c, {param(lo, c), param(hi, c)},
              [](Builder& b, const Vals& v) { return ops::hardtanh_backward(b, v[0], v[1], v[2], v[3]); });
  }
};

// ---- softplus, shrinks

struct Softplus {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Scalar& beta,
                  const at::Scalar& threshold) const {
    check_dtype("softplus", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    pointwise(out, "softplus", {self}, c, {param(beta, c), param(threshold, c)},
              [](Builder& b, const Vals& v) { return ops::softplus(b, v[0], v[1], v[2]); });
  }
};

struct SoftplusBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& self, const at::Scalar& beta,
                  const at::Scalar& threshold) const {
    check_dtype("softplus_backward", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    pointwise(out, "softplus_backward", {grad, self}, c, {param(beta, c), param(threshold, c)},
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
    pointwise(out, name, {self}, c, {Soft ? param(lambd, c) : scalar_of(lambd, c)},
              [](Builder& b, const Vals& v) { return ops::shrink(b, v[0], v[1], Soft); });
  }
};

struct ShrinkBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& self,
                  const at::Scalar& lambd) const {
    check_dtype("shrink_backward", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    pointwise(out, "shrink_backward", {grad, self}, c, {scalar_of(lambd, c)},
              [](Builder& b, const Vals& v) { return ops::shrink_backward(b, v[0], v[1], v[2]); });
  }
};

// ---- logit: eps absent or negative means no clamping (the CPU kernel's rule).

bool logit_clamps(std::optional<double> eps) { return eps.has_value() && *eps >= 0; }

struct Logit {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, std::optional<double> eps) const {
    check_dtype("logit", m.common_dtype(), Accepts::Float);
    shlo::DType c = common(m);
    bool clamps = logit_clamps(eps);
    std::vector<engine::Ref> extra;
    if (clamps) extra.push_back(param(*eps, c));
    pointwise(
        out, "logit", {self}, c, extra,
        [](Builder& b, const Vals& v, bool clamps) {
          return ops::logit(b, v[0], clamps ? std::optional<Value>(v[1]) : std::nullopt);
        },
        clamps);
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
    pointwise(
        out, "logit_backward", {grad, self}, c, extra,
        [](Builder& b, const Vals& v, bool clamps) {
          return ops::logit_backward(b, v[0], v[1], clamps ? std::optional<Value>(v[2]) : std::nullopt);
        },
        clamps);
  }
};

// ---- log_sigmoid: the buffer is left empty (as on CUDA); the backward
// recomputes what it needs.

using LogSigmoidOp = ActivationOp<Activation::LogSigmoid, Accepts::Float>;
std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& s) {
  at::Tensor out = functional<UnaryMeta<>>(LogSigmoidOp{}, s);
  return {out, empty({0}, s.scalar_type(), s.device())};
}
std::tuple<at::Tensor&, at::Tensor&> log_sigmoid_forward_output(const at::Tensor& s, at::Tensor& out,
                                                                at::Tensor& buffer) {
  out_variant<UnaryMeta<>>(out, LogSigmoidOp{}, s);
  return {out, buffer};
}

struct LogSigmoidBackward {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& self,
                  const at::Tensor& /*buffer*/) const {
    BackwardOp<ActivationGrad::LogSigmoidBackward>{}(m, out, grad, self);
  }
};

// ---- glu

struct Glu {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim) const {
    check_dtype("glu", self.scalar_type(), Accepts::Float);
    write_all(
        {out}, "glu", {read(self)}, [](Builder& b, const Vals& in, int64_t d) { return Vals{ops::glu(b, in[0], d)}; },
        at::maybe_wrap_dim(dim, self.dim()));
  }
};

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
  return op1(
      "glu_backward", {read_as(grad, t), read(self)}, type_of(self),
      [](Builder& b, const Vals& in, int64_t d) { return Vals{ops::glu_backward(b, in[0], in[1], d)}; }, dim);
}
at::Tensor glu_backward(const at::Tensor& grad, const at::Tensor& self, int64_t dim) {
  return wrap(glu_backward_ref(grad, self, dim), self.device());
}
at::Tensor& glu_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, int64_t dim,
                                    at::Tensor& grad_input) {
  engine::Ref v = glu_backward_ref(grad, self, dim);
  at::native::resize_output(grad_input, v.type().shape);
  write(grad_input, std::move(v));
  return grad_input;
}

// ---- PReLU. The CPU kernels' TensorIterator: inputs of one dtype (no
// promotion), broadcast; outputs of that dtype.

struct PreluMeta : at::TensorIteratorBase {
  void meta(const at::Tensor& self, const at::Tensor& weight) {
    build(at::TensorIteratorConfig().add_output(maybe_get_output(0)).add_const_input(self).add_const_input(weight));
  }
};
struct PreluBackwardMeta : at::TensorIteratorBase {
  void meta(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& weight) {
    build(at::TensorIteratorConfig()
              .add_output(maybe_get_output(0))
              .add_output(maybe_get_output(1))
              .add_const_input(self)
              .add_const_input(weight)
              .add_const_input(grad));
  }
};

void check_prelu_dtype(at::ScalarType t) {
  TORCH_CHECK(at::isFloatingType(t), "prelu: expected a floating point tensor, got ", t);
}

struct Prelu {
  template <class M>
  void operator()(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& weight) const {
    check_prelu_dtype(m.common_dtype());
    shlo::DType c = ops::opmath(to_shlo(m.common_dtype()));
    pointwise(out, "prelu", {self, weight}, c, {}, [](Builder& b, const Vals& v) { return ops::prelu(b, v[0], v[1]); });
  }
};

std::tuple<at::Tensor, at::Tensor> _prelu_kernel_backward(const at::Tensor& grad, const at::Tensor& self,
                                                          const at::Tensor& weight) {
  Structured<PreluBackwardMeta> m;
  m.meta(grad, self, weight);
  check_prelu_dtype(m.common_dtype());
  at::Tensor gx = m.outs[0], gw = m.outs[1];
  shlo::DType d = to_shlo(m.common_dtype()), c = ops::opmath(d);
  write_all(
      {gx, gw}, "prelu_backward", {read(grad), read(self), read(weight)},
      [](Builder& b, const Vals& v, shlo::DType c, shlo::DType d, const shlo::Shape& shape) {
        auto in = [&](int i) { return b.broadcast_to(ops::convert(b, v[i], c), shape); };
        Vals r = ops::prelu_backward(b, in(0), in(1), in(2));
        return Vals{ops::convert(b, r[0], d), ops::convert(b, r[1], d)};
      },
      c, d, shape_of(gx.sizes()));
  return {gx, gw};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  using namespace at::meta;
  // NAME, NAME_ (in-place), NAME.out of a structured activation.
#define ACTIVATION(n, F) \
  m.structured<structured_##n>(#n, #n "_", #n ".out", ActivationOp<Activation::F, Accepts::Float>{})
  // NAME_backward, NAME_backward.grad_input of a structured backward formula.
#define ACTIVATION_GRAD(n, G) \
  m.structured<structured_##n>(#n, nullptr, #n ".grad_input", BackwardOp<ActivationGrad::G>{})
  m.structured<PreluMeta>("_prelu_kernel", nullptr, nullptr, Prelu{});
  m.impl("_prelu_kernel_backward", &_prelu_kernel_backward);
  m.structured<structured_elu>("elu", "elu_", "elu.out", Elu{});
  m.structured<structured_elu_backward>("elu_backward", nullptr, "elu_backward.grad_input", EluBackward{});
  m.structured<structured_gelu>("gelu", "gelu_", "gelu.out", Gelu{});
  m.structured<structured_gelu_backward>("gelu_backward", nullptr, "gelu_backward.grad_input", GeluBackward{});
  m.structured<structured_glu>("glu", nullptr, "glu.out", Glu{});
  m.impl("glu_backward", &glu_backward);
  m.impl("glu_backward.grad_input", &glu_backward_grad_input);
  m.structured<structured_hardshrink>("hardshrink", nullptr, "hardshrink.out", Shrink<false>{});
  m.structured<structured_hardshrink_backward>("hardshrink_backward", nullptr, "hardshrink_backward.grad_input",
                                               ShrinkBackward{});
  ACTIVATION(hardsigmoid, Hardsigmoid);
  ACTIVATION_GRAD(hardsigmoid_backward, HardsigmoidBackward);
  m.structured<UnaryMeta<>>("hardswish", "hardswish_", "hardswish.out",
                            ActivationOp<Activation::Hardswish, Accepts::Float>{});
  m.structured<BinaryMeta<>>("hardswish_backward", nullptr, nullptr, BackwardOp<ActivationGrad::HardswishBackward>{});
  m.impl("hardtanh", &hardtanh);
  m.impl("hardtanh.out", &hardtanh_out);
  m.impl("hardtanh_", &hardtanh_);
  m.structured<BinaryMeta<const at::Scalar&, const at::Scalar&>>("hardtanh_backward", nullptr,
                                                                 "hardtanh_backward.grad_input", HardtanhBackward{});
  m.structured<structured_leaky_relu>("leaky_relu", "leaky_relu_", "leaky_relu.out", LeakyRelu{});
  m.structured<structured_leaky_relu_backward>("leaky_relu_backward", nullptr, "leaky_relu_backward.grad_input",
                                               LeakyReluBackward{});
  m.structured<BinaryMeta<const at::Tensor&>>("log_sigmoid_backward", nullptr, "log_sigmoid_backward.grad_input",
                                              LogSigmoidBackward{});
  m.impl("log_sigmoid_forward", &log_sigmoid_forward);
  m.impl("log_sigmoid_forward.output", &log_sigmoid_forward_output);
  m.structured<ew::UnaryFloatMeta<std::optional<double>>>("logit", "logit_", "logit.out", Logit{});
  m.structured<structured_logit_backward>("logit_backward", nullptr, "logit_backward.grad_input", LogitBackward{});
  ACTIVATION(mish, Mish);
  m.structured<BinaryMeta<>>("mish_backward", nullptr, nullptr, BackwardOp<ActivationGrad::MishBackward>{});
  m.impl("relu", &relu);
  m.impl("relu_", &relu_);
  ACTIVATION_GRAD(sigmoid_backward, SigmoidBackward);
  m.structured<structured_silu>("silu", "silu_", "silu.out", ActivationOp<Activation::Silu, Accepts::FloatComplex>{});
  ACTIVATION_GRAD(silu_backward, SiluBackward);
  m.structured<structured_softplus>("softplus", nullptr, "softplus.out", Softplus{});
  m.structured<structured_softplus_backward>("softplus_backward", nullptr, "softplus_backward.grad_input",
                                             SoftplusBackward{});
  m.structured<structured_softshrink>("softshrink", nullptr, "softshrink.out", Shrink<true>{});
  m.structured<structured_softshrink_backward>("softshrink_backward", nullptr, "softshrink_backward.grad_input",
                                               ShrinkBackward{});
  ACTIVATION_GRAD(tanh_backward, TanhBackward);
  m.structured<structured_threshold>("threshold", "threshold_", "threshold.out", Threshold{});
  m.structured<structured_threshold_backward>("threshold_backward", nullptr, "threshold_backward.grad_input",
                                              ThresholdBackward{});
#undef ACTIVATION
#undef ACTIVATION_GRAD
}

}  // namespace tpu
