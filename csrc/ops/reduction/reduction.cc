// Reduction lowerings: see reduction.h.
#include "ops/reduction/reduction.h"

#include <cmath>
#include <limits>

#include "ops/common/lowering.h"
#include "ops/elementwise/elementwise.h"

namespace ops {

using shlo::Cmp;
using shlo::Shape;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Value nonzero(Builder& b, Value x) {
  if (x.dtype() == DType::PRED) return x;
  return b.compare(Cmp::NE, x, b.constant(x.dtype(), 0, x.shape()));
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

Value reduce_extreme(Builder& b, Value x, const Dims& dims, bool is_max) {
  Value init = is_max ? b.lowest(x.dtype()) : b.highest(x.dtype());
  return b.reduce_multi({x}, {init}, dims, [is_max](Builder& b, const std::vector<Value>& a) {
    return std::vector<Value>{max_nan(b, a[0], a[1], is_max)};
  })[0];
}

Value sum_acc(Builder& b, Value x, const Dims& dims) { return reduce_plain(b, x, dims, "add", 0); }

}  // namespace

Value max_nan(Builder& b, Value x, Value y, bool is_max) {
  Value m = is_max ? b.max(x, y) : b.min(x, y);
  if (!shlo::is_float(x.dtype())) return m;
  return b.select(is_nan(b, x), x, b.select(is_nan(b, y), y, m));
}

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
  Value r = convert(b, b.div(s, b.constant(s.dtype(), static_cast<double>(count_of(in, dims)), s.shape())), out);
  return keepdim ? keep_dims(b, r, in, dims) : r;
}

std::pair<Value, Value> var_mean(Builder& b, Value x, const Dims& dims, bool keepdim, Value correction, bool take_sqrt,
                                 DType out) {
  if (shlo::is_complex(x.dtype())) {
    // |x - mean|^2 is the real part's squared deviation plus the imaginary
    // part's: a complex variance is the sum of its parts' (one correction),
    // real; the mean is complex, made of the parts' means.
    auto [vr, mr] = var_mean(b, real_part(b, x), dims, keepdim, correction, false, out);
    auto [vi, mi] = var_mean(b, imag_part(b, x), dims, keepdim, correction, false, out);
    Value v = b.add(vr, vi);
    if (take_sqrt) v = b.unary("sqrt", v);
    return {v, make_complex(b, mr, mi)};
  }
  Shape in = x.shape();
  Value v = to_acc(b, x, out);
  DType acc = v.dtype();
  double n = static_cast<double>(count_of(in, dims));
  Value s = sum_acc(b, v, dims);
  Value m = b.div(s, b.constant(acc, n, s.shape()));
  Value d = b.sub(v, expand_back(b, m, in, dims));
  Value ss = sum_acc(b, b.mul(d, d), dims);
  // dof = max(n - correction, 0), as PyTorch; dividing by 0 gives inf / nan.
  Value c = splat(b, b.convert(correction, acc), ss);
  Value dof = b.max(b.sub(b.constant(acc, n, ss.shape()), c), b.constant(acc, 0, ss.shape()));
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
  // Two single-operand reductions, not one over (value, index) pairs: XLA
  // vectorizes the former and runs the latter element by element (an
  // argmax over a [64, 32000] logits row block: 5.6 ms against about 1).
  // First the extreme (NaN wins), then the first index that holds it.
  Value m = reduce_extreme(b, v, {dim}, is_max);
  Value hit = b.compare(Cmp::EQ, v, expand_back(b, m, in, {dim}));
  if (shlo::is_float(v.dtype())) hit = logical_or(b, hit, is_nan(b, v));  // the max is NaN: the first NaN
  // Positions counted in 32 bits where they fit: half the bytes to select and reduce.
  const DType it = in[dim] < (int64_t{1} << 31) ? DType::S32 : DType::S64;
  Value past = b.constant(it, static_cast<double>(in[dim]), in);
  Value inds = b.convert(reduce_plain(b, b.select(hit, b.iota(shlo::Type{it, in}, dim), past), {dim}, "minimum",
                                      static_cast<double>(in[dim])),
                         DType::S64);
  Value vals = b.convert(m, orig);
  if (keepdim) {
    vals = keep_dims(b, vals, in, {dim});
    inds = keep_dims(b, inds, in, {dim});
  }
  return {vals, inds};
}

Value logsumexp(Builder& b, Value x, const Dims& dims, bool keepdim, DType out) {
  Shape in = x.shape();
  if (shlo::is_complex(x.dtype())) {
    // As PyTorch: shifted by the real parts' max (an infinite one by 0),
    // summed and logged in the complex dtype.
    Value m = reduce_extreme(b, real_part(b, x), dims, true);
    Value zero = b.constant(m.dtype(), 0, m.shape());
    m = b.select(b.compare(Cmp::EQ, b.unary("abs", m), b.constant(m.dtype(), kInf, m.shape())), zero, m);
    Value shift = make_complex(b, m, zero);
    Value s = sum_acc(b, b.unary("exponential", b.sub(x, expand_back(b, shift, in, dims))), dims);
    Value r = convert(b, b.add(b.unary("log", s), shift), out);
    return keepdim ? keep_dims(b, r, in, dims) : r;
  }
  Value v = to_acc(b, x, out);
  Value m = reduce_extreme(b, v, dims, true);
  // An infinite max (all -inf, or some +inf) would make x - max NaN.
  Value inf = b.constant(v.dtype(), kInf, m.shape());
  m = b.select(b.compare(Cmp::EQ, b.unary("abs", m), inf), b.constant(v.dtype(), 0, m.shape()), m);
  Value s = sum_acc(b, b.unary("exponential", b.sub(v, expand_back(b, m, in, dims))), dims);
  Value r = convert(b, b.add(b.unary("log", s), m), out);
  return keepdim ? keep_dims(b, r, in, dims) : r;
}

Value vector_norm(Builder& b, Value x, NormOrd ord, Value p, const Dims& dims, bool keepdim, DType out) {
  Shape in = x.shape();
  // A complex vector's norm is its moduli's.
  if (shlo::is_complex(x.dtype())) x = modulus(b, x);
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
      Value inv = b.div(b.constant(acc, 1, s.shape()), splat(b, b.convert(p, acc), s));
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

Value nansum(Builder& b, Value x, const Dims& dims, bool keepdim, DType out) {
  if (!shlo::is_float(x.dtype())) return reduce(b, x, Reduce::Sum, dims, keepdim, out);
  // A whole sum reads its input as one row before zeroing NaN: over many
  // dims, XLA:CPU's fused zero-and-sum added one element after another (7x
  // sum's error on 10^5 floats, against NumPy's pairwise sum).
  Shape in = x.shape();
  const bool whole = x.rank() > 1 && dims.size() == static_cast<size_t>(x.rank());
  if (whole) x = b.reshape(x, {shlo::numel(in)});
  x = b.select(is_nan(b, x), b.constant(x.dtype(), 0, x.shape()), x);
  if (!whole) return reduce(b, x, Reduce::Sum, dims, keepdim, out);
  Value r = reduce(b, x, Reduce::Sum, {0}, false, out);
  return keepdim ? keep_dims(b, r, in, dims) : r;
}

Value all_equal(Builder& b, Value x, Value y) {
  Value eq = b.compare(Cmp::EQ, x, y);
  return b.reduce(eq, b.constant(DType::PRED, 1), all_dims(eq.rank()), "and");
}

Value trace(Builder& b, Value x, DType out) {
  shlo::Type it{DType::S64, x.shape()};
  Value diag = b.compare(Cmp::EQ, b.iota(it, 0), b.iota(it, 1));
  return reduce(b, b.select(diag, x, b.constant(x.dtype(), 0, x.shape())), Reduce::Sum, {0, 1}, false, out);
}

Value renorm(Builder& b, Value x, Value p, int64_t dim, Value maxnorm, NormOrd ord) {
  DType t = x.dtype(), acc = acc_type(t);
  Dims dims;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (d != dim) dims.push_back(d);
  Value norm = vector_norm(b, x, ord, p, dims, true, acc);
  Value mx = b.broadcast_in_dim(b.convert(maxnorm, acc), norm.shape(), {});
  Value factor = b.select(b.compare(Cmp::GT, norm, mx), b.div(mx, b.add(norm, b.constant(acc, 1e-7, norm.shape()))),
                          b.constant(acc, 1, norm.shape()));
  // PyTorch keeps the factor in x's dtype before multiplying.
  factor = to_opmath(b, b.convert(factor, t));
  Value r =
      b.mul(to_opmath(b, x), b.broadcast_in_dim(b.reshape(factor, {x.shape()[dim]}), to_opmath(b, x).shape(), {dim}));
  return b.convert(r, t);
}

}  // namespace ops
