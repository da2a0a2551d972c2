// Reduction lowerings with PyTorch semantics, and the building blocks the
// families that reduce inside their own lowerings use (softmax, norms,
// pooling, scans, losses).
// Reduced dims arrive wrapped, sorted and unique; an empty list means the
// caller already decided there is nothing to reduce (callers expand "all").
// Reduced-precision floats (f16/bf16) accumulate in f32 like PyTorch's CPU
// kernels: the input is converted to the output dtype, then to the
// accumulation dtype, reduced, and converted back to the output dtype.
#pragma once

#include <utility>
#include <vector>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::DType;
using shlo::Value;
using Dims = std::vector<int64_t>;

// The dtype PyTorch accumulates `out` in: f32 for f16/bf16, else itself.
DType acc_type(DType out);

// x with every reduced dim put back as size 1 (keepdim=True shape).
Value keep_dims(Builder& b, Value reduced, const shlo::Shape& in_shape, const Dims& dims);

// Building blocks for lowerings over one reduced dim set, in x's own dtype:
// a NaN-propagating max, a plain sum, and a reduced value broadcast back
// over the shape it was reduced from.
Value max_over(Builder& b, Value x, const Dims& dims);
Value sum_over(Builder& b, Value x, const Dims& dims);
Value expand_back(Builder& b, Value reduced, const shlo::Shape& shape, const Dims& dims);
// Elementwise max (is_max) or min of x and y that propagates NaN: XLA:CPU's
// maximum / minimum drop NaN inside reductions, PyTorch propagates it.
Value max_nan(Builder& b, Value x, Value y, bool is_max);

enum class Reduce { Sum, Prod, Max, Min, All, Any };

// sum / prod / amax / amin / all / any over dims. Max and Min propagate NaN.
// All / Any compute on booleans (x != 0) and convert the result to `out`.
Value reduce(Builder& b, Value x, Reduce kind, const Dims& dims, bool keepdim, DType out);
// sum / count in the accumulation dtype.
Value mean(Builder& b, Value x, const Dims& dims, bool keepdim, DType out);
// Variance with `correction` (0-d, any float dtype) subtracted from the
// element count; {var or std, mean}. Two-pass (mean first) for accuracy.
// A complex x has a real variance (out: its parts' dtype) and a complex mean.
std::pair<Value, Value> var_mean(Builder& b, Value x, const Dims& dims, bool keepdim, Value correction, bool take_sqrt,
                                 DType out);
// (values, int64 indices) of the max / min along one dim: NaN wins, and
// among equal values the FIRST index wins, like PyTorch.
std::pair<Value, Value> arg_reduce(Builder& b, Value x, int64_t dim, bool keepdim, bool is_max);
// log(sum(exp(x))) with the max subtracted first (infinite max treated as 0).
Value logsumexp(Builder& b, Value x, const Dims& dims, bool keepdim, DType out);
// Vector p-norm. ord: 0, 1, 2, +inf, -inf are special-cased; any other
// value uses the runtime 0-d operand p (so new p values reuse the program).
enum class NormOrd { Zero, One, Two, Inf, NegInf, General };
Value vector_norm(Builder& b, Value x, NormOrd ord, Value p, const Dims& dims, bool keepdim, DType out);
// Number of x != 0 over dims, as int64.
Value count_nonzero(Builder& b, Value x, const Dims& dims);

// sum over dims treating NaN as zero (out: result dtype).
Value nansum(Builder& b, Value x, const Dims& dims, bool keepdim, DType out);
// Whether x and y (same shape and dtype) hold equal values: a 0-d PRED.
Value all_equal(Builder& b, Value x, Value y);
// Sum of the main diagonal of a matrix, accumulated and returned in `out`.
Value trace(Builder& b, Value x, DType out);
// Each slice along dim scaled down to p-norm at most maxnorm (p, maxnorm: 0-d).
Value renorm(Builder& b, Value x, Value p, int64_t dim, Value maxnorm, NormOrd ord);

}  // namespace ops
