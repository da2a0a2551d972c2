// Lowerings added to raise OpInfo conformance (the `coverage` branch): FFTs,
// conjugation, special functions, index_reduce, pooling inverses and other
// ops that used to run through the CPU fallback. PyTorch semantics, no torch.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

// Complex conjugate (identity for real values).
Value conj(Builder& b, Value x);

// ---- special functions (x in f32 / f64)
// polygamma(n, x) for n >= 1 (n: 0-d, x's dtype) with PyTorch's CPU rules:
// trigamma by reflection below 1/2, negative non-integer x shifted to
// positive by the recurrence, poles at non-positive integers.
Value polygamma_cpu(Builder& b, Value n, Value x);

// ---- reductions and comparisons
// sum over dims treating NaN as zero (dims sorted; out: result dtype).
Value nansum(Builder& b, Value x, const std::vector<int64_t>& dims, bool keepdim, shlo::DType out);
// Whether x and y (same shape and dtype) hold equal values: a 0-d PRED.
Value all_equal(Builder& b, Value x, Value y);
// Sum of the main diagonal of a matrix, accumulated and returned in `out`.
Value trace(Builder& b, Value x, shlo::DType out);
// Inclusive running max / min along dim with the index where it was found:
// ties and NaN take the later index, NaN propagates (PyTorch's cummax / cummin).
std::pair<Value, Value> cum_extreme(Builder& b, Value x, int64_t dim, bool is_max);

// ---- index_reduce: reduce is prod, mean, amax or amin.
Value index_reduce(Builder& b, Value x, int64_t dim, Value idx, Value src, const std::string& reduce,
                   bool include_self);

// ---- activations (math in f32 for f16 / bf16)
// First half of x along dim times sigmoid of the second half.
Value glu(Builder& b, Value x, int64_t dim);
Value glu_backward(Builder& b, Value grad, Value x, int64_t dim);

// ---- integer and bit math (operands broadcast, one dtype)
Value gcd(Builder& b, Value x, Value y);
Value lcm(Builder& b, Value x, Value y);
// PyTorch's shifts: shifting by a negative amount or by the bit width or
// more gives 0 (left) or the sign fill (right).
Value shift_left(Builder& b, Value x, Value y);
Value shift_right(Builder& b, Value x, Value y);
// The next representable value after x towards y (x's float dtype).
Value nextafter(Builder& b, Value x, Value y);
// x * log1p(y), 0 where x == 0 unless y is NaN.
Value xlog1py(Builder& b, Value x, Value y);

// ---- vectors
// Each slice along dim scaled down to p-norm at most maxnorm (p, maxnorm: 0-d).
// p_kind: 0 general (p used), 1 (p=0), 2 (p=1), 3 (p=2), 4 (inf), 5 (-inf).
Value renorm(Builder& b, Value x, Value p, int64_t dim, Value maxnorm, int p_kind);

// ---- searching and counting
// For each v of `values`, the number of boundaries b with !(b >= v) (left)
// or !(b > v) (right): its insertion point in a sorted sequence. boundaries:
// 1-D, or values' leading dims + one. Result: out (S32 / S64).
Value search_sorted(Builder& b, Value boundaries, Value values, bool right, shlo::DType out);
// bincount: out[i] = sum of weights (or 1) where x == i, for i < length.
Value bincount(Builder& b, Value x, std::optional<Value> weights, int64_t length, shlo::DType out);

// ---- losses (reduction: 0 none, 1 mean, 2 sum); operands broadcast.
// kind: 0 huber (param = delta), 1 smooth_l1 (param = beta).
Value robust_loss(Builder& b, Value x, Value y, int kind, double param, int64_t reduction);
Value robust_loss_backward(Builder& b, Value grad, Value x, Value y, int kind, double param, int64_t reduction);
Value binary_cross_entropy(Builder& b, Value x, Value y, std::optional<Value> w, int64_t reduction);
Value binary_cross_entropy_backward(Builder& b, Value grad, Value x, Value y, std::optional<Value> w,
                                    int64_t reduction);

}  // namespace ops
