// Lowerings of the coverage branch (see coverage.h).
#include "ops/coverage.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ops/elementwise/elementwise.h"
#include "ops/indexing/indexing.h"
#include "ops/reduction/reduction.h"

namespace ops {

using shlo::Cmp;
using shlo::DType;
using shlo::Shape;
using shlo::Type;

namespace {

DType real_of(DType t) { return t == DType::C128 ? DType::F64 : DType::F32; }

}  // namespace

Value conj(Builder& b, Value x) {
  if (!shlo::is_complex(x.dtype())) return x;
  Type part{real_of(x.dtype()), x.shape()};
  Value re = b.op1("stablehlo.real", {x}, part), im = b.op1("stablehlo.imag", {x}, part);
  return b.op1("stablehlo.complex", {re, b.unary("negate", im)}, x.type);
}

// ---------------------------------------------------------------- helpers

namespace {

Value kconst(Builder& b, double v, const Value& like) { return b.constant(like.dtype(), v, like.shape()); }
Value is_nan(Builder& b, Value x) { return b.compare(Cmp::NE, x, x); }
Value lnot(Builder& b, Value p) { return b.op1("stablehlo.not", {p}, p.type); }
Value land(Builder& b, Value x, Value y) { return b.op1("stablehlo.and", {x, y}, x.type); }
Value lor(Builder& b, Value x, Value y) { return b.op1("stablehlo.or", {x, y}, x.type); }
bool is_half(DType t) { return t == DType::F16 || t == DType::BF16; }
// Half-precision math runs in f32 and rounds once at the end (PyTorch's opmath).
Value up(Builder& b, Value x) { return is_half(x.dtype()) ? b.convert(x, DType::F32) : x; }
Value down(Builder& b, Value x, DType t) { return x.dtype() != t ? b.convert(x, t) : x; }
Value sigmoid(Builder& b, Value x) {
  Value one = kconst(b, 1, x);
  return b.div(one, b.add(one, b.unary("exponential", b.unary("negate", x))));
}
// The half of x along dim starting at `start` (0 or n/2).
Value half_of(Builder& b, Value x, int64_t dim, bool second) {
  Shape lo(x.rank(), 0), hi = x.shape();
  int64_t h = x.shape()[dim] / 2;
  lo[dim] = second ? h : 0;
  hi[dim] = second ? 2 * h : h;
  return b.slice(x, lo, hi, Shape(x.rank(), 1));
}
std::vector<int64_t> all_dims(int64_t rank) {
  std::vector<int64_t> d(rank);
  std::iota(d.begin(), d.end(), 0);
  return d;
}
// Integer type of the same width as float dtype t.
DType bits_type(DType t) {
  switch (t) {
    case DType::F64:
      return DType::S64;
    case DType::F32:
      return DType::S32;
    default:
      return DType::S16;
  }
}
int64_t bit_width(DType t) { return static_cast<int64_t>(shlo::dtype_size(t)) * 8; }

}  // namespace

// ---------------------------------------------------------------- special functions

namespace {

// PyTorch's CPU trigamma: reflection below 1/2, six recurrence steps, then
// the asymptotic series.
Value trigamma(Builder& b, Value x) {
  double pi = 3.14159265358979323846;
  Value one = kconst(b, 1, x);
  Value low = b.compare(Cmp::LT, x, kconst(b, 0.5, x));
  Value s = b.unary("sine", b.mul(kconst(b, pi, x), x));
  Value result = b.select(low, b.unary("negate", b.div(kconst(b, pi * pi, x), b.mul(s, s))), kconst(b, 0, x));
  Value sign = b.select(low, kconst(b, -1, x), one);
  Value z = b.select(low, b.sub(one, x), x);
  for (int i = 0; i < 6; ++i) {
    result = b.add(result, b.div(one, b.mul(z, z)));
    z = b.add(z, one);
  }
  Value ixx = b.div(one, b.mul(z, z));
  Value series = b.sub(kconst(b, 1.0 / 30, x), b.mul(ixx, kconst(b, 1.0 / 42, x)));
  series = b.sub(kconst(b, 1.0 / 6, x), b.mul(ixx, series));
  series = b.add(b.add(one, b.div(one, b.mul(kconst(b, 2, x), z))), b.mul(ixx, series));
  result = b.add(result, b.div(series, z));
  return b.mul(sign, result);
}

}  // namespace

Value polygamma_cpu(Builder& b, Value n, Value x) {
  DType t = x.dtype();
  x = up(b, x);
  Value nn = b.broadcast_in_dim(b.convert(n, x.dtype()), x.shape(), {});
  Value one = kconst(b, 1, x), zero = kconst(b, 0, x);
  Value whole = b.compare(Cmp::EQ, x, b.unary("floor", x));
  Value neg = b.compare(Cmp::LT, x, zero);
  Value shift = land(b, neg, lnot(b, whole));
  // zeta(n+1, x) = sum_{k<m} (x+k)^-(n+1) + zeta(n+1, x+m), stepping until x+m >= 1.
  Type ty = x.type;
  Type it{DType::S32, {}};
  Value start = b.select(shift, x, one);
  std::string cond = b.region({ty, ty, ty, Type{DType::S32, {}}}, [&](Builder& r, const std::vector<Value>& s) {
    Value below = r.compare(Cmp::LT, s[0], kconst(r, 1, s[0]));
    Value any = r.reduce(below, r.constant(DType::PRED, 0), all_dims(below.rank()), "or");
    Value more = r.compare(Cmp::LT, s[3], r.constant(DType::S32, 100000));  // huge |x|: stop
    return std::vector<Value>{land(r, any, more)};
  });
  std::string body = b.region({ty, ty, ty, Type{DType::S32, {}}}, [&](Builder& r, const std::vector<Value>& s) {
    Value below = r.compare(Cmp::LT, s[0], kconst(r, 1, s[0]));
    Value term = r.op1("stablehlo.power", {s[0], r.unary("negate", r.add(s[2], kconst(r, 1, s[2])))}, s[0].type);
    Value acc = r.select(below, r.add(s[1], term), s[1]);
    Value xs = r.select(below, r.add(s[0], kconst(r, 1, s[0])), s[0]);
    return std::vector<Value>{xs, acc, s[2], r.add(s[3], r.constant(DType::S32, 1))};
  });
  std::vector<Value> loop =
      b.op("stablehlo.while", {start, zero, nn, b.constant(DType::S32, 0)}, {ty, ty, ty, it}, "", {cond, body});
  Value general = b.op1("chlo.polygamma", {nn, b.select(shift, loop[0], x)}, ty);
  // (-1)^(n+1) n!
  Value odd = b.compare(Cmp::NE, b.op1("stablehlo.remainder", {nn, kconst(b, 2, nn)}, ty), zero);
  Value fact = b.unary("exponential", b.op1("chlo.lgamma", {b.add(nn, one)}, ty));
  Value signed_fact = b.select(odd, fact, b.unary("negate", fact));
  Value shifted = b.add(general, b.mul(signed_fact, loop[1]));
  Value inf = kconst(b, std::numeric_limits<double>::infinity(), x);
  Value pole = b.select(odd, inf, b.unary("negate", inf));
  Value r = b.select(shift, shifted, b.select(land(b, whole, b.compare(Cmp::LE, x, zero)), pole, general));
  r = b.select(b.compare(Cmp::EQ, nn, one), trigamma(b, x), r);
  return down(b, r, t);
}

// ---------------------------------------------------------------- activations

Value glu(Builder& b, Value x, int64_t dim) {
  DType t = x.dtype();
  Value a = up(b, half_of(b, x, dim, false)), g = up(b, half_of(b, x, dim, true));
  return down(b, b.mul(a, sigmoid(b, g)), t);
}

Value glu_backward(Builder& b, Value grad, Value x, int64_t dim) {
  DType t = x.dtype();
  Value a = up(b, half_of(b, x, dim, false)), g = up(b, half_of(b, x, dim, true)), gr = up(b, grad);
  Value sig = sigmoid(b, g);
  Value ga = b.mul(gr, sig);
  Value gg = b.mul(b.mul(b.mul(b.sub(kconst(b, 1, sig), sig), sig), a), gr);
  return b.concatenate({down(b, ga, t), down(b, gg, t)}, dim);
}

// ---------------------------------------------------------------- integer and bit math

Value gcd(Builder& b, Value x, Value y) {
  Value a = unary(b, Unary::Abs, x), c = unary(b, Unary::Abs, y);
  Type t = x.type;
  Type scalar{t.dtype, {}};
  // Euclid, elementwise: while any a != 0: (a, c) = (c % a, a) where a != 0.
  std::string cond = b.region({t, t}, [&](Builder& r, const std::vector<Value>& s) {
    Value nz = r.compare(Cmp::NE, s[0], kconst(r, 0, s[0]));
    return std::vector<Value>{r.reduce(nz, r.constant(DType::PRED, 0), all_dims(nz.rank()), "or")};
  });
  std::string body = b.region({t, t}, [&](Builder& r, const std::vector<Value>& s) {
    Value zero = kconst(r, 0, s[0]);
    Value nz = r.compare(Cmp::NE, s[0], zero);
    Value safe = r.select(nz, s[0], kconst(r, 1, s[0]));
    Value rem = r.op1("stablehlo.remainder", {s[1], safe}, t);
    return std::vector<Value>{r.select(nz, rem, zero), r.select(nz, s[0], s[1])};
  });
  (void)scalar;
  return b.op("stablehlo.while", {a, c}, {t, t}, "", {cond, body})[1];
}

Value lcm(Builder& b, Value x, Value y) {
  Value g = gcd(b, x, y);
  Value zero = kconst(b, 0, g);
  Value is0 = b.compare(Cmp::EQ, g, zero);
  Value q = b.div(x, b.select(is0, kconst(b, 1, g), g));
  return b.select(is0, zero, unary(b, Unary::Abs, b.mul(q, y)));
}

Value shift_left(Builder& b, Value x, Value y) {
  int64_t bits = bit_width(x.dtype());
  Value bad = b.compare(Cmp::GE, y, kconst(b, static_cast<double>(bits), y));
  if (shlo::is_signed_int(y.dtype()))
    bad = lor(b, bad, b.compare(Cmp::LT, y, kconst(b, 0, y)));
  else if (shlo::is_unsigned_int(y.dtype()) && bits < 64)  // a "negative" amount read as signed
    bad = lor(b, bad, b.compare(Cmp::GE, y, kconst(b, std::ldexp(1.0, static_cast<int>(bits) - 1), y)));
  Value r = b.binary("shift_left", x, y);
  return b.select(bad, kconst(b, 0, x), r);
}

Value shift_right(Builder& b, Value x, Value y) {
  bool sign = shlo::is_signed_int(x.dtype());
  int64_t bits = bit_width(x.dtype()), max_shift = bits - (sign ? 1 : 0);
  const char* opname = sign ? "shift_right_arithmetic" : "shift_right_logical";
  Value bad = b.compare(Cmp::GE, y, kconst(b, static_cast<double>(max_shift), y));
  if (sign) bad = lor(b, bad, b.compare(Cmp::LT, y, kconst(b, 0, y)));
  Value r = b.binary(opname, x, y);
  Value fill = b.binary(opname, x, kconst(b, static_cast<double>(max_shift), x));
  return b.select(bad, fill, r);
}

Value nextafter(Builder& b, Value x, Value y) {
  DType it = bits_type(x.dtype());
  Type ity{it, x.shape()};
  Value bits = b.bitcast_convert(x, ity);
  Value zero = kconst(b, 0, x);
  // Away from zero in magnitude: +1 on the sign-magnitude bits, else -1.
  Value away = b.compare(Cmp::EQ, b.compare(Cmp::GT, y, x), b.compare(Cmp::GT, x, zero));
  Value one = b.constant(it, 1, x.shape());
  Value stepped = b.bitcast_convert(b.select(away, b.add(bits, one), b.sub(bits, one)), x.type);
  // From zero: the smallest subnormal with y's sign.
  Value tiny = b.bitcast_convert(one, x.type);
  Value from_zero = b.select(b.compare(Cmp::LT, y, zero), b.unary("negate", tiny), tiny);
  Value r = b.select(b.compare(Cmp::EQ, x, zero), from_zero, stepped);
  r = b.select(b.compare(Cmp::EQ, x, y), y, r);
  return b.select(lor(b, is_nan(b, x), is_nan(b, y)), b.add(x, y), r);
}

Value xlog1py(Builder& b, Value x, Value y) {
  DType t = x.dtype();
  Value xf = up(b, x), yf = up(b, y);
  Value r = b.mul(xf, b.unary("log_plus_one", yf));
  r = b.select(b.compare(Cmp::EQ, xf, kconst(b, 0, xf)), kconst(b, 0, xf), r);
  r = b.select(is_nan(b, yf), yf, r);
  return down(b, r, t);
}

}  // namespace ops
