// Elementwise lowerings with PyTorch semantics: the pointwise family
// (unary, binary, clamp, pow, lerp, addc*...) one op or a few per PyTorch
// function. Special functions are in special.cc, integer and bit math in
// integer.cc.
#include "ops/elementwise/elementwise.h"

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/common/lowering.h"

namespace ops {

Value splat(Builder& b, Value s, const Value& like) {
  return b.broadcast_in_dim(b.convert(s, like.dtype()), like.shape(), {});
}

Value as_scalar(Builder& b, Value x) { return x.rank() == 0 ? x : b.reshape(x, {}); }

namespace {

// x86's truncating conversion to int32 / int64 (what PyTorch's CPU kernels
// and NumPy compile to): NaN and a value out of range become the minimum,
// where XLA saturates. 2^31 and 2^63 are exact in every float dtype.
Value truncate_like_x86(Builder& b, Value x, shlo::DType wide) {
  const double limit = wide == shlo::DType::S64 ? 9223372036854775808.0 : 2147483648.0;
  Value inside = logical_and(b, b.compare(shlo::Cmp::GE, x, constant_like(b, -limit, x)),
                             b.compare(shlo::Cmp::LT, x, constant_like(b, limit, x)));
  return b.select(inside, b.convert(x, wide), b.constant(wide, -limit, x.shape()));
}

}  // namespace

Value convert(Builder& b, Value x, shlo::DType to) {
  if (!shlo::is_float(x.dtype()) || !shlo::is_int(to)) return b.convert(x, to);
  // Narrower integers keep the low bits of the CPU's int64 result (uint8)
  // or int32 result (int8, int16, uint16). uint32 takes the int64 result's
  // for values >= 0 and the int32 result's otherwise (NaN included): the
  // CPU's own uint32 results past 2^32 follow no one rule (they differ by
  // float dtype and between its scalar and vector paths); below, they match.
  if (to == shlo::DType::U8) return b.convert(truncate_like_x86(b, x, shlo::DType::S64), to);
  if (to == shlo::DType::U32) {
    Value from64 = b.convert(truncate_like_x86(b, x, shlo::DType::S64), to);
    Value from32 = b.convert(truncate_like_x86(b, x, shlo::DType::S32), to);
    return b.select(b.compare(shlo::Cmp::GE, x, constant_like(b, 0, x)), from64, from32);
  }
  if (to == shlo::DType::U64) return b.convert(x, to);
  const shlo::DType wide = to == shlo::DType::S64 ? shlo::DType::S64 : shlo::DType::S32;
  Value r = truncate_like_x86(b, x, wide);
  return wide == to ? r : b.convert(r, to);
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
  auto num = [&](double v) { return constant_like(b, v, a); };
  auto lt0 = [&](Value v) { return b.compare(shlo::Cmp::LT, v, num(0)); };
  Value mod = b.binary("remainder", a, d);
  Value q = b.div(b.sub(a, mod), d);
  Value step = logical_and(b, b.compare(shlo::Cmp::NE, mod, num(0)), b.compare(shlo::Cmp::NE, lt0(d), lt0(mod)));
  q = b.select(step, b.sub(q, num(1)), q);
  Value fl = b.unary("floor", q);
  fl = b.select(b.compare(shlo::Cmp::GT, b.sub(q, fl), num(0.5)), b.add(fl, num(1)), fl);
  // A zero quotient keeps the sign of the true quotient; division by zero is IEEE's.
  Value plain = b.div(a, d);
  shlo::DType bits = a.dtype() == shlo::DType::F64 ? shlo::DType::S64 : shlo::DType::S32;
  Value sign =
      b.compare(shlo::Cmp::LT, b.bitcast_convert(plain, shlo::Type{bits, a.shape()}), b.constant(bits, 0, a.shape()));
  Value zero = b.select(sign, num(-0.0), num(0));
  Value r = b.select(b.compare(shlo::Cmp::NE, q, num(0)), fl, zero);
  r = b.select(b.compare(shlo::Cmp::EQ, d, num(0)), plain, r);
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
    Value adjust = logical_and(b, inexact, neg);
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
constexpr double kLn2 = 0.69314718055994530942;
constexpr double kLn10 = 2.30258509299404568402;
constexpr double kPi = 3.14159265358979323846;

bool is_half(DType t) { return t == DType::F16 || t == DType::BF16; }

Value all_false(Builder& b, const Value& like) { return b.constant(DType::PRED, 0, like.shape()); }
Value truth(Builder& b, Value x) { return x.dtype() == DType::PRED ? x : compare_to(b, Cmp::NE, x, 0.0); }

// maximum / minimum that return NaN when either side is NaN (XLA's own
// maximum keeps the second operand's number when only it is compared to NaN).
Value nan_max(Builder& b, Value x, Value y, bool is_max) {
  if (x.dtype() == DType::PRED) return is_max ? logical_or(b, x, y) : logical_and(b, x, y);
  Value r = is_max ? b.max(x, y) : b.min(x, y);
  if (!shlo::is_float(x.dtype())) return r;
  r = b.select(is_nan(b, x), x, r);
  return b.select(is_nan(b, y), y, r);
}

Value trunc_(Builder& b, Value x) {
  return b.select(compare_to(b, Cmp::LT, x, 0.0), b.unary("ceil", x), b.unary("floor", x));
}

// The sign bit of a float (set for -0.0 and negative NaNs too).
Value signbit_(Builder& b, Value x) {
  DType bits = shlo::dtype_size(x.dtype()) == 2   ? DType::S16
               : shlo::dtype_size(x.dtype()) == 4 ? DType::S32
                                                  : DType::S64;
  Value i = b.bitcast_convert(x, shlo::Type{bits, x.shape()});
  return compare_to(b, Cmp::LT, i, 0.0);
}

Value erf_(Builder& b, Value x) { return b.op1("chlo.erf", {x}, x.type); }
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
      return b.binary("atan2", x, constant_like(b, 1, x));
    case Unary::Atanh:
      return b.op1("chlo.atanh", {x}, x.type);
    case Unary::Cos:
      return b.unary("cosine", x);
    case Unary::Cosh:
      return b.op1("chlo.cosh", {x}, x.type);
    case Unary::Digamma: {
      // PyTorch: digamma(+-0) = -+inf (the pole's sign follows the side).
      Value r = b.op1("chlo.digamma", {x}, x.type);
      Value pole = b.select(signbit_(b, x), constant_like(b, kInf, x), constant_like(b, -kInf, x));
      return b.select(compare_to(b, Cmp::EQ, x, 0.0), pole, r);
    }
    case Unary::Lgamma:
      return b.op1("chlo.lgamma", {x}, x.type);
    case Unary::Sinh:
      return b.op1("chlo.sinh", {x}, x.type);
    case Unary::Sinc: {
      Value px = b.mul(constant_like(b, kPi, x), x);
      return b.select(compare_to(b, Cmp::EQ, x, 0.0), constant_like(b, 1, x), b.div(b.unary("sine", px), px));
    }
    case Unary::Erf:
      return erf_(b, x);
    case Unary::Erfc:
      return b.op1("chlo.erfc", {x}, x.type);
    case Unary::Erfinv:
      return b.op1("chlo.erf_inv", {x}, x.type);
    case Unary::Exp:
      return exponential(b, x);
    case Unary::Exp2:
      return b.binary("power", constant_like(b, 2, x), x);
    case Unary::Expm1:
      return b.unary("exponential_minus_one", x);
    case Unary::Log:
      return b.unary("log", x);
    case Unary::Log10:
      return b.div(b.unary("log", x), constant_like(b, kLn10, x));
    case Unary::Log1p:
      return b.unary("log_plus_one", x);
    case Unary::Log2:
      return b.div(b.unary("log", x), constant_like(b, kLn2, x));
    case Unary::Reciprocal:
      return b.div(constant_like(b, 1, x), x);
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
    default:
      throw std::logic_error(std::string("ops::unary: not a float op: ") + name(op));
  }
}

}  // namespace

DType opmath(DType t) { return is_half(t) ? DType::F32 : t; }

// Half-precision values go to f32 for the math and come back rounded once.
Value to_opmath(Builder& b, Value x) { return is_half(x.dtype()) ? b.convert(x, DType::F32) : x; }
Value from_opmath(Builder& b, Value r, DType t) {
  return r.dtype() != t && shlo::is_float(r.dtype()) ? b.convert(r, t) : r;
}

Value fit(Builder& b, Value v, const Value& like) {
  if (v.dtype() != like.dtype()) v = convert(b, v, like.dtype());
  if (v.shape() != like.shape()) v = b.broadcast_to(v, like.shape());
  return v;
}

Value unary(Builder& b, Unary op, Value x) {
  DType t = x.dtype();
  bool fl = shlo::is_float(t);
  switch (op) {
    case Unary::Abs:
      if (shlo::is_complex(t)) return modulus(b, x);  // a real value
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
      return shlo::is_unsigned_int(t) ? b.sub(constant_like(b, 0, x), x) : b.unary("negate", x);
    case Unary::Sign: {
      // (x > 0) - (x < 0): 0 for NaN, as PyTorch's CPU kernel gives.
      if (t == DType::PRED) return x;
      if (shlo::is_complex(t)) {  // sgn: z / |z|, 0 at 0
        Value mag = unary(b, Unary::Abs, x);
        Value zero = b.constant(mag.dtype(), 0, mag.shape());
        Value mag_c = make_complex(b, mag, zero);
        return b.select(b.compare(Cmp::EQ, mag, zero), b.constant(t, 0, x.shape()), b.div(x, mag_c));
      }
      Value pos = b.convert(compare_to(b, Cmp::GT, x, 0.0), t);
      if (shlo::is_unsigned_int(t)) return pos;
      return b.sub(pos, b.convert(compare_to(b, Cmp::LT, x, 0.0), t));
    }
    case Unary::Isnan:
      return fl || shlo::is_complex(t) ? is_nan(b, x) : all_false(b, x);
    case Unary::Isinf:
      // A complex value is infinite where either part is.
      if (shlo::is_complex(t)) return logical_or(b, unary(b, op, real_part(b, x)), unary(b, op, imag_part(b, x)));
      return fl ? compare_to(b, Cmp::EQ, b.unary("abs", x), kInf) : all_false(b, x);
    case Unary::Isposinf:
      return fl ? compare_to(b, Cmp::EQ, x, kInf) : all_false(b, x);
    case Unary::Isneginf:
      return fl ? compare_to(b, Cmp::EQ, x, -kInf) : all_false(b, x);
    case Unary::Signbit:
      if (fl) return signbit_(b, x);
      return shlo::is_signed_int(t) ? compare_to(b, Cmp::LT, x, 0.0) : all_false(b, x);
    case Unary::LogicalNot:
      return t == DType::PRED ? b.unary("not", x) : compare_to(b, Cmp::EQ, x, 0.0);
    default:
      return from_opmath(b, math(b, op, to_opmath(b, x)), t);
  }
}

Value binary(Builder& b, Binary op, Value x, Value y) {
  DType t = x.dtype();
  bool fl = shlo::is_float(t);
  switch (op) {
    case Binary::BitwiseAnd:
      return logical_and(b, x, y);
    case Binary::BitwiseOr:
      return logical_or(b, x, y);
    case Binary::BitwiseXor:
      return logical_xor(b, x, y);
    case Binary::LogicalAnd:
      return logical_and(b, truth(b, x), truth(b, y));
    case Binary::LogicalOr:
      return logical_or(b, truth(b, x), truth(b, y));
    case Binary::LogicalXor:
      return logical_xor(b, truth(b, x), truth(b, y));
    case Binary::Maximum:
      return nan_max(b, x, y, true);
    case Binary::Minimum:
      return nan_max(b, x, y, false);
    case Binary::Fmax:
    case Binary::Fmin: {
      // NaN loses: the other operand wins.
      bool is_max = op == Binary::Fmax;
      if (t == DType::PRED) return is_max ? logical_or(b, x, y) : logical_and(b, x, y);
      Value r = is_max ? b.max(x, y) : b.min(x, y);
      if (!fl) return r;
      r = b.select(is_nan(b, x), y, r);
      return b.select(is_nan(b, y), x, r);
    }
    case Binary::Pow:
      // Integer power matches PyTorch's powi: wraps on overflow, 0 for |base| > 1
      // and negative exponents, +-1 for base +-1.
      // Complex powers as PyTorch's kernels compute them, e^(y log x), with
      // C's special values: a zero base gives 0, (inf, NaN) or NaN by the
      // sign of Re y, and infinite parts follow e^'s rules, where XLA's
      // power gives NaN.
      if (shlo::is_complex(t)) return exponential(b, b.mul(y, b.unary("log", x)));
      return fl ? from_opmath(b, b.binary("power", to_opmath(b, x), to_opmath(b, y)), t) : b.binary("power", x, y);
    case Binary::Fmod:
      return fl ? from_opmath(b, b.binary("remainder", to_opmath(b, x), to_opmath(b, y)), t)
                : b.binary("remainder", x, y);
    case Binary::Remainder: {
      // Python's modulo: C's remainder moved into the divisor's sign.
      Value xu = to_opmath(b, x), yu = to_opmath(b, y);
      Value r = b.binary("remainder", xu, yu);
      if (shlo::is_unsigned_int(t)) return r;
      Value differ = logical_xor(b, compare_to(b, Cmp::LT, r, 0.0), compare_to(b, Cmp::LT, yu, 0.0));
      Value fix = logical_and(b, compare_to(b, Cmp::NE, r, 0.0), differ);
      return from_opmath(b, b.select(fix, b.add(r, yu), r), t);
    }
    case Binary::Heaviside: {
      // x == 0 ? values : (x > 0)
      Value pos = t == DType::PRED ? compare_to(b, Cmp::GT, x, all_false(b, x)) : compare_to(b, Cmp::GT, x, 0.0);
      Value zero = t == DType::PRED ? b.unary("not", x) : compare_to(b, Cmp::EQ, x, 0.0);
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
  Value xu = to_opmath(b, x), yu = to_opmath(b, y);
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
      r = b.mul(hi, b.unary("sqrt", b.add(constant_like(b, 1, q), b.mul(q, q))));
      r = b.select(compare_to(b, Cmp::EQ, hi, 0.0), constant_like(b, 0, r), r);
      r = b.select(logical_or(b, compare_to(b, Cmp::EQ, ax, kInf), compare_to(b, Cmp::EQ, ay, kInf)),
                   constant_like(b, kInf, r), r);
      break;
    }
    case Binary::Logaddexp:
    case Binary::Logaddexp2: {
      if (shlo::is_complex(xu.dtype())) {
        // The operand with the larger real part is the base, as PyTorch's
        // complex kernel takes it: max + log1p(exp(min - max)).
        Value x_first = b.compare(Cmp::GE, real_part(b, xu), real_part(b, yu));
        Value hi = b.select(x_first, xu, yu), lo = b.select(x_first, yu, xu);
        r = b.add(hi, b.unary("log_plus_one", exponential(b, b.sub(lo, hi))));
        break;
      }
      // max + log1p(exp(-|x - y|)); equal infinities are their own result.
      Value d = b.unary("negate", b.unary("abs", b.sub(xu, yu)));
      Value m = b.max(xu, yu);
      r = op == Binary::Logaddexp
              ? b.add(m, b.unary("log_plus_one", exponential(b, d)))
              : b.add(m, b.div(b.unary("log_plus_one", b.binary("power", constant_like(b, 2, d), d)),
                               constant_like(b, kLn2, d)));
      Value same_inf = logical_and(b, compare_to(b, Cmp::EQ, b.unary("abs", xu), kInf), compare_to(b, Cmp::EQ, xu, yu));
      r = b.select(same_inf, xu, r);
      break;
    }
    case Binary::Xlogy:
      r = b.mul(xu, b.unary("log", yu));
      r = b.select(compare_to(b, Cmp::EQ, xu, 0.0), constant_like(b, 0, r), r);
      r = b.select(is_nan(b, yu), constant_like(b, kNaN, r), r);
      break;
    default:
      throw std::logic_error(std::string("ops::binary: unhandled ") + name(op));
  }
  return from_opmath(b, r, t);
}

Value compare(Builder& b, Cmp dir, Value x, Value y) { return b.compare(dir, x, y); }

Value clamp(Builder& b, Value x, std::optional<Value> lo, std::optional<Value> hi) {
  bool fl = shlo::is_float(x.dtype());
  Value r = x;  // a NaN x fails both comparisons and stays
  if (lo) {
    Value l = fit(b, *lo, x);
    r = b.select(compare_to(b, Cmp::LT, r, l), l, r);
    if (fl) r = b.select(is_nan(b, l), l, r);
  }
  if (hi) {
    Value h = fit(b, *hi, x);
    r = b.select(compare_to(b, Cmp::GT, r, h), h, r);
    if (fl) r = b.select(is_nan(b, h), h, r);
  }
  return r;
}

Value pow_special(Builder& b, Value x, double e) {
  DType t = x.dtype();
  Value u = to_opmath(b, x);
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
  return from_opmath(b, r, t);
}

Value round_decimals(Builder& b, Value x, Value ten_pow, bool negative) {
  Value xu = to_opmath(b, x);
  Value p = fit(b, ten_pow, xu);
  Value r = negative ? b.mul(b.unary("round_nearest_even", b.div(xu, p)), p)
                     : b.div(b.unary("round_nearest_even", b.mul(xu, p)), p);
  return from_opmath(b, r, x.dtype());
}

Value nan_to_num(Builder& b, Value x, Value nan, Value posinf, Value neginf) {
  if (shlo::is_complex(x.dtype()))
    return make_complex(b, nan_to_num(b, real_part(b, x), nan, posinf, neginf),
                        nan_to_num(b, imag_part(b, x), nan, posinf, neginf));
  if (!shlo::is_float(x.dtype())) return x;
  Value r = b.select(is_nan(b, x), fit(b, nan, x), x);
  r = b.select(compare_to(b, Cmp::EQ, x, kInf), fit(b, posinf, x), r);
  return b.select(compare_to(b, Cmp::EQ, x, -kInf), fit(b, neginf, x), r);
}

Value where(Builder& b, Value cond, Value x, Value y) { return b.select(truth(b, cond), x, y); }

Value lerp(Builder& b, Value self, Value end, Value weight) {
  Value s = to_opmath(b, self), e = to_opmath(b, end);
  Value w = fit(b, to_opmath(b, weight), s);
  Value diff = b.sub(e, s);
  Value small = compare_to(b, Cmp::LT, shlo::is_complex(w.dtype()) ? modulus(b, w) : b.unary("abs", w), 0.5);
  Value r = b.select(small, b.add(s, b.mul(w, diff)), b.sub(e, b.mul(diff, b.sub(constant_like(b, 1, w), w))));
  return from_opmath(b, r, self.dtype());
}

Value addcmul(Builder& b, Value self, Value t1, Value t2, Value value) {
  Value s = to_opmath(b, self);
  Value v = fit(b, value, s);
  return from_opmath(b, b.add(s, b.mul(b.mul(v, to_opmath(b, t1)), to_opmath(b, t2))), self.dtype());
}

Value addcdiv(Builder& b, Value self, Value t1, Value t2, Value value) {
  Value s = to_opmath(b, self);
  Value v = fit(b, value, s);
  return from_opmath(b, b.add(s, b.div(b.mul(v, to_opmath(b, t1)), to_opmath(b, t2))), self.dtype());
}

Value conj(Builder& b, Value x) {
  if (!shlo::is_complex(x.dtype())) return x;
  return make_complex(b, real_part(b, x), b.unary("negate", imag_part(b, x)));
}

}  // namespace ops
