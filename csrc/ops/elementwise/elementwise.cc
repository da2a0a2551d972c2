// Elementwise lowerings with PyTorch semantics.
#include "ops/elementwise/elementwise.h"

#include <limits>
#include <stdexcept>

#include "ops/coverage.h"

namespace ops {

Value splat(Builder& b, Value s, const Value& like) {
  return b.broadcast_in_dim(b.convert(s, like.dtype()), like.shape(), {});
}

Value convert(Builder& b, Value x, shlo::DType to) {
  if (shlo::is_float(x.dtype()) && shlo::is_unsigned_int(to) && shlo::dtype_size(to) < 8)
    return b.convert(b.convert(x, shlo::DType::S64), to);
  return b.convert(x, to);
}

Value add(Builder& b, Value x, Value y, Value alpha) { return b.add(x, b.mul(y, splat(b, alpha, y))); }

Value sub(Builder& b, Value x, Value y, Value alpha) { return b.sub(x, b.mul(y, splat(b, alpha, y))); }

namespace {

// Floor division of floats as PyTorch's CPU kernel computes it (in f32 for
// half types): through fmod, so 1 // 0.1 is 9 like Python, not floor(10.0).
Value div_floor_float(Builder& b, Value x, Value y) {
  shlo::DType t = x.dtype();
  bool half = t == shlo::DType::F16 || t == shlo::DType::BF16;
  Value a = half ? b.convert(x, shlo::DType::F32) : x, d = half ? b.convert(y, shlo::DType::F32) : y;
  auto k = [&](double v) { return b.constant(a.dtype(), v, a.shape()); };
  auto lt0 = [&](Value v) { return b.compare(shlo::Cmp::LT, v, k(0)); };
  Value mod = b.binary("remainder", a, d);
  Value q = b.div(b.sub(a, mod), d);
  Value step = b.op1("stablehlo.and", {b.compare(shlo::Cmp::NE, mod, k(0)), b.compare(shlo::Cmp::NE, lt0(d), lt0(mod))},
                     lt0(d).type);
  q = b.select(step, b.sub(q, k(1)), q);
  Value fl = b.unary("floor", q);
  fl = b.select(b.compare(shlo::Cmp::GT, b.sub(q, fl), k(0.5)), b.add(fl, k(1)), fl);
  // A zero quotient keeps the sign of the true quotient; division by zero is IEEE's.
  Value plain = b.div(a, d);
  shlo::DType bits = a.dtype() == shlo::DType::F64 ? shlo::DType::S64 : shlo::DType::S32;
  Value sign =
      b.compare(shlo::Cmp::LT, b.bitcast_convert(plain, shlo::Type{bits, a.shape()}), b.constant(bits, 0, a.shape()));
  Value zero = b.select(sign, k(-0.0), k(0));
  Value r = b.select(b.compare(shlo::Cmp::NE, q, k(0)), fl, zero);
  r = b.select(b.compare(shlo::Cmp::EQ, d, k(0)), plain, r);
  return half ? b.convert(r, t) : r;
}

}  // namespace

Value div(Builder& b, Value x, Value y, const std::string& mode) {
  if (mode.empty()) return b.div(x, y);
  if (shlo::is_int(x.dtype())) {
    Value q = b.div(x, y);  // truncates toward zero
    if (mode == "trunc") return q;
    // floor: step down when the signs differ and the division was inexact.
    Value zero = b.constant(x.dtype(), 0, x.shape());
    Value inexact = b.compare(shlo::Cmp::NE, b.mul(q, y), x);
    Value neg = b.compare(shlo::Cmp::NE, b.compare(shlo::Cmp::LT, x, zero), b.compare(shlo::Cmp::LT, y, zero));
    Value adjust = b.op1("stablehlo.and", {inexact, neg}, inexact.type);
    return b.select(adjust, b.sub(q, b.constant(x.dtype(), 1, x.shape())), q);
  }
  Value q = b.div(x, y);
  if (mode == "trunc") {
    Value zero = b.constant(x.dtype(), 0, x.shape());
    return b.select(b.compare(shlo::Cmp::LT, q, zero), b.unary("ceil", q), b.unary("floor", q));
  }
  return div_floor_float(b, x, y);
}

// ---- PyTorch's elementwise family

namespace {

using shlo::Cmp;
using shlo::DType;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kSqrt1_2 = 0.70710678118654752440;   // 1/sqrt(2)
constexpr double k2_SqrtPi = 1.12837916709551257390;  // 2/sqrt(pi)
constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kLn2 = 0.69314718055994530942;
constexpr double kLn10 = 2.30258509299404568402;
constexpr double kGeluKappa = 0.044715;
constexpr double kPi = 3.14159265358979323846;

bool is_half(DType t) { return t == DType::F16 || t == DType::BF16; }

// A constant shaped like `like`.
Value k(Builder& b, double v, const Value& like) { return b.constant(like.dtype(), v, like.shape()); }

// v (0-d or already full-shape) converted and broadcast to like.
Value fit(Builder& b, Value v, const Value& like) {
  if (v.dtype() != like.dtype()) v = convert(b, v, like.dtype());
  if (v.shape() != like.shape()) v = b.broadcast_to(v, like.shape());
  return v;
}

Value land(Builder& b, Value x, Value y) { return b.op1("stablehlo.and", {x, y}, x.type); }
Value lor(Builder& b, Value x, Value y) { return b.op1("stablehlo.or", {x, y}, x.type); }
Value lxor(Builder& b, Value x, Value y) { return b.op1("stablehlo.xor", {x, y}, x.type); }
Value cmp(Builder& b, Cmp d, Value x, Value y) { return b.compare(d, x, y); }
Value cmp(Builder& b, Cmp d, Value x, double y) { return b.compare(d, x, k(b, y, x)); }
Value isnan_(Builder& b, Value x) { return b.compare(Cmp::NE, x, x); }
Value all_false(Builder& b, const Value& like) { return b.constant(DType::PRED, 0, like.shape()); }
Value truth(Builder& b, Value x) { return x.dtype() == DType::PRED ? x : cmp(b, Cmp::NE, x, 0.0); }

// Half-precision values go to f32 for the math and come back rounded once.
Value up(Builder& b, Value x) { return is_half(x.dtype()) ? b.convert(x, DType::F32) : x; }
Value down(Builder& b, Value r, DType t) { return r.dtype() != t && shlo::is_float(r.dtype()) ? b.convert(r, t) : r; }

// maximum / minimum that return NaN when either side is NaN (XLA's own
// maximum keeps the second operand's number when only it is compared to NaN).
Value nan_max(Builder& b, Value x, Value y, bool is_max) {
  if (x.dtype() == DType::PRED) return is_max ? lor(b, x, y) : land(b, x, y);
  Value r = is_max ? b.max(x, y) : b.min(x, y);
  if (!shlo::is_float(x.dtype())) return r;
  r = b.select(isnan_(b, x), x, r);
  return b.select(isnan_(b, y), y, r);
}

Value trunc_(Builder& b, Value x) { return b.select(cmp(b, Cmp::LT, x, 0.0), b.unary("ceil", x), b.unary("floor", x)); }

// The sign bit of a float (set for -0.0 and negative NaNs too).
Value signbit_(Builder& b, Value x) {
  DType bits = shlo::dtype_size(x.dtype()) == 2   ? DType::S16
               : shlo::dtype_size(x.dtype()) == 4 ? DType::S32
                                                  : DType::S64;
  Value i = b.bitcast_convert(x, shlo::Type{bits, x.shape()});
  return cmp(b, Cmp::LT, i, 0.0);
}

Value exp_(Builder& b, Value x) { return b.unary("exponential", x); }
Value erf_(Builder& b, Value x) { return b.op1("chlo.erf", {x}, x.type); }
Value sigmoid_(Builder& b, Value x) { return b.div(k(b, 1, x), b.add(k(b, 1, x), exp_(b, b.unary("negate", x)))); }
// tanh(softplus(x)) as mish computes it.
Value tanh_softplus(Builder& b, Value x) { return b.unary("tanh", b.unary("log_plus_one", exp_(b, x))); }

// min(max(x, 0), 6), NaN propagating.
Value relu6_(Builder& b, Value x) { return nan_max(b, nan_max(b, x, k(b, 0, x), true), k(b, 6, x), false); }

// Float math on x (already f32 for half inputs).
Value math(Builder& b, Unary op, Value x) {
  switch (op) {
    case Unary::Acos:
      return b.op1("chlo.acos", {x}, x.type);
    case Unary::Acosh:
      return b.op1("chlo.acosh", {x}, x.type);
    case Unary::Asin:
      return b.op1("chlo.asin", {x}, x.type);
    case Unary::Asinh:
      return b.op1("chlo.asinh", {x}, x.type);
    case Unary::Atan:
      return b.binary("atan2", x, k(b, 1, x));
    case Unary::Atanh:
      return b.op1("chlo.atanh", {x}, x.type);
    case Unary::Cos:
      return b.unary("cosine", x);
    case Unary::Cosh:
      return b.op1("chlo.cosh", {x}, x.type);
    case Unary::Digamma: {
      // PyTorch: digamma(+-0) = -+inf (the pole's sign follows the side).
      Value r = b.op1("chlo.digamma", {x}, x.type);
      Value pole = b.select(signbit_(b, x), k(b, kInf, x), k(b, -kInf, x));
      return b.select(cmp(b, Cmp::EQ, x, 0.0), pole, r);
    }
    case Unary::Hardsigmoid:
      return b.div(relu6_(b, b.add(x, k(b, 3, x))), k(b, 6, x));
    case Unary::Hardswish:
      return b.div(b.mul(x, relu6_(b, b.add(x, k(b, 3, x)))), k(b, 6, x));
    case Unary::Lgamma:
      return b.op1("chlo.lgamma", {x}, x.type);
    case Unary::Sinh:
      return b.op1("chlo.sinh", {x}, x.type);
    case Unary::Sinc: {
      Value px = b.mul(k(b, kPi, x), x);
      return b.select(cmp(b, Cmp::EQ, x, 0.0), k(b, 1, x), b.div(b.unary("sine", px), px));
    }
    case Unary::Erf:
      return erf_(b, x);
    case Unary::Erfc:
      return b.op1("chlo.erfc", {x}, x.type);
    case Unary::Erfinv:
      return b.op1("chlo.erf_inv", {x}, x.type);
    case Unary::Exp:
      return exp_(b, x);
    case Unary::Exp2:
      return b.binary("power", k(b, 2, x), x);
    case Unary::Expm1:
      return b.unary("exponential_minus_one", x);
    case Unary::Log:
      return b.unary("log", x);
    case Unary::Log10:
      return b.div(b.unary("log", x), k(b, kLn10, x));
    case Unary::Log1p:
      return b.unary("log_plus_one", x);
    case Unary::Log2:
      return b.div(b.unary("log", x), k(b, kLn2, x));
    case Unary::Reciprocal:
      return b.div(k(b, 1, x), x);
    case Unary::Rsqrt:
      return b.unary("rsqrt", x);
    case Unary::Sigmoid:
      return b.unary("logistic", x);
    case Unary::Sin:
      return b.unary("sine", x);
    case Unary::Sqrt:
      return b.unary("sqrt", x);
    case Unary::Tan:
      return b.unary("tan", x);
    case Unary::Tanh:
      return b.unary("tanh", x);
    case Unary::Silu:
      return b.div(x, b.add(k(b, 1, x), exp_(b, b.unary("negate", x))));
    case Unary::Mish:
      return b.mul(x, tanh_softplus(b, x));
    case Unary::Gelu:
      return b.mul(b.mul(x, k(b, 0.5, x)), b.add(k(b, 1, x), erf_(b, b.mul(x, k(b, kSqrt1_2, x)))));
    case Unary::GeluTanh: {
      Value cube = b.mul(b.mul(x, x), x);
      Value inner = b.mul(k(b, kSqrt2 * k2_SqrtPi * 0.5, x), b.add(x, b.mul(k(b, kGeluKappa, x), cube)));
      return b.mul(b.mul(k(b, 0.5, x), x), b.add(k(b, 1, x), b.unary("tanh", inner)));
    }
    case Unary::LogSigmoid: {
      Value z = exp_(b, b.unary("negate", b.unary("abs", x)));
      return b.sub(nan_max(b, x, k(b, 0, x), false), b.unary("log_plus_one", z));
    }
    default:
      throw std::logic_error(std::string("ops::unary: not a float op: ") + name(op));
  }
}

}  // namespace

DType opmath(DType t) { return is_half(t) ? DType::F32 : t; }

const char* name(Unary op) {
  switch (op) {
#define OPS_NAME(e, n) \
  case Unary::e:       \
    return n;
    OPS_UNARY_LIST(OPS_NAME)
#undef OPS_NAME
  }
  return "?";
}

Value unary(Builder& b, Unary op, Value x) {
  DType t = x.dtype();
  bool fl = shlo::is_float(t);
  switch (op) {
    case Unary::Abs:
      if (shlo::is_complex(t))  // the modulus, a real value
        return b.op1("stablehlo.abs", {x},
                     shlo::Type{t == shlo::DType::C128 ? shlo::DType::F64 : shlo::DType::F32, x.shape()});
      return fl || shlo::is_signed_int(t) ? b.unary("abs", x) : x;
    case Unary::BitwiseNot:
      return b.unary("not", x);
    case Unary::Ceil:
      return fl ? b.unary("ceil", x) : x;
    case Unary::Floor:
      return fl ? b.unary("floor", x) : x;
    case Unary::Round:
      return fl ? b.unary("round_nearest_even", x) : x;
    case Unary::Trunc:
      return fl ? trunc_(b, x) : x;
    case Unary::Frac:
      return b.sub(x, trunc_(b, x));
    case Unary::Neg:
      return shlo::is_unsigned_int(t) ? b.sub(k(b, 0, x), x) : b.unary("negate", x);
    case Unary::Sign: {
      // (x > 0) - (x < 0): 0 for NaN, as PyTorch's CPU kernel gives.
      if (t == DType::PRED) return x;
      if (shlo::is_complex(t)) {  // sgn: z / |z|, 0 at 0
        Value mag = unary(b, Unary::Abs, x);
        Value zero = b.constant(mag.dtype(), 0, mag.shape());
        Value mag_c = b.op1("stablehlo.complex", {mag, zero}, x.type);
        return b.select(b.compare(Cmp::EQ, mag, zero), b.constant(t, 0, x.shape()), b.div(x, mag_c));
      }
      Value pos = b.convert(cmp(b, Cmp::GT, x, 0.0), t);
      if (shlo::is_unsigned_int(t)) return pos;
      return b.sub(pos, b.convert(cmp(b, Cmp::LT, x, 0.0), t));
    }
    case Unary::Isnan:
      return fl ? isnan_(b, x) : all_false(b, x);
    case Unary::Isinf:
      return fl ? cmp(b, Cmp::EQ, b.unary("abs", x), kInf) : all_false(b, x);
    case Unary::Isposinf:
      return fl ? cmp(b, Cmp::EQ, x, kInf) : all_false(b, x);
    case Unary::Isneginf:
      return fl ? cmp(b, Cmp::EQ, x, -kInf) : all_false(b, x);
    case Unary::Signbit:
      if (fl) return signbit_(b, x);
      return shlo::is_signed_int(t) ? cmp(b, Cmp::LT, x, 0.0) : all_false(b, x);
    case Unary::LogicalNot:
      return t == DType::PRED ? b.unary("not", x) : cmp(b, Cmp::EQ, x, 0.0);
    case Unary::Relu:
      // clamp_min(x, 0): NaN stays NaN.
      if (!fl) return b.max(x, k(b, 0, x));
      return b.select(cmp(b, Cmp::LT, x, 0.0), k(b, 0, x), x);
    default:
      return down(b, math(b, op, up(b, x)), t);
  }
}

const char* name(Binary op) {
  switch (op) {
#define OPS_NAME(e, n) \
  case Binary::e:      \
    return n;
    OPS_BINARY_LIST(OPS_NAME)
#undef OPS_NAME
  }
  return "?";
}

Value binary(Builder& b, Binary op, Value x, Value y) {
  DType t = x.dtype();
  bool fl = shlo::is_float(t);
  switch (op) {
    case Binary::BitwiseAnd:
      return land(b, x, y);
    case Binary::BitwiseOr:
      return lor(b, x, y);
    case Binary::BitwiseXor:
      return lxor(b, x, y);
    case Binary::LogicalAnd:
      return land(b, truth(b, x), truth(b, y));
    case Binary::LogicalOr:
      return lor(b, truth(b, x), truth(b, y));
    case Binary::LogicalXor:
      return lxor(b, truth(b, x), truth(b, y));
    case Binary::Maximum:
      return nan_max(b, x, y, true);
    case Binary::Minimum:
      return nan_max(b, x, y, false);
    case Binary::Fmax:
    case Binary::Fmin: {
      // NaN loses: the other operand wins.
      bool is_max = op == Binary::Fmax;
      if (t == DType::PRED) return is_max ? lor(b, x, y) : land(b, x, y);
      Value r = is_max ? b.max(x, y) : b.min(x, y);
      if (!fl) return r;
      r = b.select(isnan_(b, x), y, r);
      return b.select(isnan_(b, y), x, r);
    }
    case Binary::Pow:
      // Integer power matches PyTorch's powi: wraps on overflow, 0 for |base| > 1
      // and negative exponents, +-1 for base +-1.
      return fl ? down(b, b.binary("power", up(b, x), up(b, y)), t) : b.binary("power", x, y);
    case Binary::Fmod:
      return fl ? down(b, b.binary("remainder", up(b, x), up(b, y)), t) : b.binary("remainder", x, y);
    case Binary::Remainder: {
      // Python's modulo: C's remainder moved into the divisor's sign.
      Value xu = up(b, x), yu = up(b, y);
      Value r = b.binary("remainder", xu, yu);
      if (shlo::is_unsigned_int(t)) return r;
      Value differ = lxor(b, cmp(b, Cmp::LT, r, 0.0), cmp(b, Cmp::LT, yu, 0.0));
      Value fix = land(b, cmp(b, Cmp::NE, r, 0.0), differ);
      return down(b, b.select(fix, b.add(r, yu), r), t);
    }
    case Binary::Heaviside: {
      // x == 0 ? values : (x > 0)
      Value pos = t == DType::PRED ? cmp(b, Cmp::GT, x, all_false(b, x)) : cmp(b, Cmp::GT, x, 0.0);
      Value zero = t == DType::PRED ? b.unary("not", x) : cmp(b, Cmp::EQ, x, 0.0);
      return b.select(zero, y, b.convert(pos, t));
    }
    case Binary::Copysign: {
      Value a = b.unary("abs", x);
      return b.select(signbit_(b, y), b.unary("negate", a), a);
    }
    default:
      break;
  }
  // Float math in opmath.
  Value xu = up(b, x), yu = up(b, y);
  Value r;
  switch (op) {
    case Binary::Atan2:
      r = b.binary("atan2", xu, yu);
      break;
    case Binary::Hypot: {
      // max * sqrt(1 + (min/max)^2): no overflow for large inputs.
      Value ax = b.unary("abs", xu), ay = b.unary("abs", yu);
      Value hi = nan_max(b, ax, ay, true), lo = nan_max(b, ax, ay, false);
      Value q = b.div(lo, hi);
      r = b.mul(hi, b.unary("sqrt", b.add(k(b, 1, q), b.mul(q, q))));
      r = b.select(cmp(b, Cmp::EQ, hi, 0.0), k(b, 0, r), r);
      r = b.select(lor(b, cmp(b, Cmp::EQ, ax, kInf), cmp(b, Cmp::EQ, ay, kInf)), k(b, kInf, r), r);
      break;
    }
    case Binary::Logaddexp:
    case Binary::Logaddexp2: {
      // max + log1p(exp(-|x - y|)); equal infinities are their own result.
      Value d = b.unary("negate", b.unary("abs", b.sub(xu, yu)));
      Value m = b.max(xu, yu);
      r = op == Binary::Logaddexp
              ? b.add(m, b.unary("log_plus_one", exp_(b, d)))
              : b.add(m, b.div(b.unary("log_plus_one", b.binary("power", k(b, 2, d), d)), k(b, kLn2, d)));
      Value same_inf = land(b, cmp(b, Cmp::EQ, b.unary("abs", xu), kInf), cmp(b, Cmp::EQ, xu, yu));
      r = b.select(same_inf, xu, r);
      break;
    }
    case Binary::Xlogy:
      r = b.mul(xu, b.unary("log", yu));
      r = b.select(cmp(b, Cmp::EQ, xu, 0.0), k(b, 0, r), r);
      r = b.select(isnan_(b, yu), k(b, kNaN, r), r);
      break;
    case Binary::SigmoidBackward:  // grad * (1 - y) * y
      r = b.mul(b.mul(xu, b.sub(k(b, 1, yu), yu)), yu);
      break;
    case Binary::TanhBackward:  // grad * (1 - y^2)
      r = b.mul(xu, b.sub(k(b, 1, yu), b.mul(yu, yu)));
      break;
    case Binary::SiluBackward: {
      Value s = sigmoid_(b, yu);
      r = b.mul(b.mul(xu, s), b.add(k(b, 1, s), b.mul(yu, b.sub(k(b, 1, s), s))));
      break;
    }
    case Binary::MishBackward: {
      Value s = sigmoid_(b, yu);
      Value ts = tanh_softplus(b, yu);
      Value d = b.add(ts, b.mul(b.mul(yu, s), b.sub(k(b, 1, ts), b.mul(ts, ts))));
      r = b.mul(xu, d);
      break;
    }
    case Binary::GeluBackward: {
      Value cdf = b.mul(k(b, 0.5, yu), b.add(k(b, 1, yu), erf_(b, b.mul(yu, k(b, kSqrt1_2, yu)))));
      Value pdf = b.mul(k(b, k2_SqrtPi * kSqrt1_2 * 0.5, yu), exp_(b, b.mul(b.mul(yu, yu), k(b, -0.5, yu))));
      r = b.mul(xu, b.add(cdf, b.mul(yu, pdf)));
      break;
    }
    case Binary::GeluTanhBackward: {
      Value beta = k(b, kSqrt2 * k2_SqrtPi * 0.5, yu), kappa = k(b, kGeluKappa, yu), one = k(b, 1, yu);
      Value sq = b.mul(yu, yu), cube = b.mul(sq, yu);
      Value th = b.unary("tanh", b.mul(beta, b.add(yu, b.mul(kappa, cube))));
      Value left = b.mul(k(b, 0.5, yu), yu), right = b.add(one, th);
      Value dleft = b.mul(k(b, 0.5, yu), right);
      Value dtanh = b.sub(one, b.mul(th, th));
      Value dinner = b.mul(beta, b.add(one, b.mul(k(b, 3 * kGeluKappa, yu), sq)));
      Value dright = b.mul(b.mul(left, dtanh), dinner);
      r = b.mul(xu, b.add(dleft, dright));
      break;
    }
    case Binary::HardsigmoidBackward: {
      Value inside = land(b, cmp(b, Cmp::GT, yu, -3.0), cmp(b, Cmp::LT, yu, 3.0));
      r = b.select(inside, b.mul(xu, k(b, 1.0 / 6, xu)), k(b, 0, xu));
      break;
    }
    case Binary::HardswishBackward: {
      Value mid = b.mul(xu, b.add(b.div(yu, k(b, 3, yu)), k(b, 0.5, yu)));
      // The formula holds strictly inside (-3, 3), as on the CPU.
      r = b.select(cmp(b, Cmp::LE, yu, -3.0), k(b, 0, xu), b.select(cmp(b, Cmp::LT, yu, 3.0), mid, xu));
      break;
    }
    case Binary::LogSigmoidBackward: {
      // The CPU kernel's form, with its buffer exp(-|x|) recomputed.
      Value z = exp_(b, b.unary("negate", b.unary("abs", yu)));
      Value neg = cmp(b, Cmp::LT, yu, 0.0);
      Value max_deriv = b.select(neg, k(b, 1, z), k(b, 0, z));
      Value sign = b.select(neg, k(b, 1, z), k(b, -1, z));
      r = b.mul(b.sub(max_deriv, b.mul(sign, b.div(z, b.add(k(b, 1, z), z)))), xu);
      break;
    }
    default:
      throw std::logic_error(std::string("ops::binary: unhandled ") + name(op));
  }
  return down(b, r, t);
}

Value compare(Builder& b, Cmp dir, Value x, Value y) { return b.compare(dir, x, y); }

Value threshold(Builder& b, Value x, Value other, Value th, Value value) {
  // Compared in float for bf16/f16 against the unrounded threshold, as the
  // CPU kernel does (0.3008 > 0.3 even though bf16(0.3) == 0.3008).
  Value xu = up(b, x);
  return b.select(cmp(b, Cmp::LE, xu, fit(b, th, xu)), fit(b, value, other), other);
}

Value leaky_relu(Builder& b, Value x, Value slope) {
  Value xu = up(b, x);
  Value r = b.select(cmp(b, Cmp::GT, xu, 0.0), xu, b.mul(xu, fit(b, slope, xu)));
  return down(b, r, x.dtype());
}

Value leaky_relu_backward(Builder& b, Value grad, Value x, Value slope) {
  Value g = up(b, grad), xu = up(b, x);
  Value r = b.select(cmp(b, Cmp::GT, xu, 0.0), g, b.mul(g, fit(b, slope, g)));
  return down(b, r, grad.dtype());
}

Value elu(Builder& b, Value x, Value alpha, Value scale, Value input_scale) {
  Value xu = up(b, x);
  Value negcoef = fit(b, b.mul(alpha, scale), xu), poscoef = fit(b, scale, xu);
  Value negin = fit(b, input_scale, xu);
  Value neg = b.mul(b.sub(exp_(b, b.mul(xu, negin)), k(b, 1, xu)), negcoef);
  return down(b, b.select(cmp(b, Cmp::LE, xu, 0.0), neg, b.mul(xu, poscoef)), x.dtype());
}

Value elu_backward(Builder& b, Value grad, Value x_or_y, Value alpha, Value scale, Value input_scale, bool is_result) {
  Value g = up(b, grad), v = up(b, x_or_y);
  Value negcoef = fit(b, b.mul(alpha, scale), g), poscoef = fit(b, scale, g);
  Value negin = fit(b, input_scale, g);
  Value neg = is_result ? b.mul(b.mul(g, negin), b.add(v, negcoef))
                        : b.mul(b.mul(b.mul(g, negin), negcoef), exp_(b, b.mul(v, negin)));
  return down(b, b.select(cmp(b, Cmp::LE, v, 0.0), neg, b.mul(g, poscoef)), grad.dtype());
}

Value hardtanh_backward(Builder& b, Value grad, Value x, Value lo, Value hi) {
  Value xu = up(b, x);
  Value out = lor(b, cmp(b, Cmp::LE, xu, fit(b, lo, xu)), cmp(b, Cmp::GE, xu, fit(b, hi, xu)));
  return b.select(out, k(b, 0, grad), grad);
}

Value softplus(Builder& b, Value x, Value beta, Value threshold) {
  Value xu = up(b, x);
  Value be = fit(b, beta, xu);
  Value xb = b.mul(xu, be);
  Value soft = b.div(b.unary("log_plus_one", exp_(b, xb)), be);
  return down(b, b.select(cmp(b, Cmp::GT, xb, fit(b, threshold, xu)), xu, soft), x.dtype());
}

Value softplus_backward(Builder& b, Value grad, Value x, Value beta, Value threshold) {
  Value g = up(b, grad), xu = up(b, x);
  Value xb = b.mul(xu, fit(b, beta, xu));
  Value z = exp_(b, xb);
  Value soft = b.div(b.mul(g, z), b.add(z, k(b, 1, z)));
  return down(b, b.select(cmp(b, Cmp::GT, xb, fit(b, threshold, xu)), g, soft), grad.dtype());
}

Value shrink(Builder& b, Value x, Value lambd, bool soft) {
  if (!soft) {
    Value l = fit(b, lambd, x);
    Value inside = land(b, cmp(b, Cmp::GE, x, b.unary("negate", l)), cmp(b, Cmp::LE, x, l));
    return b.select(inside, k(b, 0, x), x);
  }
  Value xu = up(b, x);
  Value l = fit(b, lambd, xu);
  // x * 0 keeps NaN
  Value r = b.select(cmp(b, Cmp::LT, xu, b.unary("negate", l)), b.add(xu, l), b.mul(xu, k(b, 0, xu)));
  r = b.select(cmp(b, Cmp::GT, xu, l), b.sub(xu, l), r);
  return down(b, r, x.dtype());
}

Value shrink_backward(Builder& b, Value grad, Value x, Value lambd) {
  Value l = fit(b, lambd, x);
  Value inside = land(b, cmp(b, Cmp::GE, x, b.unary("negate", l)), cmp(b, Cmp::LE, x, l));
  return b.select(inside, k(b, 0, grad), grad);
}

Value polygamma(Builder& b, Value n, Value x) {
  // chlo.polygamma is wrong for negative x; coverage.cc applies PyTorch's rules.
  return ops::polygamma_cpu(b, n, x);
}

Value logit(Builder& b, Value x, std::optional<Value> eps) {
  Value z = up(b, x);
  if (eps) {
    Value lo = fit(b, *eps, z);
    Value hi = b.sub(k(b, 1, lo), lo);
    z = b.select(cmp(b, Cmp::LT, z, lo), lo, b.select(cmp(b, Cmp::GT, z, hi), hi, z));
  }
  return down(b, b.unary("log", b.div(z, b.sub(k(b, 1, z), z))), x.dtype());
}

Value logit_backward(Builder& b, Value grad, Value x, std::optional<Value> eps) {
  Value g = up(b, grad), xu = up(b, x);
  Value r = b.div(g, b.mul(xu, b.sub(k(b, 1, xu), xu)));  // +-inf at 0 and 1
  if (eps) {
    Value lo = fit(b, *eps, xu);
    Value outside = lor(b, cmp(b, Cmp::LT, xu, lo), cmp(b, Cmp::GT, xu, b.sub(k(b, 1, lo), lo)));
    r = b.select(outside, k(b, 0, r), r);
  } else {
    r = b.select(lor(b, cmp(b, Cmp::LT, xu, 0.0), cmp(b, Cmp::GT, xu, 1.0)), k(b, kNaN, r), r);
  }
  return down(b, r, grad.dtype());
}

Value clamp(Builder& b, Value x, std::optional<Value> lo, std::optional<Value> hi) {
  bool fl = shlo::is_float(x.dtype());
  Value r = x;  // a NaN x fails both comparisons and stays
  if (lo) {
    Value l = fit(b, *lo, x);
    r = b.select(cmp(b, Cmp::LT, r, l), l, r);
    if (fl) r = b.select(isnan_(b, l), l, r);
  }
  if (hi) {
    Value h = fit(b, *hi, x);
    r = b.select(cmp(b, Cmp::GT, r, h), h, r);
    if (fl) r = b.select(isnan_(b, h), h, r);
  }
  return r;
}

Value pow_special(Builder& b, Value x, double e) {
  DType t = x.dtype();
  Value u = up(b, x);
  Value one = b.constant(u.dtype(), 1.0, u.shape());
  Value r;
  if (e == 0.0)
    r = one;  // even for NaN and inf, as PyTorch fills ones
  else if (e == 1.0)
    r = u;
  else if (e == 2.0)
    r = b.mul(u, u);
  else if (e == 3.0)
    r = b.mul(b.mul(u, u), u);
  else if (e == 0.5)
    r = b.unary("sqrt", u);
  else if (e == -0.5)
    r = b.unary("rsqrt", u);
  else if (e == -1.0)
    r = b.div(one, u);
  else if (e == -2.0)
    r = b.div(one, b.mul(u, u));
  else
    throw std::invalid_argument("pow_special: exponent " + std::to_string(e) + " has no special form");
  return down(b, r, t);
}

Value round_decimals(Builder& b, Value x, Value ten_pow, bool negative) {
  Value xu = up(b, x);
  Value p = fit(b, ten_pow, xu);
  Value r = negative ? b.mul(b.unary("round_nearest_even", b.div(xu, p)), p)
                     : b.div(b.unary("round_nearest_even", b.mul(xu, p)), p);
  return down(b, r, x.dtype());
}

Value nan_to_num(Builder& b, Value x, Value nan, Value posinf, Value neginf) {
  if (!shlo::is_float(x.dtype())) return x;
  Value r = b.select(isnan_(b, x), fit(b, nan, x), x);
  r = b.select(cmp(b, Cmp::EQ, x, kInf), fit(b, posinf, x), r);
  return b.select(cmp(b, Cmp::EQ, x, -kInf), fit(b, neginf, x), r);
}

Value where(Builder& b, Value cond, Value x, Value y) { return b.select(truth(b, cond), x, y); }

Value lerp(Builder& b, Value self, Value end, Value weight) {
  Value s = up(b, self), e = up(b, end);
  Value w = fit(b, up(b, weight), s);
  Value diff = b.sub(e, s);
  Value small = cmp(b, Cmp::LT, b.unary("abs", w), 0.5);
  Value r = b.select(small, b.add(s, b.mul(w, diff)), b.sub(e, b.mul(diff, b.sub(k(b, 1, w), w))));
  return down(b, r, self.dtype());
}

Value addcmul(Builder& b, Value self, Value t1, Value t2, Value value) {
  Value s = up(b, self);
  Value v = fit(b, value, s);
  return down(b, b.add(s, b.mul(b.mul(v, up(b, t1)), up(b, t2))), self.dtype());
}

Value addcdiv(Builder& b, Value self, Value t1, Value t2, Value value) {
  Value s = up(b, self);
  Value v = fit(b, value, s);
  return down(b, b.add(s, b.div(b.mul(v, up(b, t1)), up(b, t2))), self.dtype());
}

}  // namespace ops
