// Lowerings of random distributions (see random.h).
#include "ops/random/random.h"

#include <cmath>

#include "ops/common/lowering.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduction/reduction.h"

namespace ops {

namespace {

using shlo::Cmp;
using shlo::Type;

// splitmix64's finalizer: a bijection on 64 bits with full avalanche.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Value shift_right(Builder& b, Value x, int64_t n) {
  return b.op1(hlo::kShiftRightLogical, {x, b.constant(x.dtype(), static_cast<double>(n), x.shape())}, x.type);
}

// Floats of dtype c on the unit interval from raw bits (U32 or U64): the top
// `digits` bits make k, and the value is k * 2^-digits shifted by the
// interval's offset. Exact in c for digits <= its precision.
Value unit_from_bits(Builder& b, Value bits, DType c, int digits, Interval iv) {
  int width = static_cast<int>(shlo::dtype_size(bits.dtype())) * 8;
  // (k + 1/2) needs one more bit than k: draw one bit fewer for open intervals.
  int d = iv == Interval::Open ? digits - 1 : digits;
  Value k = b.convert(shift_right(b, bits, width - d), c);
  double offset = iv == Interval::ClosedOpen ? 0.0 : iv == Interval::OpenClosed ? 1.0 : 0.5;
  if (offset != 0) k = b.add(k, b.constant(c, offset, k.shape()));
  return b.mul(k, b.constant(c, std::ldexp(1.0, -d), k.shape()));
}

DType bits_for(DType c) { return c == DType::F64 ? DType::U64 : DType::U32; }

// A 0-d or broadcastable parameter as c, broadcast to shape.
Value param(Builder& b, Value v, DType c, const Shape& shape) { return b.broadcast_to(b.convert(v, c), shape); }

Shape with_leading(int64_t n, const Shape& s) {
  Shape r{n};
  r.insert(r.end(), s.begin(), s.end());
  return r;
}

// Row i of a [k, shape...] value, as shape.
Value row(Builder& b, Value x, int64_t i, const Shape& shape) {
  Shape start(x.rank(), 0), limit = x.shape(), strides(x.rank(), 1);
  start[0] = i;
  limit[0] = i + 1;
  return b.reshape(b.slice(x, start, limit, strides), shape);
}

// Index of the largest value along `dim` (the first one among equals), S64.
Value argmax(Builder& b, Value x, int64_t dim) { return arg_reduce(b, x, dim, false, true).second; }

}  // namespace

std::array<uint64_t, 2> random_state(uint64_t seed, uint64_t counter) {
  uint64_t a = mix64(mix64(seed + 0x9e3779b97f4a7c15ull) ^ mix64(counter + 0x632be59bd9b4e019ull));
  uint64_t b = mix64(a + 0x9e3779b97f4a7c15ull);
  return {a, b};
}

DType random_compute_dtype(DType out) { return out == DType::F64 ? DType::F64 : DType::F32; }

int random_digits(DType t) {
  switch (t) {
    case DType::F64:
      return 53;
    case DType::F16:
      return 11;
    case DType::BF16:
      return 8;
    default:
      return 24;
  }
}

Value random_bits(Builder& b, Value state, const Shape& shape, DType bits) {
  return b.rng_bit_generator(state, Type{bits, shape}).second;
}

Value unit_uniform(Builder& b, Value state, const Shape& shape, DType c, int digits, Interval iv) {
  return unit_from_bits(b, random_bits(b, state, shape, bits_for(c)), c, digits, iv);
}

Value standard_normal(Builder& b, Value state, const Shape& shape, DType c) {
  // Box-Muller on two uniforms drawn in one go: u1 in (0, 1] keeps log finite.
  Value bits = random_bits(b, state, with_leading(2, shape), bits_for(c));
  int digits = random_digits(c);
  Value u1 = unit_from_bits(b, row(b, bits, 0, shape), c, digits, Interval::OpenClosed);
  Value u2 = unit_from_bits(b, row(b, bits, 1, shape), c, digits, Interval::ClosedOpen);
  Value radius = b.unary("sqrt", b.mul(b.constant(c, -2.0, shape), b.unary("log", u1)));
  Value angle = b.mul(b.constant(c, 2.0 * M_PI, shape), u2);
  return b.mul(radius, b.unary("cosine", angle));
}

Value complex_from_parts(Builder& b, Value parts) {
  Shape shape(parts.shape().begin() + 1, parts.shape().end());
  return make_complex(b, row(b, parts, 0, shape), row(b, parts, 1, shape));
}

Value uniform(Builder& b, Value state, Value from, Value to, const Type& out) {
  DType c = random_compute_dtype(out.dtype);
  Value u = unit_uniform(b, state, out.shape, c, random_digits(out.dtype), Interval::ClosedOpen);
  Value lo = param(b, from, c, out.shape), hi = param(b, to, c, out.shape);
  Value r = convert(b, b.add(b.mul(u, b.sub(hi, lo)), lo), out.dtype);
  // Rounding (of the product, or to a narrower dtype) can reach `to`.
  Value back = b.convert(r, c);
  return b.select(b.compare(Cmp::GE, back, hi), convert(b, lo, out.dtype), r);
}

Value normal(Builder& b, Value state, Value mean, Value std, const Type& out) {
  DType c = random_compute_dtype(out.dtype);
  Value z = standard_normal(b, state, out.shape, c);
  return convert(b, b.add(b.mul(z, param(b, std, c, out.shape)), param(b, mean, c, out.shape)), out.dtype);
}

Value log_normal(Builder& b, Value state, Value mean, Value std, const Type& out) {
  DType c = random_compute_dtype(out.dtype);
  Value z = standard_normal(b, state, out.shape, c);
  Value x = b.add(b.mul(z, param(b, std, c, out.shape)), param(b, mean, c, out.shape));
  return convert(b, b.unary("exponential", x), out.dtype);
}

Value random_int(Builder& b, Value state, Value from, Value range, const Type& out, bool bits64) {
  Value bits = b.convert(random_bits(b, state, out.shape, bits64 ? DType::U64 : DType::U32), DType::U64);
  Value r = b.broadcast_to(b.bitcast_convert(range, Type{DType::U64, {}}), out.shape);
  Value v = b.bitcast_convert(b.binary("remainder", bits, r), Type{DType::S64, out.shape});
  // int64 addition wraps like PyTorch's (val % range) + base.
  return convert(b, b.add(v, param(b, from, DType::S64, out.shape)), out.dtype);
}

Value random_full_range(Builder& b, Value state, const Type& out) {
  Value bits = random_bits(b, state, out.shape, DType::U64);
  if (out.dtype == DType::U64) return bits;
  return convert(b, b.bitcast_convert(bits, Type{DType::S64, out.shape}), out.dtype);
}

Value bernoulli(Builder& b, Value state, Value p, const Type& out) {
  DType c = p.dtype() == DType::F64 ? DType::F64 : DType::F32;
  Value u = unit_uniform(b, state, out.shape, c, random_digits(c), Interval::ClosedOpen);
  return convert(b, b.compare(Cmp::LT, u, param(b, p, c, out.shape)), out.dtype);
}

Value exponential(Builder& b, Value state, Value lambda, const Type& out) {
  DType c = random_compute_dtype(out.dtype);
  Value u = unit_uniform(b, state, out.shape, c, random_digits(c), Interval::Open);
  Value x = b.div(b.unary("negate", b.unary("log", u)), param(b, lambda, c, out.shape));
  Value r = convert(b, x, out.dtype);
  // Exponential samples are positive; keep underflow (a huge lambda, or
  // f16's narrow range) off zero, as CUDA does.
  double tiny = out.dtype == DType::F16   ? std::ldexp(1.0, -14)
                : out.dtype == DType::F64 ? 2.2250738585072014e-308
                                          : 1.1754943508222875e-38;
  Value zero = b.constant(out.dtype, 0, out.shape);
  return b.select(b.compare(Cmp::EQ, r, zero), b.constant(out.dtype, tiny, out.shape), r);
}

Value geometric(Builder& b, Value state, Value p, const Type& out) {
  DType c = random_compute_dtype(out.dtype);
  Value u = unit_uniform(b, state, out.shape, c, random_digits(c), Interval::Open);
  Value q = b.unary("log_plus_one", b.unary("negate", param(b, p, c, out.shape)));
  return convert(b, b.unary("ceil", b.div(b.unary("log", u), q)), out.dtype);
}

Value cauchy(Builder& b, Value state, Value median, Value sigma, const Type& out) {
  DType c = random_compute_dtype(out.dtype);
  // u in (0, 1) keeps the angle strictly inside (-pi/2, pi/2).
  Value u = unit_uniform(b, state, out.shape, c, random_digits(c), Interval::Open);
  Value angle = b.mul(b.constant(c, M_PI, out.shape), b.sub(u, b.constant(c, 0.5, out.shape)));
  Value t = b.div(b.unary("sine", angle), b.unary("cosine", angle));
  Value x = b.add(param(b, median, c, out.shape), b.mul(param(b, sigma, c, out.shape), t));
  return convert(b, x, out.dtype);
}

std::pair<Value, Value> dropout(Builder& b, Value state, Value x, Value p1m, Value scale) {
  DType c = random_compute_dtype(x.dtype());
  Value u = unit_uniform(b, state, x.shape(), c, random_digits(c), Interval::ClosedOpen);
  Value mask = b.compare(Cmp::LT, u, param(b, p1m, c, x.shape()));
  // x * mask * scale, not select(mask, ...): NaN * 0 stays NaN like PyTorch.
  Value y = b.mul(b.mul(convert(b, x, c), b.convert(mask, c)), param(b, scale, c, x.shape()));
  return {convert(b, y, x.dtype()), mask};
}

Value dropout_backward(Builder& b, Value grad, Value mask, Value scale) {
  DType c = random_compute_dtype(grad.dtype());
  Value m = b.broadcast_to(convert(b, mask, c), grad.shape());
  Value y = b.mul(b.mul(convert(b, grad, c), m), param(b, scale, c, grad.shape()));
  return convert(b, y, grad.dtype());
}

Value randperm(Builder& b, Value state, int64_t n, DType out) {
  // 64-bit keys: ties (which would favour the original order) are
  // vanishingly rare.
  Value keys = random_bits(b, state, {n}, DType::U64);
  Value idx = b.iota(Type{DType::S64, {n}}, 0);
  auto sorted = b.sort({keys, idx}, 0, [](Builder& b, const std::vector<Value>& a) {
    return std::vector<Value>{b.compare(Cmp::LT, a[0], a[1])};
  });
  return convert(b, sorted[1], out);
}

Value multinomial(Builder& b, Value state, Value probs, int64_t n, bool replacement) {
  // Gumbel-max in exponential form: argmax_i p_i / E_i with E_i ~ Exp(1)
  // picks i with probability p_i / sum(p); the top n of one draw is a
  // sample without replacement.
  DType c = random_compute_dtype(probs.dtype());
  Value p = b.convert(probs, c);
  int64_t rows = p.shape()[0], cats = p.shape()[1];
  auto noise = [&](const Shape& s) {
    return b.unary("negate", b.unary("log", unit_uniform(b, state, s, c, random_digits(c), Interval::Open)));
  };
  if (replacement && n > 1) {
    Shape s{rows, n, cats};
    Value q = b.div(b.broadcast_in_dim(p, s, {0, 2}), noise(s));
    return argmax(b, q, 2);
  }
  Value q = b.div(p, noise(p.shape()));
  if (n == 1) return b.reshape(argmax(b, q, 1), {rows, 1});
  Value idx = b.iota(Type{DType::S64, p.shape()}, 1);
  auto sorted = b.sort({q, idx}, 1, [](Builder& b, const std::vector<Value>& a) {
    return std::vector<Value>{b.compare(Cmp::GT, a[0], a[1])};
  });
  return b.slice(sorted[1], {0, 0}, {rows, n}, {1, 1});
}

}  // namespace ops
