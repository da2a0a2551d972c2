// Special functions with PyTorch's CPU rules where StableHLO's (chlo's)
// differ: polygamma (with trigamma) and xlog1py. Apart from the pointwise
// family in elementwise.cc because their lowerings are loops and series,
// not one op per PyTorch function.
#include <limits>
#include <string>
#include <vector>

#include "ops/common/lowering.h"
#include "ops/elementwise/elementwise.h"

namespace ops {

using shlo::Cmp;
using shlo::DType;

namespace {

// PyTorch's CPU trigamma: reflection below 1/2, six recurrence steps, then
// the asymptotic series.
Value trigamma(Builder& b, Value x) {
  double pi = 3.14159265358979323846;
  Value one = constant_like(b, 1, x);
  Value low = b.compare(Cmp::LT, x, constant_like(b, 0.5, x));
  Value s = b.unary("sine", b.mul(constant_like(b, pi, x), x));
  Value result =
      b.select(low, b.unary("negate", b.div(constant_like(b, pi * pi, x), b.mul(s, s))), constant_like(b, 0, x));
  Value sign = b.select(low, constant_like(b, -1, x), one);
  Value z = b.select(low, b.sub(one, x), x);
  for (int i = 0; i < 6; ++i) {
    result = b.add(result, b.div(one, b.mul(z, z)));
    z = b.add(z, one);
  }
  Value ixx = b.div(one, b.mul(z, z));
  Value series = b.sub(constant_like(b, 1.0 / 30, x), b.mul(ixx, constant_like(b, 1.0 / 42, x)));
  series = b.sub(constant_like(b, 1.0 / 6, x), b.mul(ixx, series));
  series = b.add(b.add(one, b.div(one, b.mul(constant_like(b, 2, x), z))), b.mul(ixx, series));
  result = b.add(result, b.div(series, z));
  return b.mul(sign, result);
}

}  // namespace

// chlo.polygamma is wrong for negative x: PyTorch's rules are applied here.
Value polygamma(Builder& b, Value n, Value x) {
  DType t = x.dtype();
  x = to_opmath(b, x);
  Value nn = b.broadcast_in_dim(b.convert(n, x.dtype()), x.shape(), {});
  Value one = constant_like(b, 1, x), zero = constant_like(b, 0, x);
  Value whole = b.compare(Cmp::EQ, x, b.unary("floor", x));
  Value neg = b.compare(Cmp::LT, x, zero);
  Value shift = logical_and(b, neg, logical_not(b, whole));
  // zeta(n+1, x) = sum_{k<m} (x+k)^-(n+1) + zeta(n+1, x+m), stepping until x+m >= 1.
  shlo::Type ty = x.type;
  shlo::Type it{DType::S32, {}};
  Value start = b.select(shift, x, one);
  std::string cond = b.region({ty, ty, ty, shlo::Type{DType::S32, {}}}, [&](Builder& r, const std::vector<Value>& s) {
    Value below = r.compare(Cmp::LT, s[0], constant_like(r, 1, s[0]));
    Value any = r.reduce(below, r.constant(DType::PRED, 0), all_dims(below.rank()), "or");
    Value more = r.compare(Cmp::LT, s[3], r.constant(DType::S32, 100000));  // huge |x|: stop
    return std::vector<Value>{logical_and(r, any, more)};
  });
  std::string body = b.region({ty, ty, ty, shlo::Type{DType::S32, {}}}, [&](Builder& r, const std::vector<Value>& s) {
    Value below = r.compare(Cmp::LT, s[0], constant_like(r, 1, s[0]));
    Value term = r.op1(hlo::kPower, {s[0], r.unary("negate", r.add(s[2], constant_like(r, 1, s[2])))}, s[0].type);
    Value acc = r.select(below, r.add(s[1], term), s[1]);
    Value xs = r.select(below, r.add(s[0], constant_like(r, 1, s[0])), s[0]);
    return std::vector<Value>{xs, acc, s[2], r.add(s[3], r.constant(DType::S32, 1))};
  });
  std::vector<Value> loop =
      b.op(hlo::kWhile, {start, zero, nn, b.constant(DType::S32, 0)}, {ty, ty, ty, it}, "", {cond, body});
  Value general = b.op1("chlo.polygamma", {nn, b.select(shift, loop[0], x)}, ty);
  // (-1)^(n+1) n!
  Value odd = b.compare(Cmp::NE, b.op1(hlo::kRemainder, {nn, constant_like(b, 2, nn)}, ty), zero);
  Value fact = b.unary("exponential", b.op1("chlo.lgamma", {b.add(nn, one)}, ty));
  Value signed_fact = b.select(odd, fact, b.unary("negate", fact));
  Value shifted = b.add(general, b.mul(signed_fact, loop[1]));
  Value inf = constant_like(b, std::numeric_limits<double>::infinity(), x);
  Value pole = b.select(odd, inf, b.unary("negate", inf));
  Value r = b.select(shift, shifted, b.select(logical_and(b, whole, b.compare(Cmp::LE, x, zero)), pole, general));
  r = b.select(b.compare(Cmp::EQ, nn, one), trigamma(b, x), r);
  return from_opmath(b, r, t);
}

Value xlog1py(Builder& b, Value x, Value y) {
  DType t = x.dtype();
  Value xf = to_opmath(b, x), yf = to_opmath(b, y);
  Value r = b.mul(xf, b.unary("log_plus_one", yf));
  r = b.select(b.compare(Cmp::EQ, xf, constant_like(b, 0, xf)), constant_like(b, 0, xf), r);
  r = b.select(is_nan(b, yf), yf, r);
  return from_opmath(b, r, t);
}

}  // namespace ops
