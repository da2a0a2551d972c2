// Lowerings of the coverage branch (see coverage.h).
#include "ops/coverage.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ops/elementwise/elementwise.h"
#include "ops/indexing/indexing.h"
#include "ops/reduction/reduction.h"

namespace ops {

using shlo::Cmp;
using shlo::DType;
using shlo::Shape;
using shlo::Type;

namespace {

DType real_of(DType t) { return t == DType::C128 ? DType::F64 : DType::F32; }
DType complex_of(DType t) { return t == DType::F64 || t == DType::C128 ? DType::C128 : DType::C64; }

// Moves `dims` (in order) to the end; returns the permutation used.
std::vector<int64_t> dims_last(int64_t rank, const std::vector<int64_t>& dims) {
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
  perm.insert(perm.end(), dims.begin(), dims.end());
  return perm;
}

std::vector<int64_t> inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

bool identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

Value transpose_if(Builder& b, Value x, const std::vector<int64_t>& perm) {
  return identity(perm) ? x : b.transpose(x, perm);
}

// One stablehlo.fft over the trailing len(lengths) dims (1 to 3 of them).
Value xla_fft(Builder& b, Value x, const char* kind, const std::vector<int64_t>& lengths, DType out_dtype) {
  Shape out = x.shape();
  std::string k(kind);
  if (k == "RFFT") out.back() = lengths.back() / 2 + 1;
  if (k == "IRFFT") out.back() = lengths.back();
  return b.op1("stablehlo.fft", {x}, Type{out_dtype, out},
               std::string("fft_type = #stablehlo<fft_type ") + kind + ">, fft_length = " + shlo::i64_array(lengths));
}

// Complex FFT / IFFT of x over dims, in groups of at most three (XLA's limit).
Value c2c_raw(Builder& b, Value x, const std::vector<int64_t>& dims, bool forward) {
  for (size_t start = 0; start < dims.size(); start += 3) {
    std::vector<int64_t> group(dims.begin() + start, dims.begin() + std::min(dims.size(), start + 3));
    std::vector<int64_t> perm = dims_last(x.rank(), group);
    Value t = transpose_if(b, x, perm);
    std::vector<int64_t> lengths(t.shape().end() - group.size(), t.shape().end());
    t = xla_fft(b, t, forward ? "FFT" : "IFFT", lengths, x.dtype());
    x = transpose_if(b, t, inverse(perm));
  }
  return x;
}

// Multiplies a complex or real x by a real factor.
Value scale(Builder& b, Value x, double factor) {
  if (factor == 1.0) return x;
  Value f = b.constant(shlo::is_complex(x.dtype()) ? real_of(x.dtype()) : x.dtype(), factor, x.shape());
  if (shlo::is_complex(x.dtype())) f = b.convert(f, x.dtype());
  return b.mul(x, f);
}

// The factor PyTorch's normalization asks for, times n when XLA's inverse
// transform has already divided by n.
double norm_factor(int64_t normalization, double n, bool xla_inverse) {
  double f = normalization == 1 ? 1.0 / std::sqrt(n) : normalization == 2 ? 1.0 / n : 1.0;
  return xla_inverse ? f * n : f;
}

double signal_size(const Shape& shape, const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(shape[d]);
  return n;
}

}  // namespace

Value fft_c2c(Builder& b, Value x, const std::vector<int64_t>& dims, int64_t normalization, bool forward) {
  if (dims.empty() || shlo::numel(x.shape()) == 0) return x;
  Value y = c2c_raw(b, x, dims, forward);
  return scale(b, y, norm_factor(normalization, signal_size(x.shape(), dims), !forward));
}

Value fft_r2c(Builder& b, Value x, const std::vector<int64_t>& dims, int64_t normalization, bool onesided) {
  DType c = complex_of(x.dtype());
  double n = signal_size(x.shape(), dims);
  if (!onesided) return scale(b, c2c_raw(b, b.convert(x, c), dims, true), norm_factor(normalization, n, false));
  // RFFT over the last dim, then complex FFTs over the others.
  int64_t last = dims.back();
  std::vector<int64_t> perm = dims_last(x.rank(), {last});
  Value t = transpose_if(b, x, perm);
  t = xla_fft(b, t, "RFFT", {t.shape().back()}, c);
  Value y = transpose_if(b, t, inverse(perm));
  std::vector<int64_t> rest(dims.begin(), dims.end() - 1);
  if (!rest.empty()) y = c2c_raw(b, y, rest, true);
  return scale(b, y, norm_factor(normalization, n, false));
}

Value fft_c2r(Builder& b, Value x, const std::vector<int64_t>& dims, int64_t normalization, int64_t last_dim_size) {
  std::vector<int64_t> rest(dims.begin(), dims.end() - 1);
  Value y = rest.empty() ? x : c2c_raw(b, x, rest, false);
  int64_t last = dims.back();
  // IRFFT reads last_dim_size / 2 + 1 inputs along the last dim.
  int64_t need = last_dim_size / 2 + 1;
  if (y.shape()[last] != need) {
    Shape lo(y.rank(), 0), hi = y.shape();
    if (hi[last] > need) {
      hi[last] = need;
      y = b.slice(y, lo, hi, Shape(y.rank(), 1));
    } else {
      Shape pad_hi(y.rank(), 0);
      pad_hi[last] = need - y.shape()[last];
      y = b.pad(y, b.zero(y.dtype()), Shape(y.rank(), 0), pad_hi, Shape(y.rank(), 0));
    }
  }
  std::vector<int64_t> perm = dims_last(y.rank(), {last});
  Value t = transpose_if(b, y, perm);
  t = xla_fft(b, t, "IRFFT", {last_dim_size}, real_of(x.dtype()));
  Value r = transpose_if(b, t, inverse(perm));
  Shape out_shape = r.shape();
  return scale(b, r, norm_factor(normalization, signal_size(out_shape, dims), true));
}

// ---------------------------------------------------------------- helpers

namespace {

Value kconst(Builder& b, double v, const Value& like) { return b.constant(like.dtype(), v, like.shape()); }
Value is_nan(Builder& b, Value x) { return b.compare(Cmp::NE, x, x); }
Value lnot(Builder& b, Value p) { return b.op1("stablehlo.not", {p}, p.type); }
Value land(Builder& b, Value x, Value y) { return b.op1("stablehlo.and", {x, y}, x.type); }
Value lor(Builder& b, Value x, Value y) { return b.op1("stablehlo.or", {x, y}, x.type); }
bool is_half(DType t) { return t == DType::F16 || t == DType::BF16; }
// Half-precision math runs in f32 and rounds once at the end (PyTorch's opmath).
Value up(Builder& b, Value x) { return is_half(x.dtype()) ? b.convert(x, DType::F32) : x; }
Value down(Builder& b, Value x, DType t) { return x.dtype() != t ? b.convert(x, t) : x; }
std::vector<int64_t> all_dims(int64_t rank) {
  std::vector<int64_t> d(rank);
  std::iota(d.begin(), d.end(), 0);
  return d;
}
}  // namespace

// ---------------------------------------------------------------- reductions

Value nansum(Builder& b, Value x, const std::vector<int64_t>& dims, bool keepdim, DType out) {
  if (shlo::is_float(x.dtype())) x = b.select(is_nan(b, x), kconst(b, 0, x), x);
  return reduce(b, x, Reduce::Sum, dims, keepdim, out);
}

Value all_equal(Builder& b, Value x, Value y) {
  Value eq = b.compare(Cmp::EQ, x, y);
  return b.reduce(eq, b.constant(DType::PRED, 1), all_dims(eq.rank()), "and");
}

Value trace(Builder& b, Value x, DType out) {
  Type it{DType::S64, x.shape()};
  Value diag = b.compare(Cmp::EQ, b.iota(it, 0), b.iota(it, 1));
  return reduce(b, b.select(diag, x, kconst(b, 0, x)), Reduce::Sum, {0, 1}, false, out);
}

std::pair<Value, Value> cum_extreme(Builder& b, Value x, int64_t dim, bool is_max) {
  Shape orig = x.shape();
  if (x.rank() == 0) x = b.reshape(x, {1});
  Shape shape = x.shape();
  int64_t n = shape[dim], rank = x.rank();
  Value v = x, idx = b.iota(Type{DType::S64, shape}, dim);
  bool fl = shlo::is_float(x.dtype());
  Value pad_v = is_max ? b.lowest(x.dtype()) : b.highest(x.dtype()), pad_i = b.constant(DType::S64, -1);
  // Hillis-Steele over (value, index) pairs; the later element wins ties
  // and NaN, which makes the combine associative.
  for (int64_t k = 1; k < n; k *= 2) {
    Shape start(rank, 0), limit(shape), strides(rank, 1), lo(rank, 0), hi(rank, 0), interior(rank, 0);
    limit[dim] = n - k;
    lo[dim] = k;
    Value ev = b.pad(b.slice(v, start, limit, strides), pad_v, lo, hi, interior);
    Value ei = b.pad(b.slice(idx, start, limit, strides), pad_i, lo, hi, interior);
    Value later = b.compare(is_max ? Cmp::GE : Cmp::LE, v, ev);
    if (fl) later = lor(b, is_nan(b, v), land(b, lnot(b, is_nan(b, ev)), later));
    v = b.select(later, v, ev);
    idx = b.select(later, idx, ei);
  }
  return {b.reshape(v, orig), b.reshape(idx, orig)};
}

// ---------------------------------------------------------------- index_reduce

Value index_reduce(Builder& b, Value x, int64_t dim, Value idx, Value src, const std::string& reduce,
                   bool include_self) {
  DType t = x.dtype();
  Combine c = reduce == "prod"   ? Combine::Mul
              : reduce == "amax" ? Combine::Max
              : reduce == "amin" ? Combine::Min
                                 : Combine::Add;
  Value base = x;
  if (!include_self) {
    // The indexed slots restart from the reduction's identity.
    Value init = c == Combine::Mul   ? b.constant(t, 1)
                 : c == Combine::Max ? b.lowest(t)
                 : c == Combine::Min ? b.highest(t)
                                     : b.zero(t);
    base = index_scatter(b, x, dim, idx, b.broadcast_in_dim(init, src.shape(), {}), Combine::Replace, false);
  }
  Value r = index_scatter(b, base, dim, idx, src, c, false);
  if (reduce != "mean") return r;
  Value cnt = index_scatter(b, b.constant(t, include_self ? 1 : 0, x.shape()), dim, idx, b.constant(t, 1, src.shape()),
                            Combine::Add, false);
  cnt = b.select(b.compare(Cmp::EQ, cnt, kconst(b, 0, cnt)), kconst(b, 1, cnt), cnt);
  return shlo::is_float(t) ? b.div(r, cnt) : div(b, r, cnt, "floor");
}

// ---------------------------------------------------------------- vectors

Value cross(Builder& b, Value x, Value y, int64_t dim) {
  auto part = [&](Value v, int64_t i) {
    Shape lo(v.rank(), 0), hi = v.shape();
    lo[dim] = i;
    hi[dim] = i + 1;
    return b.slice(v, lo, hi, Shape(v.rank(), 1));
  };
  Value x0 = part(x, 0), x1 = part(x, 1), x2 = part(x, 2), y0 = part(y, 0), y1 = part(y, 1), y2 = part(y, 2);
  return b.concatenate(
      {b.sub(b.mul(x1, y2), b.mul(x2, y1)), b.sub(b.mul(x2, y0), b.mul(x0, y2)), b.sub(b.mul(x0, y1), b.mul(x1, y0))},
      dim);
}

Value renorm(Builder& b, Value x, Value p, int64_t dim, Value maxnorm, int p_kind) {
  DType t = x.dtype(), acc = acc_type(t);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (d != dim) dims.push_back(d);
  static const NormOrd kinds[] = {NormOrd::General, NormOrd::Zero, NormOrd::One,
                                  NormOrd::Two,     NormOrd::Inf,  NormOrd::NegInf};
  Value norm = vector_norm(b, x, kinds[p_kind], p, dims, true, acc);
  Value mx = b.broadcast_in_dim(b.convert(maxnorm, acc), norm.shape(), {});
  Value factor =
      b.select(b.compare(Cmp::GT, norm, mx), b.div(mx, b.add(norm, kconst(b, 1e-7, norm))), kconst(b, 1, norm));
  // PyTorch keeps the factor in x's dtype before multiplying.
  factor = up(b, b.convert(factor, t));
  Value r = b.mul(up(b, x), b.broadcast_in_dim(b.reshape(factor, {x.shape()[dim]}), up(b, x).shape(), {dim}));
  return down(b, r, t);
}

// ---------------------------------------------------------------- searching and counting

Value search_sorted(Builder& b, Value boundaries, Value values, bool right, DType out) {
  int64_t r = values.rank(), m = boundaries.shape().back();
  Shape cs = values.shape();
  cs.push_back(m);
  Value v = b.broadcast_in_dim(values, cs, all_dims(r));
  std::vector<int64_t> bdims;
  if (boundaries.rank() == 1) {
    bdims = {r};
  } else {  // leading dims shared with values; skip values' last dim
    for (int64_t d = 0; d + 1 < r; ++d) bdims.push_back(d);
    bdims.push_back(r);
  }
  Value bd = b.broadcast_in_dim(boundaries, cs, bdims);
  Value before = lnot(b, b.compare(right ? Cmp::GT : Cmp::GE, bd, v));
  return b.reduce(b.convert(before, out), b.zero(out), {r}, "add");
}

Value bincount(Builder& b, Value x, std::optional<Value> weights, int64_t length, DType out) {
  int64_t n = shlo::numel(x.shape());
  Value xi = b.convert(b.reshape(x, {n}), DType::S64);
  Value onehot = b.compare(Cmp::EQ, b.broadcast_in_dim(xi, {n, length}, {0}), b.iota(Type{DType::S64, {n, length}}, 1));
  Value contrib;
  if (weights) {
    Value w = b.broadcast_in_dim(b.convert(b.reshape(*weights, {n}), out), {n, length}, {0});
    contrib = b.select(onehot, w, b.constant(out, 0, {n, length}));
  } else {
    contrib = b.convert(onehot, out);
  }
  return b.reduce(contrib, b.zero(out), {0}, "add");
}

// ---------------------------------------------------------------- max_unpool

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

// ---------------------------------------------------------------- losses

namespace {

Value reduce_loss(Builder& b, Value l, int64_t reduction, DType t) {
  l = down(b, l, t);
  if (reduction == 0) return l;
  if (reduction == 1) return mean(b, l, all_dims(l.rank()), false, t);
  return reduce(b, l, Reduce::Sum, all_dims(l.rank()), false, t);
}

// 1 / numel for a mean reduction, else 1 (the backward's scale).
double loss_norm(const Value& x, int64_t reduction) {
  return reduction == 1 ? 1.0 / static_cast<double>(std::max<int64_t>(shlo::numel(x.shape()), 1)) : 1.0;
}

}  // namespace

Value robust_loss(Builder& b, Value x, Value y, int kind, double param, int64_t reduction) {
  DType t = x.dtype();
  Value xf = up(b, x), yf = up(b, y);
  Value z = b.unary("abs", b.sub(xf, yf));
  Value pr = kconst(b, param, z), half = kconst(b, 0.5, z);
  Value small = kind == 0 ? b.mul(b.mul(half, z), z) : b.div(b.mul(b.mul(half, z), z), pr);
  Value large = kind == 0 ? b.mul(pr, b.sub(z, b.mul(half, pr))) : b.sub(z, b.mul(half, pr));
  Value l = b.select(b.compare(Cmp::LT, z, pr), small, large);
  return reduce_loss(b, l, reduction, t);
}

Value robust_loss_backward(Builder& b, Value grad, Value x, Value y, int kind, double param, int64_t reduction) {
  DType t = x.dtype();
  Value xf = up(b, x), yf = up(b, y);
  Value g = b.broadcast_to(up(b, grad), xf.shape());
  Value d = b.sub(xf, yf);
  Value nm = kconst(b, loss_norm(x, reduction), d), pr = kconst(b, param, d);
  Value edge = kind == 0 ? b.mul(b.mul(nm, g), pr) : b.mul(nm, g);
  Value mid = kind == 0 ? b.mul(b.mul(nm, d), g) : b.div(b.mul(b.mul(nm, d), g), pr);
  Value r = b.select(b.compare(Cmp::LE, d, b.unary("negate", pr)), b.unary("negate", edge),
                     b.select(b.compare(Cmp::GE, d, pr), edge, mid));
  return down(b, r, t);
}

Value binary_cross_entropy(Builder& b, Value x, Value y, std::optional<Value> w, int64_t reduction) {
  DType t = x.dtype();
  Value xf = up(b, x), yf = up(b, y);
  Value floor = kconst(b, -100, xf), one = kconst(b, 1, xf);
  Value log_x = b.max(b.unary("log", xf), floor);
  Value log_1mx = b.max(b.unary("log_plus_one", b.unary("negate", xf)), floor);
  Value l = b.sub(b.mul(b.sub(yf, one), log_1mx), b.mul(yf, log_x));
  if (w) l = b.mul(l, up(b, b.broadcast_to(*w, x.shape())));
  return reduce_loss(b, l, reduction, t);
}

Value binary_cross_entropy_backward(Builder& b, Value grad, Value x, Value y, std::optional<Value> w,
                                    int64_t reduction) {
  DType t = x.dtype();
  Value xf = up(b, x), yf = up(b, y);
  Value g = b.broadcast_to(up(b, grad), xf.shape());
  Value one = kconst(b, 1, xf);
  Value denom = b.max(b.mul(b.sub(one, xf), xf), kconst(b, 1e-12, xf));
  Value r = b.div(b.mul(g, b.sub(xf, yf)), denom);
  if (w) r = b.mul(r, up(b, b.broadcast_to(*w, x.shape())));
  r = b.mul(r, kconst(b, loss_norm(x, reduction), r));
  return down(b, r, t);
}

}  // namespace ops
