// softmax lowering: see softmax.h.
#include "ops/softmax/softmax.h"

#include "ops/elementwise/elementwise.h"
#include "ops/reduction/reduction.h"

namespace ops {

using shlo::Builder;
using shlo::DType;
using shlo::Shape;
using shlo::Value;

Value softmax(Builder& b, Value x, int64_t dim, bool log, DType out) {
  Shape orig = x.shape();
  if (x.rank() == 0) x = b.reshape(x, {1});
  Shape shape = x.shape();
  Value v = convert(b, x, acc_type(out));
  Value m = expand_back(b, max_over(b, v, {dim}), shape, {dim});
  Value z = b.sub(v, m);
  Value e = b.unary("exponential", z);
  Value s = expand_back(b, sum_over(b, e, {dim}), shape, {dim});
  Value r = log ? b.sub(z, b.unary("log", s)) : b.div(e, s);
  return b.reshape(convert(b, r, out), orig);
}

Value softmax_backward(Builder& b, Value grad, Value output, int64_t dim, bool log, DType out) {
  Shape orig = grad.shape();
  if (grad.rank() == 0) {
    grad = b.reshape(grad, {1});
    output = b.reshape(output, {1});
  }
  Shape shape = grad.shape();
  DType acc = acc_type(out);
  if (grad.dtype() == DType::F32 || output.dtype() == DType::F32) acc = acc == DType::F64 ? acc : DType::F32;
  Value g = convert(b, grad, acc), y = convert(b, output, acc);
  Value r;
  if (log) {
    // d log_softmax: g - softmax * sum(g)
    Value s = expand_back(b, sum_over(b, g, {dim}), shape, {dim});
    r = b.sub(g, b.mul(b.unary("exponential", y), s));
  } else {
    // d softmax: y * (g - sum(g * y))
    Value s = expand_back(b, sum_over(b, b.mul(g, y), {dim}), shape, {dim});
    r = b.mul(y, b.sub(g, s));
  }
  return b.reshape(convert(b, r, out), orig);
}

}  // namespace ops
