// Pooling lowerings (see pooling.h): every window is gathered once per
// spatial dim (static index tables), masked, and reduced, which covers
// strides, padding, dilation, ceil_mode and adaptive windows; and max_unpool.
#include "ops/pooling/pooling.h"

#include <algorithm>
#include <limits>

#include "ops/common/lowering.h"
#include "ops/elementwise/elementwise.h"
#include "ops/indexing/indexing.h"
#include "ops/reduction/reduction.h"

namespace ops {

using shlo::Cmp;
using shlo::DType;
using shlo::Shape;
using shlo::Type;

Windows pool_windows(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, int64_t d, bool count_include_pad) {
  Windows w{in, out, k, {}, {}};
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t j = 0; j < k; ++j) {
      int64_t pos = o * s - p + j * d;
      w.raw.push_back(pos >= 0 && pos < in ? pos : -1);
    }
    int64_t start = o * s - p, end = std::min(start + k, in + p);
    int64_t extent = end - start;
    if (!count_include_pad) extent = std::min(end, in) - std::max<int64_t>(start, 0);
    w.divisor.push_back(extent);
  }
  return w;
}

Windows adaptive_windows(int64_t in, int64_t out) {
  Windows w{in, out, 0, {}, {}};
  std::vector<std::pair<int64_t, int64_t>> se;
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = (o * in) / out, end = ((o + 1) * in + out - 1) / out;
    se.push_back({start, end});
    w.len = std::max(w.len, end - start);
    w.divisor.push_back(end - start);
  }
  for (auto [start, end] : se)
    for (int64_t j = 0; j < w.len; ++j) w.raw.push_back(start + j < end ? start + j : -1);
  return w;
}

namespace {

Value s64_splat(Builder& b, double v, const Shape& s) { return b.constant(DType::S64, v, s); }

// The gathered windows [B, C, o1, L1, o2, L2, ...], each window's validity
// mask and flat plane index (both broadcast to that shape).
struct Gathered {
  Value x, valid, flat;
};

Gathered gather_windows(Builder& b, Value x, const std::vector<Windows>& ws) {
  int64_t n = static_cast<int64_t>(ws.size());
  Shape full{x.shape()[0], x.shape()[1]};
  for (const Windows& w : ws) {
    full.push_back(w.out);
    full.push_back(w.len);
  }
  Value g = x;
  Value valid = b.constant(DType::PRED, 1, full), flat = s64_splat(b, 0, full);
  int64_t stride = 1;
  for (int64_t i = n - 1; i >= 0; --i) {
    const Windows& w = ws[i];
    std::vector<int64_t> clamped(w.raw);
    for (int64_t& v : clamped) v = std::max<int64_t>(v, 0);
    int64_t axis = 2 + i;  // dims after i are still un-split: gather from the back
    Value idx = b.constant_i64(clamped);
    g = index_select(b, g, axis, idx);
    Shape split = g.shape();
    split[axis] = w.out;
    split.insert(split.begin() + axis + 1, w.len);
    g = b.reshape(g, split);
    Value raw = b.reshape(b.constant_i64(w.raw), {w.out, w.len});
    std::vector<int64_t> at{2 + 2 * i, 3 + 2 * i};
    valid = logical_and(b, valid, b.broadcast_in_dim(b.compare(Cmp::GE, raw, s64_splat(b, 0, raw.shape())), full, at));
    Value pos = b.reshape(b.constant_i64(clamped), {w.out, w.len});
    flat =
        b.add(flat, b.broadcast_in_dim(b.mul(pos, s64_splat(b, static_cast<double>(stride), pos.shape())), full, at));
    stride *= w.in;
  }
  return {g, valid, flat};
}

std::vector<int64_t> window_dims(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = 0; i < n; ++i) d.push_back(3 + 2 * i);
  return d;
}

// Each output's divisor as an acc-dtype value [B, C, *out].
Value divisors(Builder& b, const std::vector<Windows>& ws, const Shape& out, DType t, int64_t override_) {
  if (override_ != 0) return b.constant(t, static_cast<double>(override_), out);
  Value d = b.constant(t, 1, out);
  for (size_t i = 0; i < ws.size(); ++i) {
    Value f = b.convert(b.constant_i64(ws[i].divisor), t);
    d = b.mul(d, b.broadcast_in_dim(f, out, {static_cast<int64_t>(2 + i)}));
  }
  return d;
}

}  // namespace

std::pair<Value, Value> window_max(Builder& b, Value x, const std::vector<Windows>& ws) {
  Gathered g = gather_windows(b, x, ws);
  DType t = x.dtype();
  bool fl = shlo::is_float(t);
  Value lowest = b.lowest(t), none = b.constant(DType::S64, static_cast<double>(std::numeric_limits<int64_t>::max()));
  Shape full = g.x.shape();
  // Positions outside the input never win: the lowest value, the last index.
  Value v = b.select(g.valid, g.x, b.broadcast_in_dim(lowest, full, {}));
  Value i = b.select(g.valid, g.flat, b.broadcast_in_dim(none, full, {}));
  // A total order, so the reduction is order-free: NaN beats numbers (the
  // later NaN wins), larger values win, equal values keep the earlier index.
  auto r = b.reduce_multi({v, i}, {lowest, none}, window_dims(static_cast<int64_t>(ws.size())),
                          [fl](Builder& r, const std::vector<Value>& a) {
                            Value av = a[0], ai = a[1], bv = a[2], bi = a[3];
                            Value greater = r.compare(Cmp::GT, bv, av);
                            Value tie = logical_and(r, r.compare(Cmp::EQ, bv, av), r.compare(Cmp::LT, bi, ai));
                            Value pick_b = logical_or(r, greater, tie);
                            if (fl) {
                              Value an = is_nan(r, av), bn = is_nan(r, bv);
                              Value both = logical_and(r, an, bn);
                              Value later = r.compare(Cmp::GT, bi, ai);
                              Value not_an = logical_not(r, an);
                              // both NaN: later index; only b NaN: b; only a NaN: a; else numbers.
                              pick_b = r.select(both, later, r.select(bn, bn, logical_and(r, not_an, pick_b)));
                            }
                            return std::vector<Value>{r.select(pick_b, bv, av), r.select(pick_b, bi, ai)};
                          });
  return {r[0], r[1]};
}

Value window_avg(Builder& b, Value x, const std::vector<Windows>& ws, int64_t divisor_override) {
  DType t = x.dtype(), acc = acc_type(t);
  Gathered g = gather_windows(b, b.convert(x, acc), ws);
  Value v = b.select(g.valid, g.x, b.constant(acc, 0, g.x.shape()));
  Value sum = b.reduce(v, b.zero(acc), window_dims(static_cast<int64_t>(ws.size())), "add");
  return b.convert(b.div(sum, divisors(b, ws, sum.shape(), acc, divisor_override)), t);
}

Value window_avg_backward(Builder& b, Value grad, const std::vector<Windows>& ws, int64_t divisor_override) {
  DType t = grad.dtype(), acc = acc_type(t);
  int64_t n = static_cast<int64_t>(ws.size());
  Value g = b.convert(grad, acc);
  g = b.div(g, divisors(b, ws, g.shape(), acc, divisor_override));
  Shape full{g.shape()[0], g.shape()[1]};
  std::vector<int64_t> bdims{0, 1};
  for (int64_t i = 0; i < n; ++i) {
    full.push_back(ws[i].out);
    full.push_back(ws[i].len);
    bdims.push_back(2 + 2 * i);
  }
  Value spread = b.broadcast_in_dim(g, full, bdims);
  // Positions outside the input take nothing (select, not multiply: NaN-safe).
  Value valid = b.constant(DType::PRED, 1, full);
  for (int64_t i = 0; i < n; ++i) {
    Value raw = b.reshape(b.constant_i64(ws[i].raw), {ws[i].out, ws[i].len});
    valid = logical_and(
        b, valid,
        b.broadcast_in_dim(b.compare(Cmp::GE, raw, s64_splat(b, 0, raw.shape())), full, {2 + 2 * i, 3 + 2 * i}));
  }
  Value r = b.select(valid, spread, b.constant(acc, 0, full));
  // Scatter the windows back, last spatial dim first.
  for (int64_t i = n - 1; i >= 0; --i) {
    const Windows& w = ws[i];
    std::vector<int64_t> clamped(w.raw);
    for (int64_t& v : clamped) v = std::max<int64_t>(v, 0);
    int64_t axis = 2 + 2 * i;
    Shape merged = r.shape();
    merged[axis] = w.out * w.len;
    merged.erase(merged.begin() + axis + 1);
    r = b.reshape(r, merged);
    Shape target = merged;
    target[axis] = w.in;
    r = index_scatter(b, b.constant(acc, 0, target), axis, b.constant_i64(clamped), r, Combine::Add, false);
  }
  return b.convert(r, t);
}

Value plane_scatter_add(Builder& b, Value grad, Value idx, const Shape& in_spatial) {
  DType t = grad.dtype(), acc = acc_type(t);
  int64_t rows = grad.shape()[0] * grad.shape()[1];
  int64_t p = rows ? shlo::numel(grad.shape()) / rows : 0, q = shlo::numel(in_spatial);
  Shape out{grad.shape()[0], grad.shape()[1]};
  out.insert(out.end(), in_spatial.begin(), in_spatial.end());
  if (rows * q == 0 || rows * p == 0) return b.constant(t, 0, out);
  Value local = b.convert(b.reshape(idx, {rows, p}), DType::S64);
  Value plane = b.mul(b.iota(Type{DType::S64, {rows, p}}, 0), s64_splat(b, static_cast<double>(q), {rows, p}));
  Value global = b.reshape(b.add(local, plane), {rows * p, 1});
  Value base = b.constant(acc, 0, {rows * q});
  Value r = b.scatter(base, global, b.reshape(b.convert(grad, acc), {rows * p}), {}, {0}, {0}, 1, "add");
  return b.convert(b.reshape(r, out), t);
}

Value max_unpool(Builder& b, Value x, Value idx, const Shape& out_spatial) {
  int64_t rows = x.shape()[0] * x.shape()[1];
  int64_t p = shlo::numel(x.shape()) / std::max<int64_t>(rows, 1), q = shlo::numel(out_spatial);
  Shape out{x.shape()[0], x.shape()[1]};
  out.insert(out.end(), out_spatial.begin(), out_spatial.end());
  if (rows * q == 0) return b.constant(x.dtype(), 0, out);
  Value base = b.constant(x.dtype(), 0, {rows * q});
  if (rows * p == 0) return b.reshape(base, out);
  // Each plane's flat index, offset by its plane: one 1-D scatter.
  Value local = b.convert(b.reshape(idx, {rows, p}), DType::S64);
  Value plane =
      b.mul(b.iota(Type{DType::S64, {rows, p}}, 0), b.constant(DType::S64, static_cast<double>(q), {rows, p}));
  Value global = b.reshape(b.add(local, plane), {rows * p, 1});
  Value r = b.scatter(base, global, b.reshape(x, {rows * p}), {}, {0}, {0}, 1, "");
  return b.reshape(r, out);
}

}  // namespace ops
