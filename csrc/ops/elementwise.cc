#include "ops/elementwise.h"

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
  return b.unary("floor", q);
}

}  // namespace ops
