// Activation lowerings with PyTorch semantics.
#include "ops/activation/activation.h"

#include <limits>
#include <stdexcept>
#include <string>

#include "ops/common/lowering.h"
#include "ops/elementwise/elementwise.h"

namespace ops {

namespace {

using shlo::Cmp;
using shlo::DType;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kSqrt1_2 = 0.70710678118654752440;   // 1/sqrt(2)
constexpr double k2_SqrtPi = 1.12837916709551257390;  // 2/sqrt(pi)
constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kGeluKappa = 0.044715;

// maximum / minimum that return NaN when either side is NaN.
Value nan_max(Builder& b, Value x, Value y, bool is_max) {
  return binary(b, is_max ? Binary::Maximum : Binary::Minimum, x, y);
}

Value erf_(Builder& b, Value x) { return b.op1("chlo.erf", {x}, x.type); }
Value sigmoid_(Builder& b, Value x) {
  return b.div(constant_like(b, 1, x), b.add(constant_like(b, 1, x), exponential(b, b.unary("negate", x))));
}
// tanh(softplus(x)) as mish computes it.
Value tanh_softplus(Builder& b, Value x) { return b.unary("tanh", b.unary("log_plus_one", exponential(b, x))); }

// min(max(x, 0), 6), NaN propagating.
Value relu6_(Builder& b, Value x) {
  return nan_max(b, nan_max(b, x, constant_like(b, 0, x), true), constant_like(b, 6, x), false);
}

// Float math on x (already f32 for half inputs).
Value math(Builder& b, Activation op, Value x) {
  switch (op) {
    case Activation::Hardsigmoid:
      return b.div(relu6_(b, b.add(x, constant_like(b, 3, x))), constant_like(b, 6, x));
    case Activation::Hardswish:
      return b.div(b.mul(x, relu6_(b, b.add(x, constant_like(b, 3, x)))), constant_like(b, 6, x));
    case Activation::Silu: {
      Value den = b.add(constant_like(b, 1, x), exponential(b, b.unary("negate", x)));
      return shlo::is_complex(x.dtype()) ? divide_c10(b, x, den) : b.div(x, den);
    }
    case Activation::Mish:
      return b.mul(x, tanh_softplus(b, x));
    case Activation::Gelu:
      return b.mul(b.mul(x, constant_like(b, 0.5, x)),
                   b.add(constant_like(b, 1, x), erf_(b, b.mul(x, constant_like(b, kSqrt1_2, x)))));
    case Activation::GeluTanh: {
      Value cube = b.mul(b.mul(x, x), x);
      Value inner =
          b.mul(constant_like(b, kSqrt2 * k2_SqrtPi * 0.5, x), b.add(x, b.mul(constant_like(b, kGeluKappa, x), cube)));
      return b.mul(b.mul(constant_like(b, 0.5, x), x), b.add(constant_like(b, 1, x), b.unary("tanh", inner)));
    }
    case Activation::LogSigmoid: {
      Value z = exponential(b, b.unary("negate", b.unary("abs", x)));
      return b.sub(nan_max(b, x, constant_like(b, 0, x), false), b.unary("log_plus_one", z));
    }
    default:
      throw std::logic_error(std::string("ops::activation: not a float op: ") + name(op));
  }
}

// Half of x along dim: the first, or the second.
Value half_of(Builder& b, Value x, int64_t dim, bool second) {
  shlo::Shape lo(x.rank(), 0), hi = x.shape();
  int64_t h = x.shape()[dim] / 2;
  lo[dim] = second ? h : 0;
  hi[dim] = second ? 2 * h : h;
  return b.slice(x, lo, hi, shlo::Shape(x.rank(), 1));
}

}  // namespace

Value activation(Builder& b, Activation op, Value x) {
  DType t = x.dtype();
  if (op == Activation::Relu) {
    // clamp_min(x, 0): NaN stays NaN.
    if (!shlo::is_float(t)) return b.max(x, constant_like(b, 0, x));
    return b.select(compare_to(b, Cmp::LT, x, 0.0), constant_like(b, 0, x), x);
  }
  return from_opmath(b, math(b, op, to_opmath(b, x)), t);
}

Value activation_grad(Builder& b, ActivationGrad op, Value grad, Value saved) {
  Value xu = to_opmath(b, grad), yu = to_opmath(b, saved);
  Value r;
  switch (op) {
    case ActivationGrad::SigmoidBackward:  // grad * (1 - y) * y
      r = b.mul(b.mul(xu, b.sub(constant_like(b, 1, yu), yu)), yu);
      break;
    case ActivationGrad::TanhBackward:  // grad * (1 - y^2)
      r = b.mul(xu, b.sub(constant_like(b, 1, yu), b.mul(yu, yu)));
      break;
    case ActivationGrad::SiluBackward: {
      Value s = sigmoid_(b, yu);
      r = b.mul(b.mul(xu, s), b.add(constant_like(b, 1, s), b.mul(yu, b.sub(constant_like(b, 1, s), s))));
      break;
    }
    case ActivationGrad::MishBackward: {
      Value s = sigmoid_(b, yu);
      Value ts = tanh_softplus(b, yu);
      Value d = b.add(ts, b.mul(b.mul(yu, s), b.sub(constant_like(b, 1, ts), b.mul(ts, ts))));
      r = b.mul(xu, d);
      break;
    }
    case ActivationGrad::GeluBackward: {
      Value cdf = b.mul(constant_like(b, 0.5, yu),
                        b.add(constant_like(b, 1, yu), erf_(b, b.mul(yu, constant_like(b, kSqrt1_2, yu)))));
      Value pdf = b.mul(constant_like(b, k2_SqrtPi * kSqrt1_2 * 0.5, yu),
                        exponential(b, b.mul(b.mul(yu, yu), constant_like(b, -0.5, yu))));
      r = b.mul(xu, b.add(cdf, b.mul(yu, pdf)));
      break;
    }
    case ActivationGrad::GeluTanhBackward: {
      Value beta = constant_like(b, kSqrt2 * k2_SqrtPi * 0.5, yu), kappa = constant_like(b, kGeluKappa, yu),
            one = constant_like(b, 1, yu);
      Value sq = b.mul(yu, yu), cube = b.mul(sq, yu);
      Value th = b.unary("tanh", b.mul(beta, b.add(yu, b.mul(kappa, cube))));
      Value left = b.mul(constant_like(b, 0.5, yu), yu), right = b.add(one, th);
      Value dleft = b.mul(constant_like(b, 0.5, yu), right);
      Value dtanh = b.sub(one, b.mul(th, th));
      Value dinner = b.mul(beta, b.add(one, b.mul(constant_like(b, 3 * kGeluKappa, yu), sq)));
      Value dright = b.mul(b.mul(left, dtanh), dinner);
      r = b.mul(xu, b.add(dleft, dright));
      break;
    }
    case ActivationGrad::HardsigmoidBackward: {
      Value inside = logical_and(b, compare_to(b, Cmp::GT, yu, -3.0), compare_to(b, Cmp::LT, yu, 3.0));
      r = b.select(inside, b.mul(xu, constant_like(b, 1.0 / 6, xu)), constant_like(b, 0, xu));
      break;
    }
    case ActivationGrad::HardswishBackward: {
      Value mid = b.mul(xu, b.add(b.div(yu, constant_like(b, 3, yu)), constant_like(b, 0.5, yu)));
      // The formula holds strictly inside (-3, 3), as on the CPU.
      r = b.select(compare_to(b, Cmp::LE, yu, -3.0), constant_like(b, 0, xu),
                   b.select(compare_to(b, Cmp::LT, yu, 3.0), mid, xu));
      break;
    }
    case ActivationGrad::LogSigmoidBackward: {
      // The CPU kernel's form, with its buffer exp(-|x|) recomputed.
      Value z = exponential(b, b.unary("negate", b.unary("abs", yu)));
      Value neg = compare_to(b, Cmp::LT, yu, 0.0);
      Value max_deriv = b.select(neg, constant_like(b, 1, z), constant_like(b, 0, z));
      Value sign = b.select(neg, constant_like(b, 1, z), constant_like(b, -1, z));
      r = b.mul(b.sub(max_deriv, b.mul(sign, b.div(z, b.add(constant_like(b, 1, z), z)))), xu);
      break;
    }
    default:
      throw std::logic_error(std::string("ops::activation_grad: unhandled ") + name(op));
  }
  return from_opmath(b, r, grad.dtype());
}

Value threshold(Builder& b, Value x, Value other, Value th, Value value) {
  // Compared in float for bf16/f16 against the unrounded threshold, as the
  // CPU kernel does (0.3008 > 0.3 even though bf16(0.3) == 0.3008).
  Value xu = to_opmath(b, x);
  return b.select(compare_to(b, Cmp::LE, xu, fit(b, th, xu)), fit(b, value, other), other);
}

Value leaky_relu(Builder& b, Value x, Value slope) {
  Value xu = to_opmath(b, x);
  Value r = b.select(compare_to(b, Cmp::GT, xu, 0.0), xu, b.mul(xu, fit(b, slope, xu)));
  return from_opmath(b, r, x.dtype());
}

Value leaky_relu_backward(Builder& b, Value grad, Value x, Value slope) {
  Value g = to_opmath(b, grad), xu = to_opmath(b, x);
  Value r = b.select(compare_to(b, Cmp::GT, xu, 0.0), g, b.mul(g, fit(b, slope, g)));
  return from_opmath(b, r, grad.dtype());
}

Value elu(Builder& b, Value x, Value alpha, Value scale, Value input_scale) {
  Value xu = to_opmath(b, x);
  Value negcoef = fit(b, b.mul(alpha, scale), xu), poscoef = fit(b, scale, xu);
  Value negin = fit(b, input_scale, xu);
  Value neg = b.mul(b.sub(exponential(b, b.mul(xu, negin)), constant_like(b, 1, xu)), negcoef);
  return from_opmath(b, b.select(compare_to(b, Cmp::LE, xu, 0.0), neg, b.mul(xu, poscoef)), x.dtype());
}

Value elu_backward(Builder& b, Value grad, Value x_or_y, Value alpha, Value scale, Value input_scale, bool is_result) {
  Value g = to_opmath(b, grad), v = to_opmath(b, x_or_y);
  Value negcoef = fit(b, b.mul(alpha, scale), g), poscoef = fit(b, scale, g);
  Value negin = fit(b, input_scale, g);
  Value neg = is_result ? b.mul(b.mul(g, negin), b.add(v, negcoef))
                        : b.mul(b.mul(b.mul(g, negin), negcoef), exponential(b, b.mul(v, negin)));
  return from_opmath(b, b.select(compare_to(b, Cmp::LE, v, 0.0), neg, b.mul(g, poscoef)), grad.dtype());
}

Value hardtanh_backward(Builder& b, Value grad, Value x, Value lo, Value hi) {
  Value xu = to_opmath(b, x);
  Value out = logical_or(b, compare_to(b, Cmp::LE, xu, fit(b, lo, xu)), compare_to(b, Cmp::GE, xu, fit(b, hi, xu)));
  return b.select(out, constant_like(b, 0, grad), grad);
}

Value softplus(Builder& b, Value x, Value beta, Value threshold) {
  Value xu = to_opmath(b, x);
  Value be = fit(b, beta, xu);
  Value xb = b.mul(xu, be);
  Value soft = b.div(b.unary("log_plus_one", exponential(b, xb)), be);
  return from_opmath(b, b.select(compare_to(b, Cmp::GT, xb, fit(b, threshold, xu)), xu, soft), x.dtype());
}

Value softplus_backward(Builder& b, Value grad, Value x, Value beta, Value threshold) {
  Value g = to_opmath(b, grad), xu = to_opmath(b, x);
  Value xb = b.mul(xu, fit(b, beta, xu));
  Value z = exponential(b, xb);
  Value soft = b.div(b.mul(g, z), b.add(z, constant_like(b, 1, z)));
  return from_opmath(b, b.select(compare_to(b, Cmp::GT, xb, fit(b, threshold, xu)), g, soft), grad.dtype());
}

Value shrink(Builder& b, Value x, Value lambd, bool soft) {
  if (!soft) {
    Value l = fit(b, lambd, x);
    Value inside = logical_and(b, compare_to(b, Cmp::GE, x, b.unary("negate", l)), compare_to(b, Cmp::LE, x, l));
    return b.select(inside, constant_like(b, 0, x), x);
  }
  Value xu = to_opmath(b, x);
  Value l = fit(b, lambd, xu);
  // x * 0 keeps NaN
  Value r =
      b.select(compare_to(b, Cmp::LT, xu, b.unary("negate", l)), b.add(xu, l), b.mul(xu, constant_like(b, 0, xu)));
  r = b.select(compare_to(b, Cmp::GT, xu, l), b.sub(xu, l), r);
  return from_opmath(b, r, x.dtype());
}

Value shrink_backward(Builder& b, Value grad, Value x, Value lambd) {
  Value l = fit(b, lambd, x);
  Value inside = logical_and(b, compare_to(b, Cmp::GE, x, b.unary("negate", l)), compare_to(b, Cmp::LE, x, l));
  return b.select(inside, constant_like(b, 0, grad), grad);
}

Value logit(Builder& b, Value x, std::optional<Value> eps) {
  Value z = to_opmath(b, x);
  if (eps) {
    Value lo = fit(b, *eps, z);
    Value hi = b.sub(constant_like(b, 1, lo), lo);
    z = b.select(compare_to(b, Cmp::LT, z, lo), lo, b.select(compare_to(b, Cmp::GT, z, hi), hi, z));
  }
  return from_opmath(b, b.unary("log", b.div(z, b.sub(constant_like(b, 1, z), z))), x.dtype());
}

Value logit_backward(Builder& b, Value grad, Value x, std::optional<Value> eps) {
  Value g = to_opmath(b, grad), xu = to_opmath(b, x);
  Value r = b.div(g, b.mul(xu, b.sub(constant_like(b, 1, xu), xu)));  // +-inf at 0 and 1
  if (eps) {
    Value lo = fit(b, *eps, xu);
    Value outside =
        logical_or(b, compare_to(b, Cmp::LT, xu, lo), compare_to(b, Cmp::GT, xu, b.sub(constant_like(b, 1, lo), lo)));
    r = b.select(outside, constant_like(b, 0, r), r);
  } else {
    r = b.select(logical_or(b, compare_to(b, Cmp::LT, xu, 0.0), compare_to(b, Cmp::GT, xu, 1.0)),
                 constant_like(b, kNaN, r), r);
  }
  return from_opmath(b, r, grad.dtype());
}

Value glu(Builder& b, Value x, int64_t dim) {
  DType t = x.dtype();
  Value a = to_opmath(b, half_of(b, x, dim, false)), g = to_opmath(b, half_of(b, x, dim, true));
  return from_opmath(b, b.mul(a, sigmoid_(b, g)), t);
}

Value glu_backward(Builder& b, Value grad, Value x, int64_t dim) {
  DType t = x.dtype();
  Value a = to_opmath(b, half_of(b, x, dim, false)), g = to_opmath(b, half_of(b, x, dim, true)),
        gr = to_opmath(b, grad);
  Value sig = sigmoid_(b, g);
  Value ga = b.mul(gr, sig);
  Value gg = b.mul(b.mul(b.mul(b.sub(constant_like(b, 1, sig), sig), sig), a), gr);
  return b.concatenate({from_opmath(b, ga, t), from_opmath(b, gg, t)}, dim);
}

Value prelu(Builder& b, Value x, Value w) {
  Value pos = b.compare(Cmp::GT, x, b.constant(x.dtype(), 0, x.shape()));
  return b.select(pos, x, b.mul(w, x));
}

std::vector<Value> prelu_backward(Builder& b, Value grad, Value x, Value w) {
  Value zero = b.constant(x.dtype(), 0, x.shape());
  Value pos = b.compare(Cmp::GT, x, zero);
  return {b.select(pos, grad, b.mul(w, grad)), b.select(pos, zero, b.mul(x, grad))};
}

}  // namespace ops
