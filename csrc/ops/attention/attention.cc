#include "ops/attention/attention.h"

#include <limits>
#include <stdexcept>

#include "ops/elementwise/elementwise.h"
#include "ops/linalg/linalg.h"

namespace ops {

namespace {

using shlo::DType;
using shlo::Shape;

// Everything is computed on 5-D views [N, Hkv, G, L, S|E]: N folds the batch
// dims, G the query heads sharing one kv head, so GQA needs no repeat.
struct Dims {
  Shape batch;  // q's leading dims
  int64_t n = 1, hq = 0, hkv = 0, g = 0, l = 0, s = 0, e = 0, ev = 0;
  DType acc = DType::F32;

  Shape q5() const { return {n, hkv, g, l, e}; }
  Shape scores5() const { return {n, hkv, g, l, s}; }
  Shape rows5() const { return {n, hkv, g, l}; }
  Shape out5() const { return {n, hkv, g, l, ev}; }
  Shape kv4(int64_t last) const { return {n, hkv, s, last}; }
  Shape with_batch(std::initializer_list<int64_t> tail) const {
    Shape r = batch;
    r.insert(r.end(), tail);
    return r;
  }
  Shape scores_full() const { return with_batch({hq, l, s}); }
};

Dims dims_of(const Value& q, const Value& k, const Value& v) {
  if (q.rank() < 3 || k.rank() != q.rank() || v.rank() != q.rank())
    throw std::invalid_argument("attention: q, k, v must have the same rank >= 3");
  Dims d;
  int64_t r = q.rank();
  d.batch.assign(q.shape().begin(), q.shape().end() - 3);
  for (int64_t x : d.batch) d.n *= x;
  d.hq = q.shape()[r - 3];
  d.hkv = k.shape()[r - 3];
  d.l = q.shape()[r - 2];
  d.e = q.shape()[r - 1];
  d.s = k.shape()[r - 2];
  d.ev = v.shape()[r - 1];
  if (d.hkv == 0 || d.hq % d.hkv != 0)
    throw std::invalid_argument("attention: query heads must be a multiple of key/value heads");
  d.g = d.hq / d.hkv;
  d.acc = accumulate_dtype(q.dtype());
  return d;
}

Value bcast_rows(Builder& b, Value rows, const Dims& d) { return b.broadcast_in_dim(rows, d.scores5(), {0, 1, 2, 3}); }

// scale * q k^T with the mask and causal structure applied, in d.acc.
Value masked_scores(Builder& b, Value q5, Value k4, const std::optional<Value>& mask, Value scale,
                    const AttentionSpec& spec, const Dims& d) {
  // A dot reads its right operand as [contracted, free]: k as stored
  // ([.., s, e]) would be transposed whole for q k^T, which in decoding
  // (few query rows, a long cache) costs a pass over the cache per layer and
  // step. There k is the left operand and the small q and scores move.
  Value s;
  if (d.g * d.l * (d.e + d.s) < d.s * d.e)
    s = b.transpose(contract(b, k4, q5, {0, 1}, {0, 1}, {3}, {4}), {0, 1, 3, 4, 2});
  else
    s = contract(b, q5, k4, {0, 1}, {0, 1}, {4}, {3});
  s = b.mul(s, splat(b, scale, s));
  Value neg_inf = b.constant(d.acc, -std::numeric_limits<double>::infinity(), d.scores5());
  if (mask) {
    Value m = b.reshape(b.broadcast_to(*mask, d.scores_full()), d.scores5());
    s = m.dtype() == DType::PRED ? b.select(m, s, neg_inf) : b.add(s, convert(b, m, d.acc));
  }
  if (spec.causal) {
    shlo::Type it{DType::S64, d.scores5()};
    Value keep = b.compare(shlo::Cmp::LE, b.iota(it, 4), b.iota(it, 3));
    s = b.select(keep, s, neg_inf);
  }
  return s;
}

// A row whose every score is -inf has max -inf: shift by 0 instead so exp
// gives zeros (no NaN), matching PyTorch's safe softmax.
Value finite_or_zero(Builder& b, Value x) {
  Value ninf = b.constant(x.dtype(), -std::numeric_limits<double>::infinity(), x.shape());
  return b.select(b.compare(shlo::Cmp::EQ, x, ninf), b.constant(x.dtype(), 0, x.shape()), x);
}

struct Softmax {
  Value p;    // probabilities [n, hkv, g, l, s]
  Value lse;  // log-sum-exp of the rows [n, hkv, g, l]
};

Softmax softmax_rows(Builder& b, Value s, const Dims& d) {
  Value m = finite_or_zero(b, b.reduce(s, b.lowest(d.acc), {4}, "maximum"));
  Value e = b.unary("exponential", b.sub(s, bcast_rows(b, m, d)));
  Value sum = b.reduce(e, b.zero(d.acc), {4}, "add");
  Value zero = b.constant(d.acc, 0, d.rows5());
  Value denom = b.select(b.compare(shlo::Cmp::EQ, sum, zero), b.constant(d.acc, 1, d.rows5()), sum);
  return {b.div(e, bcast_rows(b, denom, d)), b.add(m, b.unary("log", sum))};
}

}  // namespace

std::vector<Value> attention_forward(Builder& b, Value q, Value k, Value v, std::optional<Value> mask, Value scale,
                                     const AttentionSpec& spec) {
  Dims d = dims_of(q, k, v);
  Value q5 = b.reshape(q, d.q5());
  Value k4 = b.reshape(k, d.kv4(d.e));
  Value v4 = b.reshape(v, d.kv4(d.ev));
  Softmax sm = softmax_rows(b, masked_scores(b, q5, k4, mask, scale, spec, d), d);
  // Probabilities meet v in v's dtype (as the CPU flash kernel does), summed in f32.
  Value out = contract(b, b.convert(sm.p, v.dtype()), v4, {0, 1}, {0, 1}, {4}, {2});
  out = b.reshape(b.convert(out, q.dtype()), d.with_batch({d.hq, d.l, d.ev}));
  Value lse = b.reshape(b.convert(sm.lse, DType::F32), d.with_batch({d.hq, d.l}));
  return {out, lse};
}

std::vector<Value> attention_backward(Builder& b, Value grad_out, Value q, Value k, Value v, std::optional<Value> mask,
                                      Value lse, Value scale, const AttentionSpec& spec,
                                      const std::array<bool, 4>& wanted) {
  Dims d = dims_of(q, k, v);
  Value q5 = b.reshape(q, d.q5());
  Value k4 = b.reshape(k, d.kv4(d.e));
  Value v4 = b.reshape(v, d.kv4(d.ev));
  Value go5 = b.reshape(grad_out, d.out5());
  Value s = masked_scores(b, q5, k4, mask, scale, spec, d);
  Value p;
  if (d.acc == DType::F64) {
    // The saved lse is f32: recompute it rather than lose f64 precision.
    p = softmax_rows(b, s, d).p;
  } else {
    Value rows = finite_or_zero(b, b.reshape(convert(b, lse, d.acc), d.rows5()));
    p = b.unary("exponential", b.sub(s, bcast_rows(b, rows, d)));
  }
  std::vector<Value> grads;
  if (wanted[2]) {
    // dV = P^T dO, summed over the query heads of each kv head.
    Value dv = contract(b, b.convert(p, v.dtype()), go5, {0, 1}, {0, 1}, {2, 3}, {2, 3});
    grads.push_back(b.reshape(b.convert(dv, v.dtype()), v.shape()));
  }
  if (!wanted[0] && !wanted[1] && !wanted[3]) return grads;
  // dS = P * (dP - rowsum(P * dP)), the softmax backward.
  Value dp = contract(b, go5, v4, {0, 1}, {0, 1}, {4}, {3});
  Value rowdot = b.reduce(b.mul(p, dp), b.zero(d.acc), {4}, "add");
  Value ds = b.mul(p, b.sub(dp, bcast_rows(b, rowdot, d)));
  std::vector<Value> front;
  Value ds_in = b.convert(ds, q.dtype());
  if (wanted[0]) {
    Value dq = contract(b, ds_in, k4, {0, 1}, {0, 1}, {4}, {2});
    front.push_back(b.reshape(b.convert(b.mul(dq, splat(b, scale, dq)), q.dtype()), q.shape()));
  }
  if (wanted[1]) {
    Value dk = contract(b, ds_in, q5, {0, 1}, {0, 1}, {2, 3}, {2, 3});
    front.push_back(b.reshape(b.convert(b.mul(dk, splat(b, scale, dk)), k.dtype()), k.shape()));
  }
  grads.insert(grads.begin(), front.begin(), front.end());
  if (wanted[3]) {
    if (!mask || mask->dtype() == DType::PRED)
      throw std::invalid_argument("attention: no gradient for a missing or boolean mask");
    // The mask was broadcast to the scores: sum its gradient back.
    Shape full = d.scores_full();
    Value g = b.reshape(ds, full);
    int64_t lead = static_cast<int64_t>(full.size()) - mask->rank();
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < static_cast<int64_t>(full.size()); ++i)
      if (i < lead || (mask->shape()[i - lead] == 1 && full[i] != 1)) dims.push_back(i);
    if (!dims.empty()) g = b.reduce(g, b.zero(d.acc), dims, "add");
    grads.push_back(b.reshape(b.convert(g, mask->dtype()), mask->shape()));
  }
  return grads;
}

}  // namespace ops
