// Reductions, scans and losses: see reduction.h.
#include "ops/reduction/reduction.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "ops/elementwise/elementwise.h"

namespace ops {

using shlo::Cmp;
using shlo::Shape;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Value cst(Builder& b, DType t, double v, const Shape& shape) { return b.constant(t, v, shape); }
Value is_nan(Builder& b, Value x) { return b.compare(Cmp::NE, x, x); }
Value logical_and(Builder& b, Value x, Value y) { return b.op1("stablehlo.and", {x, y}, x.type); }
Value logical_or(Builder& b, Value x, Value y) { return b.op1("stablehlo.or", {x, y}, x.type); }
Value logical_not(Builder& b, Value x) { return b.unary("not", x); }
Value nonzero(Builder& b, Value x) {
  if (x.dtype() == DType::PRED) return x;
  return b.compare(Cmp::NE, x, cst(b, x.dtype(), 0, x.shape()));
}

// x converted to `out` first (PyTorch rounds the input to the result dtype
// before reducing), then to the accumulation dtype.
Value to_acc(Builder& b, Value x, DType out) { return convert(b, convert(b, x, out), acc_type(out)); }

int64_t count_of(const Shape& s, const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= s[d];
  return n;
}

Value reduce_plain(Builder& b, Value x, const Dims& dims, const char* body, double init) {
  return b.reduce(x, b.constant(x.dtype(), init), dims, body);
}

// NaN-propagating max / min: XLA:CPU's maximum / minimum drop NaN inside
// reductions, PyTorch propagates it.
Value max_nan(Builder& b, Value x, Value y, bool is_max) {
  Value m = is_max ? b.max(x, y) : b.min(x, y);
  if (!shlo::is_float(x.dtype())) return m;
  return b.select(is_nan(b, x), x, b.select(is_nan(b, y), y, m));
}

Value reduce_extreme(Builder& b, Value x, const Dims& dims, bool is_max) {
  Value init = is_max ? b.lowest(x.dtype()) : b.highest(x.dtype());
  return b.reduce_multi({x}, {init}, dims, [is_max](Builder& b, const std::vector<Value>& a) {
    return std::vector<Value>{max_nan(b, a[0], a[1], is_max)};
  })[0];
}

Value sum_acc(Builder& b, Value x, const Dims& dims) { return reduce_plain(b, x, dims, "add", 0); }

}  // namespace

DType acc_type(DType out) { return out == DType::F16 || out == DType::BF16 ? DType::F32 : out; }

Value expand_back(Builder& b, Value reduced, const Shape& shape, const Dims& dims) {
  return b.broadcast_to(keep_dims(b, reduced, shape, dims), shape);
}
Value max_over(Builder& b, Value x, const Dims& dims) { return reduce_extreme(b, x, dims, true); }
Value sum_over(Builder& b, Value x, const Dims& dims) { return sum_acc(b, x, dims); }

Value keep_dims(Builder& b, Value reduced, const Shape& in_shape, const Dims& dims) {
  Shape s(in_shape);
  for (int64_t d : dims) s[d] = 1;
  return b.reshape(reduced, s);
}

Value reduce(Builder& b, Value x, Reduce kind, const Dims& dims, bool keepdim, DType out) {
  Shape in = x.shape();
  Value r;
  switch (kind) {
    case Reduce::All:
    case Reduce::Any: {
      bool all = kind == Reduce::All;
      r = convert(b, reduce_plain(b, nonzero(b, x), dims, all ? "and" : "or", all ? 1 : 0), out);
      break;
    }
    case Reduce::Sum:
    case Reduce::Prod: {
      bool sum = kind == Reduce::Sum;
      Value v = to_acc(b, x, out);
      r = convert(b, reduce_plain(b, v, dims, sum ? "add" : "multiply", sum ? 0 : 1), out);
      break;
    }
    case Reduce::Max:
    case Reduce::Min:
      r = convert(b, reduce_extreme(b, convert(b, x, out), dims, kind == Reduce::Max), out);
      break;
  }
  return keepdim ? keep_dims(b, r, in, dims) : r;
}

Value mean(Builder& b, Value x, const Dims& dims, bool keepdim, DType out) {
  Shape in = x.shape();
  Value v = to_acc(b, x, out);
  Value s = sum_acc(b, v, dims);
  Value r = convert(b, b.div(s, cst(b, s.dtype(), static_cast<double>(count_of(in, dims)), s.shape())), out);
  return keepdim ? keep_dims(b, r, in, dims) : r;
}

std::pair<Value, Value> var_mean(Builder& b, Value x, const Dims& dims, bool keepdim, Value correction, bool take_sqrt,
                                 DType out) {
  Shape in = x.shape();
  Value v = to_acc(b, x, out);
  DType acc = v.dtype();
  double n = static_cast<double>(count_of(in, dims));
  Value s = sum_acc(b, v, dims);
  Value m = b.div(s, cst(b, acc, n, s.shape()));
  Value d = b.sub(v, expand_back(b, m, in, dims));
  Value ss = sum_acc(b, b.mul(d, d), dims);
  // dof = max(n - correction, 0), as PyTorch; dividing by 0 gives inf / nan.
  Value c = splat(b, b.convert(correction, acc), ss);
  Value dof = b.max(b.sub(cst(b, acc, n, ss.shape()), c), cst(b, acc, 0, ss.shape()));
  Value var = b.div(ss, dof);
  if (take_sqrt) var = b.unary("sqrt", var);
  var = convert(b, var, out);
  m = convert(b, m, out);
  if (keepdim) {
    var = keep_dims(b, var, in, dims);
    m = keep_dims(b, m, in, dims);
  }
  return {var, m};
}

std::pair<Value, Value> arg_reduce(Builder& b, Value x, int64_t dim, bool keepdim, bool is_max) {
  Shape in = x.shape();
  DType orig = x.dtype();
  // Booleans compare as 0 / 1.
  Value v = orig == DType::PRED ? b.convert(x, DType::U8) : x;
  bool fl = shlo::is_float(v.dtype());
  Value idx = b.iota(shlo::Type{DType::S64, in}, dim);
  Value init_v = is_max ? b.lowest(v.dtype()) : b.highest(v.dtype());
  // An init index past every real one: real elements win ties against it.
  Value init_i = b.constant(DType::S64, static_cast<double>(in[dim]));
  auto body = [fl, is_max](Builder& b, const std::vector<Value>& a) {
    Value av = a[0], ai = a[1], bv = a[2], bi = a[3];
    Value better = b.compare(is_max ? Cmp::GT : Cmp::LT, av, bv);
    Value equal = b.compare(Cmp::EQ, av, bv);
    if (fl) {
      Value an = is_nan(b, av), bn = is_nan(b, bv);
      better = logical_or(b, better, logical_and(b, an, logical_not(b, bn)));
      equal = logical_or(b, equal, logical_and(b, an, bn));
    }
    Value take_a = logical_or(b, better, logical_and(b, equal, b.compare(Cmp::LT, ai, bi)));
    return std::vector<Value>{b.select(take_a, av, bv), b.select(take_a, ai, bi)};
  };
  std::vector<Value> r = b.reduce_multi({v, idx}, {init_v, init_i}, {dim}, body);
  Value vals = b.convert(r[0], orig), inds = r[1];
  if (keepdim) {
    vals = keep_dims(b, vals, in, {dim});
    inds = keep_dims(b, inds, in, {dim});
  }
  return {vals, inds};
}

Value logsumexp(Builder& b, Value x, const Dims& dims, bool keepdim, DType out) {
  Shape in = x.shape();
  Value v = to_acc(b, x, out);
  Value m = reduce_extreme(b, v, dims, true);
  // An infinite max (all -inf, or some +inf) would make x - max NaN.
  Value inf = cst(b, v.dtype(), kInf, m.shape());
  m = b.select(b.compare(Cmp::EQ, b.unary("abs", m), inf), cst(b, v.dtype(), 0, m.shape()), m);
  Value s = sum_acc(b, b.unary("exponential", b.sub(v, expand_back(b, m, in, dims))), dims);
  Value r = convert(b, b.add(b.unary("log", s), m), out);
  return keepdim ? keep_dims(b, r, in, dims) : r;
}

Value vector_norm(Builder& b, Value x, NormOrd ord, Value p, const Dims& dims, bool keepdim, DType out) {
  Shape in = x.shape();
  Value v = to_acc(b, x, out);
  DType acc = v.dtype();
  Value a = b.unary("abs", v);
  Value r;
  switch (ord) {
    case NormOrd::Zero:
      r = sum_acc(b, b.convert(nonzero(b, v), acc), dims);
      break;
    case NormOrd::One:
      r = sum_acc(b, a, dims);
      break;
    case NormOrd::Two:
      r = b.unary("sqrt", sum_acc(b, b.mul(a, a), dims));
      break;
    case NormOrd::Inf:
      r = reduce_extreme(b, a, dims, true);
      break;
    case NormOrd::NegInf:
      r = reduce_extreme(b, a, dims, false);
      break;
    case NormOrd::General: {
      Value pa = splat(b, b.convert(p, acc), a);
      Value s = sum_acc(b, b.binary("power", a, pa), dims);
      Value inv = b.div(cst(b, acc, 1, s.shape()), splat(b, b.convert(p, acc), s));
      r = b.binary("power", s, inv);
      break;
    }
  }
  r = convert(b, r, out);
  return keepdim ? keep_dims(b, r, in, dims) : r;
}

Value count_nonzero(Builder& b, Value x, const Dims& dims) {
  return sum_acc(b, b.convert(nonzero(b, x), DType::S64), dims);
}

// ---------------------------------------------------------------- scans

namespace {

Value combine(Builder& b, Scan kind, Value x, Value y) {
  switch (kind) {
    case Scan::Sum:
      return b.add(x, y);
    case Scan::Prod:
      return b.mul(x, y);
    case Scan::LogAddExp: {
      Value hi = max_nan(b, x, y, true), lo = max_nan(b, x, y, false);
      Value r = b.add(hi, b.unary("log_plus_one", b.unary("exponential", b.sub(lo, hi))));
      // Equal infinities (the -inf identity included) stay themselves.
      Value inf = cst(b, x.dtype(), kInf, x.shape());
      Value same_inf = logical_and(b, b.compare(Cmp::EQ, lo, hi), b.compare(Cmp::EQ, b.unary("abs", hi), inf));
      return b.select(same_inf, hi, r);
    }
  }
  throw std::invalid_argument("scan: unknown kind");
}

}  // namespace

Value scan(Builder& b, Value x, Scan kind, int64_t dim, DType out) {
  Shape orig = x.shape();
  if (x.rank() == 0) x = b.reshape(x, {1});
  Value v = to_acc(b, x, out);
  Shape shape = v.shape();
  int64_t n = shape[dim];
  double identity = kind == Scan::Sum ? 0 : kind == Scan::Prod ? 1 : -kInf;
  Value pad_value = b.constant(v.dtype(), identity);
  int64_t rank = v.rank();
  // Hillis-Steele: after the step with shift k, each element combines the
  // 2k elements ending at it; log2(n) elementwise steps, no serial loop.
  for (int64_t k = 1; k < n; k *= 2) {
    Shape start(rank, 0), limit(shape), strides(rank, 1), lo(rank, 0), hi(rank, 0), interior(rank, 0);
    limit[dim] = n - k;
    lo[dim] = k;
    Value shifted = b.pad(b.slice(v, start, limit, strides), pad_value, lo, hi, interior);
    v = combine(b, kind, shifted, v);
  }
  return b.reshape(convert(b, v, out), orig);
}

// ---------------------------------------------------------------- losses

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
    w = sum_acc(b, b.select(mask, wb, cst(b, acc, 0, self.shape())), {l.cdim});
  } else {
    w = b.select(valid, cst(b, acc, 1, target.shape()), cst(b, acc, 0, target.shape()));
  }
  return {mask, valid, w};
}

Dims all_dims(int64_t rank) {
  Dims d;
  for (int64_t i = 0; i < rank; ++i) d.push_back(i);
  return d;
}

}  // namespace

std::pair<Value, Value> nll_loss(Builder& b, Value self, Value target, std::optional<Value> weight, int64_t reduction,
                                 Value ignore_index) {
  DType out = self.dtype(), acc = acc_type(out);
  NllLayout l = nll_layout(self);
  NllPick p = nll_pick(b, self, target, weight, ignore_index, acc);
  Value x = convert(b, self, acc);
  Value picked = sum_acc(b, b.select(p.mask, x, cst(b, acc, 0, x.shape())), {l.cdim});
  Value zero_t = cst(b, acc, 0, picked.shape());
  Value loss = b.select(p.valid, b.unary("negate", b.mul(p.w, picked)), zero_t);
  Dims every = all_dims(loss.rank());
  if (reduction == 0) return {convert(b, loss, out), b.constant(out, 0)};
  Value total = sum_acc(b, p.w, every);
  Value s = sum_acc(b, loss, every);
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
  return convert(b, b.select(p.mask, cb, cst(b, acc, 0, self.shape())), out);
}

Value mse_loss(Builder& b, Value x, Value y, int64_t reduction, DType out) {
  DType acc = acc_type(out);
  Value d = b.sub(convert(b, x, acc), convert(b, y, acc));
  Value sq = b.mul(d, d);
  if (reduction == 0) return convert(b, sq, out);
  Value s = sum_acc(b, sq, all_dims(sq.rank()));
  if (reduction == 1) s = b.div(s, cst(b, acc, static_cast<double>(shlo::numel(sq.shape())), {}));
  return convert(b, s, out);
}

Value mse_loss_backward(Builder& b, Value grad, Value x, Value y, int64_t reduction, DType out) {
  DType acc = acc_type(out);
  Shape shape = x.shape();
  Value d = b.sub(convert(b, x, acc), b.broadcast_to(convert(b, y, acc), shape));
  double scale = reduction == 1 ? 2.0 / static_cast<double>(shlo::numel(shape)) : 2.0;
  Value g = b.broadcast_to(convert(b, grad, acc), shape);
  return convert(b, b.mul(b.mul(d, cst(b, acc, scale, shape)), g), out);
}

}  // namespace ops
