// Lowerings of cat, flip, roll, constant_pad_nd and triu / tril (see shape.h).
#include "ops/shape/shape.h"

#include <algorithm>
#include <stdexcept>

#include "ops/elementwise/elementwise.h"
#include "ops/indexing/indexing.h"

namespace ops {

using shlo::DType;
using shlo::Shape;
using shlo::Type;

Value cat(Builder& b, const std::vector<Value>& xs, int64_t dim, DType to) {
  std::vector<Value> parts;
  for (const Value& x : xs)
    if (x.shape()[dim] != 0) parts.push_back(convert(b, x, to));
  if (parts.empty()) throw std::invalid_argument("cat: no operand has elements along dim");
  return b.concatenate(parts, dim);
}

Value flip(Builder& b, Value x, const std::vector<int64_t>& dims) {
  if (dims.empty() || shlo::numel(x.shape()) == 0) return x;
  return b.reverse(x, dims);
}

Value roll(Builder& b, Value x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  if (shlo::numel(x.shape()) == 0) return x;
  if (dims.empty()) {
    Value flat = b.reshape(x, {shlo::numel(x.shape())});
    return b.reshape(roll(b, flat, {shifts[0]}, {0}), x.shape());
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i], size = x.shape()[d];
    int64_t s = ((shifts[i] % size) + size) % size;
    if (s == 0) continue;
    Shape lo(x.rank(), 0), hi = x.shape(), st(x.rank(), 1);
    Shape lo2 = lo, hi2 = hi;
    lo[d] = size - s;  // the tail moves to the front
    hi2[d] = size - s;
    x = b.concatenate({b.slice(x, lo, hi, st), b.slice(x, lo2, hi2, st)}, d);
  }
  return x;
}

Value constant_pad(Builder& b, Value x, Value value, const std::vector<int64_t>& pad) {
  int64_t n = x.rank();
  Shape lo(n, 0), hi(n, 0);
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t d = n - 1 - static_cast<int64_t>(i);
    lo[d] = pad[2 * i];
    hi[d] = pad[2 * i + 1];
  }
  return b.pad(x, convert(b, value, x.dtype()), lo, hi, Shape(n, 0));
}

Value triangle(Builder& b, Value x, Value diagonal, bool upper) {
  int64_t n = x.rank();
  int64_t R = x.shape()[n - 2], C = x.shape()[n - 1];
  // Beyond [-R, C] every diagonal keeps all or nothing; clamping first lets
  // the comparison run in a narrow index type.
  Value d = b.clamp(b.constant(DType::S64, static_cast<double>(-R)), b.convert(diagonal, DType::S64),
                    b.constant(DType::S64, static_cast<double>(C)));
  DType it = index_type(std::max(R, C) + 1);
  Type t{it, x.shape()};
  Value diff = b.sub(b.iota(t, n - 1), b.iota(t, n - 2));
  Value k = b.broadcast_in_dim(b.convert(d, it), x.shape(), {});
  Value keep = b.compare(upper ? shlo::Cmp::GE : shlo::Cmp::LE, diff, k);
  return b.select(keep, x, b.constant(x.dtype(), 0, x.shape()));
}

}  // namespace ops
