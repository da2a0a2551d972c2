// Loss lowerings: see loss.h.
#include "ops/loss/loss.h"

#include <algorithm>

#include "ops/common/lowering.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduction/reduction.h"

namespace ops {

using shlo::Cmp;
using shlo::Shape;

namespace {

// The class dim of an nll_loss input and the target's dims inside it.
struct NllLayout {
  int64_t cdim;
  Dims target_dims;  // input dims the target's dims map to
};

NllLayout nll_layout(const Value& self) {
  NllLayout l;
  l.cdim = self.rank() == 1 ? 0 : 1;
  for (int64_t i = 0; i < self.rank(); ++i)
    if (i != l.cdim) l.target_dims.push_back(i);
  return l;
}

// Per target element: one-hot mask over the input (valid, non-ignored
// targets only), the valid mask (target's shape) and the target's weight
// (0 where ignored).
struct NllPick {
  Value mask, valid, w;
};

NllPick nll_pick(Builder& b, const Value& self, Value target, std::optional<Value> weight, Value ignore_index,
                 DType acc) {
  NllLayout l = nll_layout(self);
  target = b.convert(target, DType::S64);
  Value valid = b.compare(Cmp::NE, target, splat(b, ignore_index, target));
  Value classes = b.iota(shlo::Type{DType::S64, self.shape()}, l.cdim);
  Value tb = b.broadcast_in_dim(target, self.shape(), l.target_dims);
  Value vb = b.broadcast_in_dim(valid, self.shape(), l.target_dims);
  Value mask = logical_and(b, b.compare(Cmp::EQ, classes, tb), vb);
  Value w;
  if (weight) {
    Value wb = b.broadcast_in_dim(convert(b, *weight, acc), self.shape(), {l.cdim});
    w = sum_over(b, b.select(mask, wb, b.constant(acc, 0, self.shape())), {l.cdim});
  } else {
    w = b.select(valid, b.constant(acc, 1, target.shape()), b.constant(acc, 0, target.shape()));
  }
  return {mask, valid, w};
}

// The loss in x's dtype t, reduced as asked.
Value reduce_loss(Builder& b, Value l, int64_t reduction, DType t) {
  l = b.convert(l, t);
  if (reduction == 0) return l;
  if (reduction == 1) return mean(b, l, all_dims(l.rank()), false, t);
  return reduce(b, l, Reduce::Sum, all_dims(l.rank()), false, t);
}

// 1 / numel for a mean reduction, else 1 (the backward's scale).
double loss_norm(const Value& x, int64_t reduction) {
  return reduction == 1 ? 1.0 / static_cast<double>(std::max<int64_t>(shlo::numel(x.shape()), 1)) : 1.0;
}

}  // namespace

// ---------------------------------------------------------------- nll_loss

std::pair<Value, Value> nll_loss(Builder& b, Value self, Value target, std::optional<Value> weight, int64_t reduction,
                                 Value ignore_index) {
  DType out = self.dtype(), acc = acc_type(out);
  NllLayout l = nll_layout(self);
  NllPick p = nll_pick(b, self, target, weight, ignore_index, acc);
  Value x = convert(b, self, acc);
  Value picked = sum_over(b, b.select(p.mask, x, b.constant(acc, 0, x.shape())), {l.cdim});
  Value zero_t = b.constant(acc, 0, picked.shape());
  Value loss = b.select(p.valid, b.unary("negate", b.mul(p.w, picked)), zero_t);
  Dims every = all_dims(loss.rank());
  if (reduction == 0) return {convert(b, loss, out), b.constant(out, 0)};
  Value total = sum_over(b, p.w, every);
  Value s = sum_over(b, loss, every);
  if (reduction == 1) s = b.div(s, total);
  return {convert(b, s, out), convert(b, total, out)};
}

Value nll_loss_backward(Builder& b, Value grad, Value self, Value target, std::optional<Value> weight,
                        int64_t reduction, Value ignore_index, Value total_weight) {
  DType out = self.dtype(), acc = acc_type(out);
  NllLayout l = nll_layout(self);
  NllPick p = nll_pick(b, self, target, weight, ignore_index, acc);
  Value g = convert(b, grad, acc);
  if (reduction == 0) {
    g = b.reshape(g, p.w.shape());
  } else {
    g = b.reshape(g, {});
    if (reduction == 1) g = b.div(g, b.convert(b.reshape(total_weight, {}), acc));
    g = splat(b, g, p.w);
  }
  Value coef = b.unary("negate", b.mul(p.w, g));
  Value cb = b.broadcast_in_dim(coef, self.shape(), l.target_dims);
  return convert(b, b.select(p.mask, cb, b.constant(acc, 0, self.shape())), out);
}

// ---------------------------------------------------------------- mse_loss

Value mse_loss(Builder& b, Value x, Value y, int64_t reduction, DType out) {
  DType acc = acc_type(out);
  Value d = b.sub(convert(b, x, acc), convert(b, y, acc));
  Value sq = b.mul(d, d);
  if (reduction == 0) return convert(b, sq, out);
  Value s = sum_over(b, sq, all_dims(sq.rank()));
  if (reduction == 1) s = b.div(s, b.constant(acc, static_cast<double>(shlo::numel(sq.shape())), {}));
  return convert(b, s, out);
}

Value mse_loss_backward(Builder& b, Value grad, Value x, Value y, int64_t reduction, DType out) {
  DType acc = acc_type(out);
  Shape shape = x.shape();
  Value d = b.sub(convert(b, x, acc), b.broadcast_to(convert(b, y, acc), shape));
  double scale = reduction == 1 ? 2.0 / static_cast<double>(shlo::numel(shape)) : 2.0;
  Value g = b.broadcast_to(convert(b, grad, acc), shape);
  return convert(b, b.mul(b.mul(d, b.constant(acc, scale, shape)), g), out);
}

// ---------------------------------------------------------------- huber_loss, smooth_l1_loss

Value robust_loss(Builder& b, Value x, Value y, RobustLoss kind, double param, int64_t reduction) {
  DType t = x.dtype();
  bool huber = kind == RobustLoss::Huber;
  Value xf = to_opmath(b, x), yf = to_opmath(b, y);
  Value z = b.unary("abs", b.sub(xf, yf));
  Value pr = constant_like(b, param, z), half = constant_like(b, 0.5, z);
  Value small = huber ? b.mul(b.mul(half, z), z) : b.div(b.mul(b.mul(half, z), z), pr);
  Value large = huber ? b.mul(pr, b.sub(z, b.mul(half, pr))) : b.sub(z, b.mul(half, pr));
  Value l = b.select(b.compare(Cmp::LT, z, pr), small, large);
  return reduce_loss(b, l, reduction, t);
}

Value robust_loss_backward(Builder& b, Value grad, Value x, Value y, RobustLoss kind, double param, int64_t reduction) {
  DType t = x.dtype();
  bool huber = kind == RobustLoss::Huber;
  Value xf = to_opmath(b, x), yf = to_opmath(b, y);
  Value g = b.broadcast_to(to_opmath(b, grad), xf.shape());
  Value d = b.sub(xf, yf);
  Value nm = constant_like(b, loss_norm(x, reduction), d), pr = constant_like(b, param, d);
  Value edge = huber ? b.mul(b.mul(nm, g), pr) : b.mul(nm, g);
  Value mid = huber ? b.mul(b.mul(nm, d), g) : b.div(b.mul(b.mul(nm, d), g), pr);
  Value r = b.select(b.compare(Cmp::LE, d, b.unary("negate", pr)), b.unary("negate", edge),
                     b.select(b.compare(Cmp::GE, d, pr), edge, mid));
  return b.convert(r, t);
}

// ---------------------------------------------------------------- binary_cross_entropy

Value binary_cross_entropy(Builder& b, Value x, Value y, std::optional<Value> w, int64_t reduction) {
  DType t = x.dtype();
  Value xf = to_opmath(b, x), yf = to_opmath(b, y);
  Value floor = constant_like(b, -100, xf), one = constant_like(b, 1, xf);
  Value log_x = b.max(b.unary("log", xf), floor);
  Value log_1mx = b.max(b.unary("log_plus_one", b.unary("negate", xf)), floor);
  Value l = b.sub(b.mul(b.sub(yf, one), log_1mx), b.mul(yf, log_x));
  if (w) l = b.mul(l, to_opmath(b, b.broadcast_to(*w, x.shape())));
  return reduce_loss(b, l, reduction, t);
}

Value binary_cross_entropy_backward(Builder& b, Value grad, Value x, Value y, std::optional<Value> w,
                                    int64_t reduction) {
  DType t = x.dtype();
  Value xf = to_opmath(b, x), yf = to_opmath(b, y);
  Value g = b.broadcast_to(to_opmath(b, grad), xf.shape());
  Value one = constant_like(b, 1, xf);
  Value denom = b.max(b.mul(b.sub(one, xf), xf), constant_like(b, 1e-12, xf));
  Value r = b.div(b.mul(g, b.sub(xf, yf)), denom);
  if (w) r = b.mul(r, to_opmath(b, b.broadcast_to(*w, x.shape())));
  r = b.mul(r, constant_like(b, loss_norm(x, reduction), r));
  return b.convert(r, t);
}

}  // namespace ops
