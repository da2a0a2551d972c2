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

// ---- complex math with C's special values, as PyTorch's CPU kernels give
// them where XLA's complex ops give NaN parts.

Value is_inf_part(Builder& b, Value p) { return compare_to(b, Cmp::EQ, b.unary("abs", p), kInf); }

// mag with the sign bit of sign (C's copysign for a non-negative mag; -0
// and NaNs' sign bits count).
Value signed_like(Builder& b, Value mag, Value sign) {
  return b.select(signbit_(b, sign), b.unary("negate", mag), mag);
}

// a * p for each part of z (a real factor: an infinite part stays infinite
// where a complex multiply would make its partner NaN).
Value scale_parts(Builder& b, Value z, double a) {
  Value re = real_part(b, z), im = imag_part(b, z);
  return make_complex(b, b.mul(re, constant_like(b, a, re)), b.mul(im, constant_like(b, a, im)));
}

}  // namespace

// n / z by PyTorch's c10::complex division (scaled by the larger part of
// z): 1 / (0 + 0i) is (inf, NaN) and 1 / (inf + inf i) is NaN, as on the CPU.
Value divide_c10(Builder& b, Value n, Value z) {
  Value a = real_part(b, n), bi = imag_part(b, n);
  Value c = real_part(b, z), d = imag_part(b, z);
  Value one = constant_like(b, 1, c);
  Value ac = b.unary("abs", c), ad = b.unary("abs", d);
  Value c_major = compare_to(b, Cmp::GE, ac, ad);
  // |c| >= |d|: rat = d / c, scl = 1 / (c + d rat), ((a + b rat) scl, (b - a rat) scl).
  Value rat1 = b.div(d, c), scl1 = b.div(one, b.add(c, b.mul(d, rat1)));
  Value re1 = b.mul(b.add(a, b.mul(bi, rat1)), scl1), im1 = b.mul(b.sub(bi, b.mul(a, rat1)), scl1);
  // Both zero: (a / |c|, b / |d|).
  Value both_zero = logical_and(b, compare_to(b, Cmp::EQ, ac, 0.0), compare_to(b, Cmp::EQ, ad, 0.0));
  re1 = b.select(both_zero, b.div(a, ac), re1);
  im1 = b.select(both_zero, b.div(bi, ad), im1);
  // |c| < |d|: rat = c / d, scl = 1 / (d + c rat), ((a rat + b) scl, (b rat - a) scl).
  Value rat2 = b.div(c, d), scl2 = b.div(one, b.add(d, b.mul(c, rat2)));
  Value re2 = b.mul(b.add(b.mul(a, rat2), bi), scl2), im2 = b.mul(b.sub(b.mul(bi, rat2), a), scl2);
  return make_complex(b, b.select(c_major, re1, re2), b.select(c_major, im1, im2));
}

namespace {

Value reciprocal_c(Builder& b, Value z) { return divide_c10(b, constant_like(b, 1, z), z); }

// log |z| + i arg z where a part is infinite or NaN (C's clog: an infinite
// part gives +inf beside a NaN), XLA's log elsewhere.
Value log_c(Builder& b, Value z) {
  Value re = real_part(b, z), im = imag_part(b, z);
  Value special = logical_or(b, logical_or(b, is_inf_part(b, re), is_inf_part(b, im)), is_nan(b, z));
  Value edge = make_complex(b, b.unary("log", modulus(b, z)), b.binary("atan2", im, re));
  return b.select(special, edge, b.unary("log", z));
}

// C's csqrt at infinite and NaN parts; XLA's sqrt elsewhere.
Value sqrt_c(Builder& b, Value z) {
  Value re = real_part(b, z), im = imag_part(b, z);
  Value inf = constant_like(b, kInf, re), zero = constant_like(b, 0, re), nan = constant_like(b, kNaN, re);
  // The root's imaginary part takes y's sign, -0 included (the branch cut
  // as C's csqrt), where XLA's sqrt of -2 - 0i gives +1.41i.
  Value r = b.unary("sqrt", z);
  r = make_complex(b, real_part(b, r), signed_like(b, b.unary("abs", imag_part(b, r)), im));
  r = b.select(is_nan(b, z), make_complex(b, nan, nan), r);
  Value pos_inf = compare_to(b, Cmp::EQ, re, kInf), neg_inf = compare_to(b, Cmp::EQ, re, -kInf);
  // +inf + iy: (inf, 0 signed like y), or (inf, NaN) for a NaN y.
  r = b.select(pos_inf, make_complex(b, inf, b.select(is_nan(b, im), nan, signed_like(b, zero, im))), r);
  // -inf + iy: (0, inf signed like y), or (NaN, inf) for a NaN y.
  r = b.select(neg_inf, make_complex(b, b.select(is_nan(b, im), nan, zero), signed_like(b, inf, im)), r);
  // x +- i inf: (inf, +-inf) whatever x is, NaN included.
  return b.select(is_inf_part(b, im), make_complex(b, inf, im), r);
}

// i z and -i z, by swapping parts (a complex multiply would make NaNs of
// infinite parts).
Value times_i(Builder& b, Value z) { return make_complex(b, b.unary("negate", imag_part(b, z)), real_part(b, z)); }
Value times_minus_i(Builder& b, Value z) {
  return make_complex(b, imag_part(b, z), b.unary("negate", real_part(b, z)));
}

Value is_finite_part(Builder& b, Value p) { return b.op1(hlo::kIsFinite, {p}, {DType::PRED, p.shape()}); }

// sinh, cosh and tanh of x + iy by their real formulas where a part is
// zero, infinite or NaN, with the fix-ups of C's csinh / ccosh / ctanh
// (C11): a zero part passes through, an infinite x with a non-finite y
// gives (+-inf, NaN) or (+-1, 0); XLA's complex functions elsewhere.
Value hyperbolic_c(Builder& b, Unary op, Value z) {
  Value x = real_part(b, z), y = imag_part(b, z);
  Value zero = constant_like(b, 0, x), nan = constant_like(b, kNaN, x);
  Value x_zero = compare_to(b, Cmp::EQ, x, 0.0), y_zero = compare_to(b, Cmp::EQ, y, 0.0);
  Value x_inf = is_inf_part(b, x), y_finite = is_finite_part(b, y);
  Value special =
      logical_or(b, logical_or(b, x_zero, y_zero), logical_not(b, logical_and(b, is_finite_part(b, x), y_finite)));
  Value sh = b.op1("chlo.sinh", {x}, x.type), ch = b.op1("chlo.cosh", {x}, x.type);
  Value sn = b.unary("sine", y), cs = b.unary("cosine", y);
  Value re, im, xla;
  if (op == Unary::Sinh) {
    re = b.select(x_zero, x, b.mul(sh, cs));
    im = b.select(y_zero, y, b.mul(ch, sn));
    // (+inf, NaN) for either infinite x, as the CPU gives (C leaves the sign open).
    Value inf_x = logical_and(b, x_inf, logical_not(b, y_finite));
    re = b.select(inf_x, b.unary("abs", x), re);
    im = b.select(inf_x, nan, im);
    xla = b.op1("chlo.sinh", {z}, z.type);
  } else if (op == Unary::Cosh) {
    re = b.mul(ch, cs);
    im =
        b.select(logical_or(b, x_zero, y_zero), b.mul(signed_like(b, zero, x), signed_like(b, zero, y)), b.mul(sh, sn));
    Value inf_x = logical_and(b, x_inf, logical_not(b, y_finite));
    re = b.select(inf_x, b.unary("abs", x), re);
    im = b.select(inf_x, nan, im);
    xla = b.op1("chlo.cosh", {z}, z.type);
  } else {  // Tanh
    Value two_x = b.add(x, x), two_y = b.add(y, y);
    Value den = b.add(b.op1("chlo.cosh", {two_x}, x.type), b.unary("cosine", two_y));
    re = b.select(x_zero, x, b.select(y_zero, b.unary("tanh", x), b.div(b.op1("chlo.sinh", {two_x}, x.type), den)));
    im = b.select(y_zero, y, b.select(x_zero, b.unary("tan", y), b.div(b.unary("sine", two_y), den)));
    // x infinite: (sign x, 0 signed like sin 2y) for finite y, (sign x, +-0) otherwise.
    Value one = signed_like(b, constant_like(b, 1, x), x);
    Value zero_im = b.select(y_finite, signed_like(b, zero, b.unary("sine", two_y)), signed_like(b, zero, y));
    re = b.select(x_inf, one, re);
    im = b.select(x_inf, zero_im, im);
    xla = b.unary("tanh", z);
  }
  return b.select(special, make_complex(b, re, im), xla);
}

// z * w as C's complex multiply (C99 Annex G): where the plain formula
// gives NaN in both parts but an operand is infinite, the infinity is
// recovered, so (2.5 + 0i) * (inf + NaN i) is (inf, NaN), not NaN.
Value multiply_c99(Builder& b, Value z, Value w) {
  Value a = real_part(b, z), bi = imag_part(b, z), c = real_part(b, w), d = imag_part(b, w);
  Value ac = b.mul(a, c), bd = b.mul(bi, d), ad = b.mul(a, d), bc = b.mul(bi, c);
  Value x = b.sub(ac, bd), y = b.add(ad, bc);
  Value one = constant_like(b, 1, a), zero = constant_like(b, 0, a);
  // An infinite part becomes +-1, a finite one +-0; NaN parts of the other
  // operand become +-0.
  auto unit = [&](Value p) { return signed_like(b, b.select(is_inf_part(b, p), one, zero), p); };
  auto nan_to_zero = [&](Value p) { return b.select(is_nan(b, p), signed_like(b, zero, p), p); };
  Value z_inf = logical_or(b, is_inf_part(b, a), is_inf_part(b, bi));
  Value w_inf = logical_or(b, is_inf_part(b, c), is_inf_part(b, d));
  Value a2 = b.select(z_inf, unit(a), b.select(w_inf, nan_to_zero(a), a));
  Value b2 = b.select(z_inf, unit(bi), b.select(w_inf, nan_to_zero(bi), bi));
  Value c2 = b.select(w_inf, unit(c), b.select(z_inf, nan_to_zero(c), c));
  Value d2 = b.select(w_inf, unit(d), b.select(z_inf, nan_to_zero(d), d));
  // Neither infinite but a product overflowed: NaN parts become +-0.
  Value overflow = logical_or(b, logical_or(b, is_inf_part(b, ac), is_inf_part(b, bd)),
                              logical_or(b, is_inf_part(b, ad), is_inf_part(b, bc)));
  Value by_overflow = logical_and(b, logical_not(b, logical_or(b, z_inf, w_inf)), overflow);
  a2 = b.select(by_overflow, nan_to_zero(a), a2);
  b2 = b.select(by_overflow, nan_to_zero(bi), b2);
  c2 = b.select(by_overflow, nan_to_zero(c), c2);
  d2 = b.select(by_overflow, nan_to_zero(d), d2);
  Value recalc =
      logical_and(b, logical_and(b, is_nan(b, x), is_nan(b, y)), logical_or(b, logical_or(b, z_inf, w_inf), overflow));
  Value inf = constant_like(b, kInf, a);
  Value rx = b.mul(inf, b.sub(b.mul(a2, c2), b.mul(b2, d2)));
  Value ry = b.mul(inf, b.add(b.mul(a2, d2), b.mul(b2, c2)));
  return make_complex(b, b.select(recalc, rx, x), b.select(recalc, ry, y));
}

// PyTorch's own complex expm1 and log1p formulas (c10/util/complex_math.h),
// which also fix their special values: expm1(inf + 0i) is (inf, NaN).
Value expm1_c(Builder& b, Value z) {
  Value x = real_part(b, z), y = imag_part(b, z);
  Value a = b.unary("sine", b.mul(y, constant_like(b, 0.5, y)));
  Value re = b.sub(b.mul(b.unary("exponential_minus_one", x), b.unary("cosine", y)),
                   b.mul(constant_like(b, 2, a), b.mul(a, a)));
  Value im = b.mul(b.unary("exponential", x), b.unary("sine", y));
  return make_complex(b, re, im);
}

Value log1p_c(Builder& b, Value z) {
  Value x = real_part(b, z), y = imag_part(b, z);
  Value one = constant_like(b, 1, x);
  Value theta = b.binary("atan2", y, b.add(x, one));
  // |z| < 1/2: 0.5 log1p(x (2 + x) + y^2), or x where that underflows to 0.
  Value r = b.add(b.mul(x, b.add(constant_like(b, 2, x), x)), b.mul(y, y));
  Value near = b.select(compare_to(b, Cmp::EQ, r, 0.0), x, b.mul(constant_like(b, 0.5, r), b.unary("log_plus_one", r)));
  // Otherwise log |1 + z|.
  Value far = b.unary("log", modulus(b, make_complex(b, b.add(x, one), y)));
  Value r_part = b.select(compare_to(b, Cmp::LT, modulus(b, z), 0.5), near, far);
  // A NaN part makes both NaN, as the CPU's vectorized kernel gives.
  Value nan = constant_like(b, kNaN, x);
  Value any_nan = is_nan(b, z);
  return make_complex(b, b.select(any_nan, nan, r_part), b.select(any_nan, nan, theta));
}

// The inverse hyperbolic and trigonometric functions at infinite, NaN and
// both-zero parts, with the values of the C library the CPU's kernels call
// (glibc's casinh / cacosh / catanh / catan, and casin z = -i casinh(iz),
// cacos z = pi/2 - casin z); XLA's functions elsewhere.
struct Parts {
  Value x, y;            // the parts
  Value x_nan;           // NaN
  Value x_inf, y_inf;    // infinite
  Value x_fin, y_fin;    // finite
  Value x_zero, y_zero;  // +-0
  Value special;         // a part infinite or NaN
  Value zeros;           // both parts +-0
};

Parts parts_of(Builder& b, Value z) {
  Parts p;
  p.x = real_part(b, z);
  p.y = imag_part(b, z);
  p.x_nan = is_nan(b, p.x);
  p.x_inf = is_inf_part(b, p.x);
  p.y_inf = is_inf_part(b, p.y);
  p.x_fin = is_finite_part(b, p.x);
  p.y_fin = is_finite_part(b, p.y);
  p.x_zero = compare_to(b, Cmp::EQ, p.x, 0.0);
  p.y_zero = compare_to(b, Cmp::EQ, p.y, 0.0);
  p.special = logical_not(b, logical_and(b, p.x_fin, p.y_fin));
  p.zeros = logical_and(b, p.x_zero, p.y_zero);
  return p;
}

Value inverse_c(Builder& b, Unary op, Value z) {
  Parts p = parts_of(b, z);
  Value zero = constant_like(b, 0, p.x), nan = constant_like(b, kNaN, p.x), inf = constant_like(b, kInf, p.x);
  auto k = [&](double v) { return constant_like(b, v, p.x); };
  auto sel = [&](Value c, Value t, Value f) { return b.select(c, t, f); };
  Value re, im, xla;
  switch (op) {
    case Unary::Asinh: {
      // y infinite: (inf signed like x, NaN for a NaN x, else pi/2 or pi/4 signed like y).
      Value re_yinf = signed_like(b, inf, p.x);
      Value im_yinf = sel(p.x_nan, nan, signed_like(b, sel(p.x_fin, k(kPi / 2), k(kPi / 4)), p.y));
      // x infinite or NaN: (x, 0 signed like y where x is infinite beside a
      // finite y or NaN beside a zero y, else NaN).
      Value zero_im = logical_or(b, logical_and(b, p.x_inf, p.y_fin), logical_and(b, p.x_nan, p.y_zero));
      Value im_x = sel(zero_im, signed_like(b, zero, p.y), nan);
      re = sel(p.y_inf, re_yinf, sel(p.x_fin, nan, p.x));
      im = sel(p.y_inf, im_yinf, sel(p.x_fin, nan, im_x));
      xla = b.op1("chlo.asinh", {z}, z.type);
      break;
    }
    case Unary::Acosh: {
      Value x_neg = signbit_(b, p.x);
      Value im_yinf =
          sel(p.x_nan, nan, signed_like(b, sel(p.x_inf, sel(x_neg, k(3 * kPi / 4), k(kPi / 4)), k(kPi / 2)), p.y));
      Value im_xinf = sel(p.y_fin, signed_like(b, sel(x_neg, k(kPi), zero), p.y), nan);
      Value im_rest = sel(p.x_zero, k(kPi / 2), nan);  // a finite x beside a NaN y, or a NaN x
      Value re_special = sel(logical_or(b, p.y_inf, p.x_inf), inf, nan);
      Value im_special = sel(p.y_inf, im_yinf, sel(p.x_inf, im_xinf, im_rest));
      // Both zero: (0, pi/2 signed like y).
      re = sel(p.zeros, zero, re_special);
      im = sel(p.zeros, signed_like(b, k(kPi / 2), p.y), im_special);
      xla = b.op1("chlo.acosh", {z}, z.type);
      break;
    }
    case Unary::Atanh: {
      Value re_special = sel(logical_or(b, p.y_inf, logical_or(b, p.x_inf, p.x_zero)), signed_like(b, zero, p.x), nan);
      Value im_x = sel(p.y_fin, signed_like(b, k(kPi / 2), p.y), nan);
      Value im_special =
          sel(p.y_inf, signed_like(b, k(kPi / 2), p.y), sel(logical_or(b, p.x_inf, p.x_zero), im_x, nan));
      re = sel(p.zeros, p.x, re_special);
      im = sel(p.zeros, p.y, im_special);
      xla = b.op1("chlo.atanh", {z}, z.type);
      break;
    }
    case Unary::Atan: {
      Value re_special = sel(p.x_inf, signed_like(b, k(kPi / 2), p.x),
                             sel(p.y_inf, sel(p.x_fin, signed_like(b, k(kPi / 2), p.x), nan), nan));
      Value im_special = sel(logical_or(b, logical_or(b, p.x_inf, p.y_inf), p.y_zero), signed_like(b, zero, p.y), nan);
      re = sel(p.zeros, p.x, re_special);
      im = sel(p.zeros, p.y, im_special);
      // XLA has no complex atan: -i atanh(iz).
      xla = times_minus_i(b, b.op1("chlo.atanh", {times_i(b, z)}, z.type));
      break;
    }
    default:
      throw std::logic_error(std::string("inverse_c: ") + name(op));
  }
  // The symmetries fix the signs of XLA's results on the branch cuts, where
  // a -0 part selects the side: each of these is conjugate-symmetric, and
  // all but acosh are odd (acosh's real part is never negative).
  Value xr = real_part(b, xla), xi = imag_part(b, xla);
  xi = signed_like(b, b.unary("abs", xi), p.y);
  if (op != Unary::Acosh) xr = signed_like(b, b.unary("abs", xr), p.x);
  if (op == Unary::Asinh) {  // casinh(+-0 + +-0i) is z itself
    re = sel(p.zeros, p.x, re);
    im = sel(p.zeros, p.y, im);
  }
  Value edge = logical_or(b, p.special, p.zeros);
  return b.select(edge, make_complex(b, re, im), make_complex(b, xr, xi));
}

// casin z = -i casinh(iz), z itself where both parts are NaN.
Value asin_c(Builder& b, Value z) {
  Value r = times_minus_i(b, inverse_c(b, Unary::Asinh, times_i(b, z)));
  Value both_nan = logical_and(b, is_nan(b, real_part(b, z)), is_nan(b, imag_part(b, z)));
  return b.select(both_nan, z, r);
}

// cacos z = pi/2 - casin z (a zero real part +0) where a part is infinite,
// NaN or both are zero; XLA's acos elsewhere.
Value acos_c(Builder& b, Value z) {
  Parts p = parts_of(b, z);
  Value s = asin_c(b, z);
  Value re = b.sub(constant_like(b, kPi / 2, p.x), real_part(b, s));
  re = b.select(compare_to(b, Cmp::EQ, re, 0.0), constant_like(b, 0, re), re);
  Value edge = make_complex(b, re, b.unary("negate", imag_part(b, s)));
  // Conjugate-symmetric: the imaginary part's sign is the opposite of y's.
  Value a = b.op1("chlo.acos", {z}, z.type);
  Value ai = signed_like(b, b.unary("abs", imag_part(b, a)), b.unary("negate", p.y));
  return b.select(logical_or(b, p.special, p.zeros), edge, make_complex(b, real_part(b, a), ai));
}

bool has_complex_math(Unary op) {
  switch (op) {
    case Unary::Asinh:
    case Unary::Acosh:
    case Unary::Atanh:
    case Unary::Atan:
    case Unary::Asin:
    case Unary::Acos:
    case Unary::Expm1:
    case Unary::Log1p:
    case Unary::Sinh:
    case Unary::Cosh:
    case Unary::Tanh:
    case Unary::Sin:
    case Unary::Cos:
    case Unary::Tan:
    case Unary::Exp2:
    case Unary::Log:
    case Unary::Log2:
    case Unary::Log10:
    case Unary::Reciprocal:
    case Unary::Rsqrt:
    case Unary::Sigmoid:
    case Unary::Sqrt:
      return true;
    default:
      return false;
  }
}

Value complex_math(Builder& b, Unary op, Value z) {
  switch (op) {
    case Unary::Asinh:
    case Unary::Acosh:
    case Unary::Atanh:
    case Unary::Atan:
      return inverse_c(b, op, z);
    case Unary::Asin:
      return asin_c(b, z);
    case Unary::Acos:
      return acos_c(b, z);
    case Unary::Expm1:
      return expm1_c(b, z);
    case Unary::Log1p:
      return log1p_c(b, z);
    case Unary::Sinh:
    case Unary::Cosh:
    case Unary::Tanh:
      return hyperbolic_c(b, op, z);
    // sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz), as C defines them.
    case Unary::Sin: {
      Value r = times_minus_i(b, hyperbolic_c(b, Unary::Sinh, times_i(b, z)));
      // An infinite y beside a non-finite x: (NaN, +inf), as the CPU gives.
      Value x = real_part(b, z), y = imag_part(b, z);
      Value edge = logical_and(b, is_inf_part(b, y), logical_not(b, is_finite_part(b, x)));
      return b.select(edge, make_complex(b, constant_like(b, kNaN, x), constant_like(b, kInf, x)), r);
    }
    case Unary::Cos:
      return hyperbolic_c(b, Unary::Cosh, times_i(b, z));
    case Unary::Tan:
      return times_minus_i(b, hyperbolic_c(b, Unary::Tanh, times_i(b, z)));
    case Unary::Exp2:
      return exponential(b, scale_parts(b, z, kLn2));
    case Unary::Log:
      return log_c(b, z);
    case Unary::Log2:
      return scale_parts(b, log_c(b, z), 1 / kLn2);
    case Unary::Log10:
      return scale_parts(b, log_c(b, z), 1 / kLn10);
    case Unary::Reciprocal:
      return reciprocal_c(b, z);
    case Unary::Rsqrt:
      return reciprocal_c(b, sqrt_c(b, z));
    case Unary::Sigmoid:
      return reciprocal_c(b, b.add(constant_like(b, 1, z), exponential(b, b.unary("negate", z))));
    case Unary::Sqrt:
      return sqrt_c(b, z);
    default:
      throw std::logic_error(std::string("ops::unary: no complex form: ") + name(op));
  }
}

// log(e^x + e^y) of complex values as PyTorch's kernels (logaddexp and
// logcumsumexp) compute it: the operand with the smaller real part is
// taken from the larger (ties: y is the smaller), NaN in either part of
// either is NaN, and equal infinite real parts give the smaller operand
// (-inf) or the plain sum of exponentials (+inf).
Value log_add_exp_complex(Builder& b, Value x, Value y) {
  Value x_lo = b.compare(Cmp::LT, real_part(b, x), real_part(b, y));
  Value lo = b.select(x_lo, x, y), hi = b.select(x_lo, y, x);
  Value lo_re = real_part(b, lo), hi_re = real_part(b, hi);
  Value r = b.add(b.unary("log_plus_one", exponential(b, b.sub(lo, hi))), hi);
  Value plus = log_c(b, b.add(exponential(b, lo), exponential(b, hi)));
  Value infinite =
      logical_and(b, b.compare(Cmp::EQ, lo_re, hi_re), compare_to(b, Cmp::EQ, b.unary("abs", lo_re), kInf));
  r = b.select(infinite, b.select(compare_to(b, Cmp::LT, lo_re, 0.0), lo, plus), r);
  Value nan = constant_like(b, kNaN, lo_re);
  return b.select(logical_or(b, is_nan(b, x), is_nan(b, y)), make_complex(b, nan, nan), r);
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
      if (shlo::is_complex(t)) {  // sgn: each part over the real |z|, 0 at 0
        Value mag = unary(b, Unary::Abs, x);
        Value zero = b.constant(mag.dtype(), 0, mag.shape());
        Value unit = make_complex(b, b.div(real_part(b, x), mag), b.div(imag_part(b, x), mag));
        return b.select(b.compare(Cmp::EQ, mag, zero), b.constant(t, 0, x.shape()), unit);
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
      if (shlo::is_complex(t) && has_complex_math(op)) return complex_math(b, op, x);
      return from_opmath(b, math(b, op, to_opmath(b, x)), t);
  }
}

namespace {

// x^e for a non-negative integer e, wrapping as C's integers do: one
// square-and-multiply step per bit of e's dtype. XLA's integer power is
// not used: XLA:CPU's emitters reduce large exponents (2^65 came out 2).
Value int_power(Builder& b, Value x, Value e) {
  const int64_t bits = static_cast<int64_t>(shlo::dtype_size(e.dtype())) * 8;
  Value acc = constant_like(b, 1, x), base = x;
  for (int64_t i = 0; i < bits; ++i) {
    Value bit = b.binary("and", b.binary("shift_right_logical", e, constant_like(b, static_cast<double>(i), e)),
                         constant_like(b, 1, e));
    acc = b.select(compare_to(b, Cmp::NE, bit, 0.0), b.mul(acc, base), acc);
    if (i + 1 < bits) base = b.mul(base, base);
  }
  return acc;
}

}  // namespace

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
      if (shlo::is_complex(t)) return exponential(b, multiply_c99(b, y, log_c(b, x)));
      if (fl) return from_opmath(b, b.binary("power", to_opmath(b, x), to_opmath(b, y)), t);
      if (t == DType::PRED) return b.binary("power", x, y);
      if (shlo::is_unsigned_int(t)) return int_power(b, x, y);
      {
        // A negative exponent is written out: XLA's emitters disagree on
        // it (XLA:CPU's classic one gives 0 for a base of -1).
        Value one = constant_like(b, 1, x), zero = constant_like(b, 0, x);
        Value odd = compare_to(b, Cmp::NE, b.binary("remainder", y, constant_like(b, 2, y)), 0.0);
        Value minus_one = b.select(odd, constant_like(b, -1, x), one);
        Value negative =
            b.select(compare_to(b, Cmp::EQ, x, 1.0), one, b.select(compare_to(b, Cmp::EQ, x, -1.0), minus_one, zero));
        return b.select(compare_to(b, Cmp::LT, y, 0.0), negative, int_power(b, x, b.max(y, zero)));
      }
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
    case Binary::Copysign:
      return signed_like(b, b.unary("abs", x), y);
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
        r = log_add_exp_complex(b, xu, yu);
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
  else if (shlo::is_complex(t) && (e == 0.5 || e == -0.5 || e == -1.0 || e == -2.0))
    // Roots and reciprocals of complex values with C's special values, as
    // the CPU's kernels dispatch these exponents to sqrt / rsqrt / reciprocal.
    r = e == 0.5    ? complex_math(b, Unary::Sqrt, u)
        : e == -0.5 ? complex_math(b, Unary::Rsqrt, u)
        : e == -1.0 ? complex_math(b, Unary::Reciprocal, u)
                    : complex_math(b, Unary::Reciprocal, b.mul(u, u));
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
