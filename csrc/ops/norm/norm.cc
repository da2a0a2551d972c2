// Layer norm and RMS norm: see norm.h.
#include "ops/norm/norm.h"

#include "ops/common/lowering.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduction/reduction.h"

namespace ops {

using shlo::Shape;

namespace {

struct Split {
  Dims inner, outer;
  Shape stat_shape;  // x's shape with the normalized dims as 1
  double n = 1;      // elements per normalized group
};

Split split(const Shape& s, int64_t axis) {
  Split r;
  r.stat_shape = s;
  for (int64_t i = 0; i < static_cast<int64_t>(s.size()); ++i) {
    if (i >= axis) {
      r.inner.push_back(i);
      r.n *= static_cast<double>(s[i]);
      r.stat_shape[i] = 1;
    } else {
      r.outer.push_back(i);
    }
  }
  return r;
}

// A keepdim-shaped statistic broadcast over x.
Value spread(Builder& b, Value stat, const Split& sp, const Shape& shape) {
  return b.broadcast_to(b.reshape(stat, sp.stat_shape), shape);
}

// A parameter of the normalized shape broadcast over x (trailing dims).
Value param(Builder& b, Value p, DType acc, const Shape& shape) { return b.broadcast_to(convert(b, p, acc), shape); }

// Sum over the outer dims: a parameter's gradient (normalized shape).
Value param_grad(Builder& b, Value g, const Split& sp, DType out) {
  return convert(b, sp.outer.empty() ? g : sum_over(b, g, sp.outer), out);
}

}  // namespace

LayerNormOut layer_norm(Builder& b, Value x, int64_t axis, std::optional<Value> weight, std::optional<Value> bias,
                        Value eps, DType stat_dtype) {
  Shape shape = x.shape();
  Split sp = split(shape, axis);
  DType acc = acc_type(x.dtype());
  Value v = convert(b, x, acc);
  Value s = sum_over(b, v, sp.inner);
  Value mean = b.div(s, constant_like(b, sp.n, s));
  Value d = b.sub(v, spread(b, mean, sp, shape));
  Value var = sum_over(b, b.mul(d, d), sp.inner);
  var = b.div(var, constant_like(b, sp.n, var));
  Value rstd = b.unary("rsqrt", b.add(var, splat(b, b.convert(eps, acc), var)));
  Value y = b.mul(d, spread(b, rstd, sp, shape));
  if (weight) y = b.mul(y, param(b, *weight, acc, shape));
  if (bias) y = b.add(y, param(b, *bias, acc, shape));
  return {convert(b, y, x.dtype()), convert(b, b.reshape(mean, sp.stat_shape), stat_dtype),
          convert(b, b.reshape(rstd, sp.stat_shape), stat_dtype)};
}

std::vector<std::optional<Value>> layer_norm_backward(Builder& b, Value grad, Value x, Value mean, Value rstd,
                                                      std::optional<Value> weight, std::optional<Value> bias,
                                                      int64_t axis, const std::vector<bool>& mask) {
  Shape shape = x.shape();
  Split sp = split(shape, axis);
  DType acc = acc_type(x.dtype());
  Value g = convert(b, grad, acc), v = convert(b, x, acc);
  Value rs = spread(b, convert(b, rstd, acc), sp, shape);
  Value x_hat = b.mul(b.sub(v, spread(b, convert(b, mean, acc), sp, shape)), rs);
  std::vector<std::optional<Value>> r(3);
  if (mask[0]) {
    Value gx = weight ? b.mul(g, param(b, *weight, acc, shape)) : g;
    // dx = rstd / N * (N * gx - sum(gx) - x_hat * sum(gx * x_hat))
    Value s1 = spread(b, sum_over(b, gx, sp.inner), sp, shape);
    Value s2 = spread(b, sum_over(b, b.mul(gx, x_hat), sp.inner), sp, shape);
    Value inner = b.sub(b.sub(b.mul(gx, constant_like(b, sp.n, gx)), s1), b.mul(x_hat, s2));
    r[0] = convert(b, b.mul(b.div(rs, constant_like(b, sp.n, rs)), inner), x.dtype());
  }
  if (mask[1] && weight) r[1] = param_grad(b, b.mul(g, x_hat), sp, weight->dtype());
  if (mask[2] && bias) r[2] = param_grad(b, g, sp, bias->dtype());
  return r;
}

RmsNormOut rms_norm(Builder& b, Value x, int64_t axis, std::optional<Value> weight, Value eps) {
  Shape shape = x.shape();
  Split sp = split(shape, axis);
  DType acc = acc_type(x.dtype());
  Value v = convert(b, x, acc);
  Value ms = sum_over(b, b.mul(v, v), sp.inner);
  ms = b.div(ms, constant_like(b, sp.n, ms));
  Value rstd = b.reshape(b.unary("rsqrt", b.add(ms, splat(b, b.convert(eps, acc), ms))), sp.stat_shape);
  Value y = b.mul(v, b.broadcast_to(rstd, shape));
  if (weight) y = b.mul(y, param(b, *weight, acc, shape));
  return {convert(b, y, x.dtype()), rstd};
}

std::vector<std::optional<Value>> rms_norm_backward(Builder& b, Value grad, Value x, Value rstd,
                                                    std::optional<Value> weight, int64_t axis,
                                                    const std::vector<bool>& mask) {
  Shape shape = x.shape();
  Split sp = split(shape, axis);
  DType acc = acc_type(x.dtype());
  Value g = convert(b, grad, acc), v = convert(b, x, acc);
  Value rs = spread(b, convert(b, rstd, acc), sp, shape);
  Value x_hat = b.mul(v, rs);
  std::vector<std::optional<Value>> r(2);
  if (mask[0]) {
    Value gx = weight ? b.mul(g, param(b, *weight, acc, shape)) : g;
    // dx = (gx - x_hat / N * sum(x_hat * gx)) * rstd
    Value s = spread(b, sum_over(b, b.mul(x_hat, gx), sp.inner), sp, shape);
    Value t = b.mul(b.div(x_hat, constant_like(b, sp.n, x_hat)), s);
    r[0] = convert(b, b.mul(b.sub(gx, t), rs), x.dtype());
  }
  if (mask[1] && weight) r[1] = param_grad(b, b.mul(g, x_hat), sp, x.dtype());
  return r;
}

}  // namespace ops
