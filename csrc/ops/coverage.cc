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
DType complex_of(DType t) { return t == DType::F64 || t == DType::C128 ? DType::C128 : DType::C64; }

// Moves `dims` (in order) to the end; returns the permutation used.
std::vector<int64_t> dims_last(int64_t rank, const std::vector<int64_t>& dims) {
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
  perm.insert(perm.end(), dims.begin(), dims.end());
  return perm;
}

std::vector<int64_t> inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

bool identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

Value transpose_if(Builder& b, Value x, const std::vector<int64_t>& perm) {
  return identity(perm) ? x : b.transpose(x, perm);
}

// One stablehlo.fft over the trailing len(lengths) dims (1 to 3 of them).
Value xla_fft(Builder& b, Value x, const char* kind, const std::vector<int64_t>& lengths, DType out_dtype) {
  Shape out = x.shape();
  std::string k(kind);
  if (k == "RFFT") out.back() = lengths.back() / 2 + 1;
  if (k == "IRFFT") out.back() = lengths.back();
  return b.op1("stablehlo.fft", {x}, Type{out_dtype, out},
               std::string("fft_type = #stablehlo<fft_type ") + kind + ">, fft_length = " + shlo::i64_array(lengths));
}

// Complex FFT / IFFT of x over dims, in groups of at most three (XLA's limit).
Value c2c_raw(Builder& b, Value x, const std::vector<int64_t>& dims, bool forward) {
  for (size_t start = 0; start < dims.size(); start += 3) {
    std::vector<int64_t> group(dims.begin() + start, dims.begin() + std::min(dims.size(), start + 3));
    std::vector<int64_t> perm = dims_last(x.rank(), group);
    Value t = transpose_if(b, x, perm);
    std::vector<int64_t> lengths(t.shape().end() - group.size(), t.shape().end());
    t = xla_fft(b, t, forward ? "FFT" : "IFFT", lengths, x.dtype());
    x = transpose_if(b, t, inverse(perm));
  }
  return x;
}

// Multiplies a complex or real x by a real factor.
Value scale(Builder& b, Value x, double factor) {
  if (factor == 1.0) return x;
  Value f = b.constant(shlo::is_complex(x.dtype()) ? real_of(x.dtype()) : x.dtype(), factor, x.shape());
  if (shlo::is_complex(x.dtype())) f = b.convert(f, x.dtype());
  return b.mul(x, f);
}

// The factor PyTorch's normalization asks for, times n when XLA's inverse
// transform has already divided by n.
double norm_factor(int64_t normalization, double n, bool xla_inverse) {
  double f = normalization == 1 ? 1.0 / std::sqrt(n) : normalization == 2 ? 1.0 / n : 1.0;
  return xla_inverse ? f * n : f;
}

double signal_size(const Shape& shape, const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(shape[d]);
  return n;
}

}  // namespace

Value fft_c2c(Builder& b, Value x, const std::vector<int64_t>& dims, int64_t normalization, bool forward) {
  if (dims.empty() || shlo::numel(x.shape()) == 0) return x;
  Value y = c2c_raw(b, x, dims, forward);
  return scale(b, y, norm_factor(normalization, signal_size(x.shape(), dims), !forward));
}

Value fft_r2c(Builder& b, Value x, const std::vector<int64_t>& dims, int64_t normalization, bool onesided) {
  DType c = complex_of(x.dtype());
  double n = signal_size(x.shape(), dims);
  if (!onesided) return scale(b, c2c_raw(b, b.convert(x, c), dims, true), norm_factor(normalization, n, false));
  // RFFT over the last dim, then complex FFTs over the others.
  int64_t last = dims.back();
  std::vector<int64_t> perm = dims_last(x.rank(), {last});
  Value t = transpose_if(b, x, perm);
  t = xla_fft(b, t, "RFFT", {t.shape().back()}, c);
  Value y = transpose_if(b, t, inverse(perm));
  std::vector<int64_t> rest(dims.begin(), dims.end() - 1);
  if (!rest.empty()) y = c2c_raw(b, y, rest, true);
  return scale(b, y, norm_factor(normalization, n, false));
}

Value fft_c2r(Builder& b, Value x, const std::vector<int64_t>& dims, int64_t normalization, int64_t last_dim_size) {
  std::vector<int64_t> rest(dims.begin(), dims.end() - 1);
  Value y = rest.empty() ? x : c2c_raw(b, x, rest, false);
  int64_t last = dims.back();
  // IRFFT reads last_dim_size / 2 + 1 inputs along the last dim.
  int64_t need = last_dim_size / 2 + 1;
  if (y.shape()[last] != need) {
    Shape lo(y.rank(), 0), hi = y.shape();
    if (hi[last] > need) {
      hi[last] = need;
      y = b.slice(y, lo, hi, Shape(y.rank(), 1));
    } else {
      Shape pad_hi(y.rank(), 0);
      pad_hi[last] = need - y.shape()[last];
      y = b.pad(y, b.zero(y.dtype()), Shape(y.rank(), 0), pad_hi, Shape(y.rank(), 0));
    }
  }
  std::vector<int64_t> perm = dims_last(y.rank(), {last});
  Value t = transpose_if(b, y, perm);
  t = xla_fft(b, t, "IRFFT", {last_dim_size}, real_of(x.dtype()));
  Value r = transpose_if(b, t, inverse(perm));
  Shape out_shape = r.shape();
  return scale(b, r, norm_factor(normalization, signal_size(out_shape, dims), true));
}

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

Value cross(Builder& b, Value x, Value y, int64_t dim) {
  auto part = [&](Value v, int64_t i) {
    Shape lo(v.rank(), 0), hi = v.shape();
    lo[dim] = i;
    hi[dim] = i + 1;
    return b.slice(v, lo, hi, Shape(v.rank(), 1));
  };
  Value x0 = part(x, 0), x1 = part(x, 1), x2 = part(x, 2), y0 = part(y, 0), y1 = part(y, 1), y2 = part(y, 2);
  return b.concatenate(
      {b.sub(b.mul(x1, y2), b.mul(x2, y1)), b.sub(b.mul(x2, y0), b.mul(x0, y2)), b.sub(b.mul(x0, y1), b.mul(x1, y0))},
      dim);
}

}

// ---------------------------------------------------------------- max_unpool

Value max_unpool(Builder& b, Value x, Value idx, const Shape& out_spatial) {
  int64_t rows = x.shape()[0] * x.shape()[1];
  int64_t p = shlo::numel(x.shape()) / std::max<int64_t>(rows, 1), q = shlo::numel(out_spatial);
  Shape out{x.shape()[0], x.shape()[1]};
  out.insert(out.end(), out_spatial.begin(), out_spatial.end());
  if (rows * q == 0) return b.constant(x.dtype(), 0, out);
  Value base = b.constant(x.dtype(), 0, {rows * q});
  if (rows * p == 0) return b.reshape(base, out);
  // Each plane's flat index, offset by its plane: one 1-D scatter.
  Value local = b.convert(b.reshape(idx, {rows, p}), DType::S64);
  Value plane =
      b.mul(b.iota(Type{DType::S64, {rows, p}}, 0), b.constant(DType::S64, static_cast<double>(q), {rows, p}));
  Value global = b.reshape(b.add(local, plane), {rows * p, 1});
  Value r = b.scatter(base, global, b.reshape(x, {rows * p}), {}, {0}, {0}, 1, "");
  return b.reshape(r, out);
}

}  // namespace ops
