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

// ---------------------------------------------------------------- reductions

Value nansum(Builder& b, Value x, const std::vector<int64_t>& dims, bool keepdim, DType out) {
  if (shlo::is_float(x.dtype())) x = b.select(is_nan(b, x), kconst(b, 0, x), x);
  return reduce(b, x, Reduce::Sum, dims, keepdim, out);
}

Value all_equal(Builder& b, Value x, Value y) {
  Value eq = b.compare(Cmp::EQ, x, y);
  return b.reduce(eq, b.constant(DType::PRED, 1), all_dims(eq.rank()), "and");
}

Value trace(Builder& b, Value x, DType out) {
  Type it{DType::S64, x.shape()};
  Value diag = b.compare(Cmp::EQ, b.iota(it, 0), b.iota(it, 1));
  return reduce(b, b.select(diag, x, kconst(b, 0, x)), Reduce::Sum, {0, 1}, false, out);
}

std::pair<Value, Value> cum_extreme(Builder& b, Value x, int64_t dim, bool is_max) {
  Shape orig = x.shape();
  if (x.rank() == 0) x = b.reshape(x, {1});
  Shape shape = x.shape();
  int64_t n = shape[dim], rank = x.rank();
  Value v = x, idx = b.iota(Type{DType::S64, shape}, dim);
  bool fl = shlo::is_float(x.dtype());
  Value pad_v = is_max ? b.lowest(x.dtype()) : b.highest(x.dtype()), pad_i = b.constant(DType::S64, -1);
  // Hillis-Steele over (value, index) pairs; the later element wins ties
  // and NaN, which makes the combine associative.
  for (int64_t k = 1; k < n; k *= 2) {
    Shape start(rank, 0), limit(shape), strides(rank, 1), lo(rank, 0), hi(rank, 0), interior(rank, 0);
    limit[dim] = n - k;
    lo[dim] = k;
    Value ev = b.pad(b.slice(v, start, limit, strides), pad_v, lo, hi, interior);
    Value ei = b.pad(b.slice(idx, start, limit, strides), pad_i, lo, hi, interior);
    Value later = b.compare(is_max ? Cmp::GE : Cmp::LE, v, ev);
    if (fl) later = lor(b, is_nan(b, v), land(b, lnot(b, is_nan(b, ev)), later));
    v = b.select(later, v, ev);
    idx = b.select(later, idx, ei);
  }
  return {b.reshape(v, orig), b.reshape(idx, orig)};
}

// ---------------------------------------------------------------- index_reduce

Value index_reduce(Builder& b, Value x, int64_t dim, Value idx, Value src, const std::string& reduce,
                   bool include_self) {
  DType t = x.dtype();
  Combine c = reduce == "prod"   ? Combine::Mul
              : reduce == "amax" ? Combine::Max
              : reduce == "amin" ? Combine::Min
                                 : Combine::Add;
  Value base = x;
  if (!include_self) {
    // The indexed slots restart from the reduction's identity.
    Value init = c == Combine::Mul   ? b.constant(t, 1)
                 : c == Combine::Max ? b.lowest(t)
                 : c == Combine::Min ? b.highest(t)
                                     : b.zero(t);
    base = index_scatter(b, x, dim, idx, b.broadcast_in_dim(init, src.shape(), {}), Combine::Replace, false);
  }
  Value r = index_scatter(b, base, dim, idx, src, c, false);
  if (reduce != "mean") return r;
  Value cnt = index_scatter(b, b.constant(t, include_self ? 1 : 0, x.shape()), dim, idx, b.constant(t, 1, src.shape()),
                            Combine::Add, false);
  cnt = b.select(b.compare(Cmp::EQ, cnt, kconst(b, 0, cnt)), kconst(b, 1, cnt), cnt);
  return shlo::is_float(t) ? b.div(r, cnt) : div(b, r, cnt, "floor");
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

// ---------------------------------------------------------------- vectors

Value renorm(Builder& b, Value x, Value p, int64_t dim, Value maxnorm, int p_kind) {
  DType t = x.dtype(), acc = acc_type(t);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (d != dim) dims.push_back(d);
  static const NormOrd kinds[] = {NormOrd::General, NormOrd::Zero, NormOrd::One,
                                  NormOrd::Two,     NormOrd::Inf,  NormOrd::NegInf};
  Value norm = vector_norm(b, x, kinds[p_kind], p, dims, true, acc);
  Value mx = b.broadcast_in_dim(b.convert(maxnorm, acc), norm.shape(), {});
  Value factor =
      b.select(b.compare(Cmp::GT, norm, mx), b.div(mx, b.add(norm, kconst(b, 1e-7, norm))), kconst(b, 1, norm));
  // PyTorch keeps the factor in x's dtype before multiplying.
  factor = up(b, b.convert(factor, t));
  Value r = b.mul(up(b, x), b.broadcast_in_dim(b.reshape(factor, {x.shape()[dim]}), up(b, x).shape(), {dim}));
  return down(b, r, t);
}

// ---------------------------------------------------------------- searching and counting

Value search_sorted(Builder& b, Value boundaries, Value values, bool right, DType out) {
  int64_t r = values.rank(), m = boundaries.shape().back();
  Shape cs = values.shape();
  cs.push_back(m);
  Value v = b.broadcast_in_dim(values, cs, all_dims(r));
  std::vector<int64_t> bdims;
  if (boundaries.rank() == 1) {
    bdims = {r};
  } else {  // leading dims shared with values; skip values' last dim
    for (int64_t d = 0; d + 1 < r; ++d) bdims.push_back(d);
    bdims.push_back(r);
  }
  Value bd = b.broadcast_in_dim(boundaries, cs, bdims);
  Value before = lnot(b, b.compare(right ? Cmp::GT : Cmp::GE, bd, v));
  return b.reduce(b.convert(before, out), b.zero(out), {r}, "add");
}

Value bincount(Builder& b, Value x, std::optional<Value> weights, int64_t length, DType out) {
  int64_t n = shlo::numel(x.shape());
  Value xi = b.convert(b.reshape(x, {n}), DType::S64);
  Value onehot = b.compare(Cmp::EQ, b.broadcast_in_dim(xi, {n, length}, {0}), b.iota(Type{DType::S64, {n, length}}, 1));
  Value contrib;
  if (weights) {
    Value w = b.broadcast_in_dim(b.convert(b.reshape(*weights, {n}), out), {n, length}, {0});
    contrib = b.select(onehot, w, b.constant(out, 0, {n, length}));
  } else {
    contrib = b.convert(onehot, out);
  }
  return b.reduce(contrib, b.zero(out), {0}, "add");
}

// ---------------------------------------------------------------- losses

namespace {

Value reduce_loss(Builder& b, Value l, int64_t reduction, DType t) {
  l = down(b, l, t);
  if (reduction == 0) return l;
  if (reduction == 1) return mean(b, l, all_dims(l.rank()), false, t);
  return reduce(b, l, Reduce::Sum, all_dims(l.rank()), false, t);
}

// 1 / numel for a mean reduction, else 1 (the backward's scale).
double loss_norm(const Value& x, int64_t reduction) {
  return reduction == 1 ? 1.0 / static_cast<double>(std::max<int64_t>(shlo::numel(x.shape()), 1)) : 1.0;
}

}  // namespace

Value robust_loss(Builder& b, Value x, Value y, int kind, double param, int64_t reduction) {
  DType t = x.dtype();
  Value xf = up(b, x), yf = up(b, y);
  Value z = b.unary("abs", b.sub(xf, yf));
  Value pr = kconst(b, param, z), half = kconst(b, 0.5, z);
  Value small = kind == 0 ? b.mul(b.mul(half, z), z) : b.div(b.mul(b.mul(half, z), z), pr);
  Value large = kind == 0 ? b.mul(pr, b.sub(z, b.mul(half, pr))) : b.sub(z, b.mul(half, pr));
  Value l = b.select(b.compare(Cmp::LT, z, pr), small, large);
  return reduce_loss(b, l, reduction, t);
}

Value robust_loss_backward(Builder& b, Value grad, Value x, Value y, int kind, double param, int64_t reduction) {
  DType t = x.dtype();
  Value xf = up(b, x), yf = up(b, y);
  Value g = b.broadcast_to(up(b, grad), xf.shape());
  Value d = b.sub(xf, yf);
  Value nm = kconst(b, loss_norm(x, reduction), d), pr = kconst(b, param, d);
  Value edge = kind == 0 ? b.mul(b.mul(nm, g), pr) : b.mul(nm, g);
  Value mid = kind == 0 ? b.mul(b.mul(nm, d), g) : b.div(b.mul(b.mul(nm, d), g), pr);
  Value r = b.select(b.compare(Cmp::LE, d, b.unary("negate", pr)), b.unary("negate", edge),
                     b.select(b.compare(Cmp::GE, d, pr), edge, mid));
  return down(b, r, t);
}

Value binary_cross_entropy(Builder& b, Value x, Value y, std::optional<Value> w, int64_t reduction) {
  DType t = x.dtype();
  Value xf = up(b, x), yf = up(b, y);
  Value floor = kconst(b, -100, xf), one = kconst(b, 1, xf);
  Value log_x = b.max(b.unary("log", xf), floor);
  Value log_1mx = b.max(b.unary("log_plus_one", b.unary("negate", xf)), floor);
  Value l = b.sub(b.mul(b.sub(yf, one), log_1mx), b.mul(yf, log_x));
  if (w) l = b.mul(l, up(b, b.broadcast_to(*w, x.shape())));
  return reduce_loss(b, l, reduction, t);
}

Value binary_cross_entropy_backward(Builder& b, Value grad, Value x, Value y, std::optional<Value> w,
                                    int64_t reduction) {
  DType t = x.dtype();
  Value xf = up(b, x), yf = up(b, y);
  Value g = b.broadcast_to(up(b, grad), xf.shape());
  Value one = kconst(b, 1, xf);
  Value denom = b.max(b.mul(b.sub(one, xf), xf), kconst(b, 1e-12, xf));
  Value r = b.div(b.mul(g, b.sub(xf, yf)), denom);
  if (w) r = b.mul(r, up(b, b.broadcast_to(*w, x.shape())));
  r = b.mul(r, kconst(b, loss_norm(x, reduction), r));
  return down(b, r, t);
}

}  // namespace ops
