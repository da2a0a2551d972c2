// Scan lowerings: see scan.h. Both scans are Hillis-Steele: after the step
// with shift k, each element combines the 2k elements ending at it; log2(n)
// elementwise steps, no serial loop.
#include "ops/scan/scan.h"

#include <limits>
#include <stdexcept>

#include "ops/common/lowering.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduction/reduction.h"

namespace ops {

using shlo::Cmp;
using shlo::Shape;
using shlo::Type;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Value combine(Builder& b, Scan kind, Value x, Value y) {
  switch (kind) {
    case Scan::Sum:
      return b.add(x, y);
    case Scan::Prod:
      return b.mul(x, y);
    case Scan::LogAddExp: {
      // x holds the earlier elements: PyTorch combines (element, running
      // value) with the binary op's rule. Its tree order can differ from
      // the CPU's one element after another where a partial result has a
      // NaN part (two +inf real parts): the CPU may still reach (inf, NaN)
      // there where this gives (NaN, NaN).
      if (shlo::is_complex(x.dtype())) return binary(b, Binary::Logaddexp, y, x);
      Value hi = max_nan(b, x, y, true), lo = max_nan(b, x, y, false);
      Value r = b.add(hi, b.unary("log_plus_one", b.unary("exponential", b.sub(lo, hi))));
      // Equal infinities (the -inf identity included) stay themselves.
      Value inf = b.constant(x.dtype(), kInf, x.shape());
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
  // x converted to `out` first (PyTorch rounds the input to the result
  // dtype), then to the accumulation dtype.
  Value v = convert(b, convert(b, x, out), acc_type(out));
  Shape shape = v.shape();
  int64_t n = shape[dim];
  double identity = kind == Scan::Sum ? 0 : kind == Scan::Prod ? 1 : -kInf;
  Value pad_value = shlo::is_complex(v.dtype())
                        ? make_complex(b, b.constant(real_of(v.dtype()), identity), b.constant(real_of(v.dtype()), 0))
                        : b.constant(v.dtype(), identity);
  int64_t rank = v.rank();
  for (int64_t k = 1; k < n; k *= 2) {
    Shape start(rank, 0), limit(shape), strides(rank, 1), lo(rank, 0), hi(rank, 0), interior(rank, 0);
    limit[dim] = n - k;
    lo[dim] = k;
    Value shifted = b.pad(b.slice(v, start, limit, strides), pad_value, lo, hi, interior);
    v = combine(b, kind, shifted, v);
  }
  return b.reshape(convert(b, v, out), orig);
}

std::pair<Value, Value> cum_extreme(Builder& b, Value x, int64_t dim, bool is_max) {
  Shape orig = x.shape();
  if (x.rank() == 0) x = b.reshape(x, {1});
  Shape shape = x.shape();
  int64_t n = shape[dim], rank = x.rank();
  Value v = x, idx = b.iota(Type{DType::S64, shape}, dim);
  bool fl = shlo::is_float(x.dtype());
  Value pad_v = is_max ? b.lowest(x.dtype()) : b.highest(x.dtype()), pad_i = b.constant(DType::S64, -1);
  // Over (value, index) pairs; the later element wins ties and NaN, which
  // makes the combine associative.
  for (int64_t k = 1; k < n; k *= 2) {
    Shape start(rank, 0), limit(shape), strides(rank, 1), lo(rank, 0), hi(rank, 0), interior(rank, 0);
    limit[dim] = n - k;
    lo[dim] = k;
    Value ev = b.pad(b.slice(v, start, limit, strides), pad_v, lo, hi, interior);
    Value ei = b.pad(b.slice(idx, start, limit, strides), pad_i, lo, hi, interior);
    Value later = b.compare(is_max ? Cmp::GE : Cmp::LE, v, ev);
    if (fl) later = logical_or(b, is_nan(b, v), logical_and(b, logical_not(b, is_nan(b, ev)), later));
    v = b.select(later, v, ev);
    idx = b.select(later, idx, ei);
  }
  return {b.reshape(v, orig), b.reshape(idx, orig)};
}

}  // namespace ops
