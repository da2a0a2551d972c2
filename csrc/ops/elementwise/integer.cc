// Integer and bit math with PyTorch's rules: gcd / lcm (Euclid as a
// loop), shifts by out-of-range amounts, and nextafter on the bit pattern.
// Apart from elementwise.cc because they work on integer representations,
// not on values through opmath.
#include <cmath>
#include <string>
#include <vector>

#include "ops/common/lowering.h"
#include "ops/elementwise/elementwise.h"

namespace ops {

using shlo::Cmp;
using shlo::DType;

Value gcd(Builder& b, Value x, Value y) {
  Value a = unary(b, Unary::Abs, x), c = unary(b, Unary::Abs, y);
  shlo::Type t = x.type;
  // Euclid, elementwise: while any a != 0: (a, c) = (c % a, a) where a != 0.
  std::string cond = b.region({t, t}, [&](Builder& r, const std::vector<Value>& s) {
    Value nz = r.compare(Cmp::NE, s[0], constant_like(r, 0, s[0]));
    return std::vector<Value>{r.reduce(nz, r.constant(DType::PRED, 0), all_dims(nz.rank()), "or")};
  });
  std::string body = b.region({t, t}, [&](Builder& r, const std::vector<Value>& s) {
    Value zero = constant_like(r, 0, s[0]);
    Value nz = r.compare(Cmp::NE, s[0], zero);
    Value safe = r.select(nz, s[0], constant_like(r, 1, s[0]));
    Value rem = r.op1(hlo::kRemainder, {s[1], safe}, t);
    return std::vector<Value>{r.select(nz, rem, zero), r.select(nz, s[0], s[1])};
  });
  return b.op(hlo::kWhile, {a, c}, {t, t}, "", {cond, body})[1];
}

Value lcm(Builder& b, Value x, Value y) {
  Value g = gcd(b, x, y);
  Value zero = constant_like(b, 0, g);
  Value is0 = b.compare(Cmp::EQ, g, zero);
  Value q = b.div(x, b.select(is0, constant_like(b, 1, g), g));
  // C promotes 8- and 16-bit integers to int before multiplying: the CPU's
  // |q * y| is taken at 32 bits, then wraps into the dtype (so it may come
  // out negative), where the dtype's own product would wrap first.
  const DType t = x.dtype();
  if (shlo::is_signed_int(t) && shlo::dtype_size(t) < 4) {
    Value wide = b.mul(b.convert(q, DType::S32), b.convert(y, DType::S32));
    return b.select(is0, zero, b.convert(unary(b, Unary::Abs, wide), t));
  }
  return b.select(is0, zero, unary(b, Unary::Abs, b.mul(q, y)));
}

namespace {
int64_t bit_width(DType t) { return static_cast<int64_t>(shlo::dtype_size(t)) * 8; }
}  // namespace

Value shift_left(Builder& b, Value x, Value y) {
  int64_t bits = bit_width(x.dtype());
  Value bad = b.compare(Cmp::GE, y, constant_like(b, static_cast<double>(bits), y));
  if (shlo::is_signed_int(y.dtype()))
    bad = logical_or(b, bad, b.compare(Cmp::LT, y, constant_like(b, 0, y)));
  else if (shlo::is_unsigned_int(y.dtype()) && bits < 64)  // a "negative" amount read as signed
    bad = logical_or(b, bad, b.compare(Cmp::GE, y, constant_like(b, std::ldexp(1.0, static_cast<int>(bits) - 1), y)));
  Value r = b.binary("shift_left", x, y);
  return b.select(bad, constant_like(b, 0, x), r);
}

Value shift_right(Builder& b, Value x, Value y) {
  bool sign = shlo::is_signed_int(x.dtype());
  int64_t bits = bit_width(x.dtype()), max_shift = bits - (sign ? 1 : 0);
  const char* opname = sign ? "shift_right_arithmetic" : "shift_right_logical";
  Value bad = b.compare(Cmp::GE, y, constant_like(b, static_cast<double>(max_shift), y));
  if (sign) bad = logical_or(b, bad, b.compare(Cmp::LT, y, constant_like(b, 0, y)));
  Value r = b.binary(opname, x, y);
  Value fill = b.binary(opname, x, constant_like(b, static_cast<double>(max_shift), x));
  return b.select(bad, fill, r);
}

Value nextafter(Builder& b, Value x, Value y) {
  // The integer type of x's width.
  DType it = x.dtype() == DType::F64 ? DType::S64 : x.dtype() == DType::F32 ? DType::S32 : DType::S16;
  shlo::Type ity{it, x.shape()};
  Value bits = b.bitcast_convert(x, ity);
  Value zero = constant_like(b, 0, x);
  // Away from zero in magnitude: +1 on the sign-magnitude bits, else -1.
  Value away = b.compare(Cmp::EQ, b.compare(Cmp::GT, y, x), b.compare(Cmp::GT, x, zero));
  Value one = b.constant(it, 1, x.shape());
  Value stepped = b.bitcast_convert(b.select(away, b.add(bits, one), b.sub(bits, one)), x.type);
  // From zero: the smallest subnormal with y's sign.
  Value tiny = b.bitcast_convert(one, x.type);
  Value from_zero = b.select(b.compare(Cmp::LT, y, zero), b.unary("negate", tiny), tiny);
  Value r = b.select(b.compare(Cmp::EQ, x, zero), from_zero, stepped);
  r = b.select(b.compare(Cmp::EQ, x, y), y, r);
  return b.select(logical_or(b, is_nan(b, x), is_nan(b, y)), b.add(x, y), r);
}

}  // namespace ops
