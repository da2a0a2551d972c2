// Lowerings of the fused optimizer steps (see optim.h).
#include "ops/optim/optim.h"

#include "ops/elementwise/elementwise.h"

namespace ops {

using shlo::Builder;
using shlo::DType;
using shlo::Value;

namespace {

// Reads the flat input list in order.
struct Cursor {
  const std::vector<Value>& in;
  size_t at = 0;
  Value next() { return in.at(at++); }
  std::vector<Value> take(int64_t n) {
    std::vector<Value> r(in.begin() + at, in.begin() + at + n);
    at += n;
    return r;
  }
};

// The values every parameter's update shares: grad_scale as given and
// whether found_inf asks for the step to be skipped.
struct Amp {
  std::optional<Value> scale;
  std::optional<Value> skip;  // 0-d pred
};

Amp read_amp(Builder& b, Cursor& c, bool grad_scale, bool found_inf) {
  Amp a;
  if (grad_scale) a.scale = as_scalar(b, c.next());
  if (found_inf) {
    Value f = as_scalar(b, c.next());
    // The CPU kernel returns early exactly when found_inf == 1.
    a.skip = b.compare(shlo::Cmp::EQ, f, b.constant(f.dtype(), 1));
  }
  return a;
}

// v rounded to the stored dtype of old, or old itself on a skipped step.
Value result(Builder& b, const Amp& amp, Value v, Value old) {
  v = convert(b, v, old.dtype());
  if (!amp.skip) return v;
  return b.select(b.broadcast_to(*amp.skip, old.shape()), old, v);
}

// The gradient in the compute dtype, unscaled as the CPU does (a division
// by the scale, not a product with its inverse).
Value unscaled(Builder& b, const Amp& amp, Value g, DType c) {
  Value x = convert(b, g, c);
  if (amp.scale) x = b.div(x, splat(b, *amp.scale, x));
  return x;
}

Value one(Builder& b, DType t) { return b.constant(t, 1); }

}  // namespace

std::vector<Value> fused_adam(Builder& b, const AdamConfig& cfg, const std::vector<Value>& in) {
  Cursor c{in};
  const int64_t n = cfg.n;
  std::vector<Value> params = c.take(n), grads = c.take(n), avgs = c.take(n), sqs = c.take(n);
  std::vector<Value> maxs = cfg.amsgrad ? c.take(n) : std::vector<Value>{};
  std::vector<Value> steps = c.take(n);
  Value lr = c.next(), beta1 = c.next(), beta2 = c.next(), wd = c.next(), eps = c.next();
  Amp amp = read_amp(b, c, cfg.grad_scale, cfg.found_inf);
  DType w = lr.dtype();  // the wide type the CPU computes its coefficients in
  Value avg_weight = b.sub(one(b, w), beta1), sq_weight = b.sub(one(b, w), beta2);
  Value decay = b.sub(one(b, w), b.mul(lr, wd));  // AdamW's param factor

  std::vector<Value> out_p, out_avg, out_sq, out_max, out_g;
  for (int64_t i = 0; i < n; ++i) {
    DType t = params[i].dtype(), ct = opmath(t);
    auto hyper = [&](Value wide, const Value& like) { return splat(b, b.convert(wide, ct), like); };
    Value step = b.convert(as_scalar(b, steps[i]), w);
    Value bc1 = b.sub(one(b, w), b.binary("power", beta1, step));
    Value bc2_sqrt = b.unary("sqrt", b.sub(one(b, w), b.binary("power", beta2, step)));
    Value neg_step_size = b.unary("negate", b.div(lr, bc1));

    Value p = convert(b, params[i], ct);
    Value g = unscaled(b, amp, grads[i], ct);
    if (amp.scale) out_g.push_back(result(b, amp, g, grads[i]));
    if (cfg.maximize) g = b.unary("negate", g);
    if (cfg.weight_decay) {
      if (cfg.adamw)
        p = b.mul(p, hyper(decay, p));
      else
        g = b.add(g, b.mul(p, hyper(wd, p)));
    }
    Value avg = lerp(b, convert(b, avgs[i], ct), g, b.convert(avg_weight, ct));
    Value sq = b.add(b.mul(convert(b, sqs[i], ct), hyper(beta2, g)), b.mul(b.mul(hyper(sq_weight, g), g), g));
    Value src = sq;
    if (cfg.amsgrad) {
      src = b.max(convert(b, maxs[i], ct), sq);
      out_max.push_back(result(b, amp, src, maxs[i]));
    }
    Value denom = b.add(b.div(b.unary("sqrt", src), hyper(bc2_sqrt, src)), hyper(eps, src));
    p = b.add(p, b.div(b.mul(hyper(neg_step_size, avg), avg), denom));
    out_p.push_back(result(b, amp, p, params[i]));
    out_avg.push_back(result(b, amp, avg, avgs[i]));
    out_sq.push_back(result(b, amp, sq, sqs[i]));
  }
  std::vector<Value> out = out_p;
  for (auto* v : {&out_avg, &out_sq, &out_max, &out_g}) out.insert(out.end(), v->begin(), v->end());
  return out;
}

std::vector<Value> fused_sgd(Builder& b, const SgdConfig& cfg, const std::vector<Value>& in) {
  Cursor c{in};
  const int64_t n = cfg.n;
  std::vector<Value> params = c.take(n), grads = c.take(n);
  std::vector<Value> bufs = cfg.momentum ? c.take(n) : std::vector<Value>{};
  Value lr = c.next(), wd = c.next(), momentum = c.next(), dampening = c.next();
  Amp amp = read_amp(b, c, cfg.grad_scale, cfg.found_inf);
  DType w = lr.dtype();
  Value neg_lr = b.unary("negate", lr), grad_weight = b.sub(one(b, w), dampening);

  std::vector<Value> out_p, out_buf, out_g;
  for (int64_t i = 0; i < n; ++i) {
    DType t = params[i].dtype(), ct = opmath(t);
    auto hyper = [&](Value wide, const Value& like) { return splat(b, b.convert(wide, ct), like); };
    Value p = convert(b, params[i], ct);
    Value g = unscaled(b, amp, grads[i], ct);
    if (amp.scale) out_g.push_back(result(b, amp, g, grads[i]));
    if (cfg.maximize) g = b.unary("negate", g);
    if (cfg.weight_decay) g = b.add(g, b.mul(p, hyper(wd, p)));
    if (cfg.momentum) {
      Value buf = cfg.first_step
                      ? g
                      : b.add(b.mul(convert(b, bufs[i], ct), hyper(momentum, g)), b.mul(g, hyper(grad_weight, g)));
      out_buf.push_back(result(b, amp, buf, bufs[i]));
      g = cfg.nesterov ? b.add(g, b.mul(buf, hyper(momentum, buf))) : buf;
    }
    out_p.push_back(result(b, amp, b.add(p, b.mul(g, hyper(neg_lr, g))), params[i]));
  }
  std::vector<Value> out = out_p;
  for (auto* v : {&out_buf, &out_g}) out.insert(out.end(), v->begin(), v->end());
  return out;
}

}  // namespace ops
