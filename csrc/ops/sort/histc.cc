// Lowering of torch.histc (see histc.h).
#include "ops/sort/histc.h"

#include "ops/common/lowering.h"

namespace ops {

using shlo::Builder;
using shlo::DType;
using shlo::Value;

Value histc(Builder& b, Value x, Value lo, Value hi, int64_t bins, bool auto_range) {
  DType dt = x.dtype();
  int64_t n = shlo::numel(x.shape());
  if (n == 0) return b.constant(dt, 0, {bins});
  Value flat = b.reshape(x, {n});
  if (auto_range) {
    lo = b.reduce(flat, b.highest(dt), {0}, "minimum");
    hi = b.reduce(flat, b.lowest(dt), {0}, "maximum");
    // Equal edges widen to [v - 1, v + 1] (PyTorch does it in double, then
    // rounds to x's dtype: the same as doing it in x's dtype).
    Value same = b.compare(shlo::Cmp::EQ, lo, hi);
    Value one = b.constant(dt, 1);
    lo = b.select(same, b.sub(lo, one), lo);
    hi = b.select(same, b.add(hi, one), hi);
  }
  shlo::Shape s{n};
  Value los = b.broadcast_in_dim(lo, s, {}), his = b.broadcast_in_dim(hi, s, {});
  Value in = logical_and(b, b.compare(shlo::Cmp::GE, flat, los), b.compare(shlo::Cmp::LE, flat, his));
  // Integer inputs compute the bin in int64 like CUDA's histc (the CPU has none).
  DType ct = shlo::is_float(dt) ? dt : DType::S64;
  Value xs = b.convert(flat, ct), l = b.convert(los, ct), h = b.convert(his, ct);
  Value pos = b.div(b.mul(b.sub(xs, l), b.constant(ct, static_cast<double>(bins), s)), b.sub(h, l));
  pos = b.convert(pos, DType::S64);  // truncates toward zero (pos >= 0 where counted)
  // The right edge belongs to the last bin; the clamp also keeps rounding
  // and uncounted elements in range.
  pos = b.clamp(b.constant(DType::S64, 0, s), pos, b.constant(DType::S64, static_cast<double>(bins - 1), s));
  Value ones = b.select(in, b.constant(dt, 1, s), b.constant(dt, 0, s));
  return b.scatter(b.constant(dt, 0, {bins}), b.reshape(pos, {n, 1}), ones, {}, {0}, {0}, 1, "add");
}

Value range_bits(Builder& b, Value x) {
  DType dt = x.dtype();
  int64_t n = shlo::numel(x.shape());
  Value flat = b.reshape(x, {n});
  // NaN is looked for apart from min / max, whatever their NaN rules.
  Value nan = b.reduce(is_nan(b, flat), b.constant(DType::PRED, 0), {0}, "or");
  auto bits = [&](Value v) {
    if (dt == DType::F64) return b.reshape(b.bitcast_convert(v, shlo::Type{DType::S64, {}}), {1});
    Value i = b.bitcast_convert(b.convert(v, DType::F32), shlo::Type{DType::S32, {}});
    return b.reshape(b.convert(i, DType::S64), {1});
  };
  return b.concatenate({b.reshape(b.convert(nan, DType::S64), {1}), bits(b.reduce(flat, b.highest(dt), {0}, "minimum")),
                        bits(b.reduce(flat, b.lowest(dt), {0}, "maximum"))},
                       0);
}

}  // namespace ops
