// Reduction, scan and loss lowerings with PyTorch semantics.
// Reduced dims arrive wrapped, sorted and unique; an empty list means the
// caller already decided there is nothing to reduce (callers expand "all").
// Reduced-precision floats (f16/bf16) accumulate in f32 like PyTorch's CPU
// kernels: the input is converted to the output dtype, then to the
// accumulation dtype, reduced, and converted back to the output dtype.
#pragma once

#include <optional>
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

enum class Reduce { Sum, Prod, Max, Min, All, Any };

// sum / prod / amax / amin / all / any over dims. Max and Min propagate NaN.
// All / Any compute on booleans (x != 0) and convert the result to `out`.
Value reduce(Builder& b, Value x, Reduce kind, const Dims& dims, bool keepdim, DType out);
// sum / count in the accumulation dtype.
Value mean(Builder& b, Value x, const Dims& dims, bool keepdim, DType out);
// Variance with `correction` (0-d, any float dtype) subtracted from the
// element count; {var or std, mean}. Two-pass (mean first) for accuracy.
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

// ---- scans (inclusive, along one dim; 0-d allowed)
enum class Scan { Sum, Prod, LogAddExp };
Value scan(Builder& b, Value x, Scan kind, int64_t dim, DType out);

// ---- losses
// reduction: 0 none, 1 mean, 2 sum (at::Reduction).
// nll_loss: self (C), (N, C) or (N, C, d1, ...) with classes on dim 0 / 1;
// target int (), (N) or (N, d1, ...); weight (C) or none; ignore_index 0-d
// int64 operand. Returns {output, total_weight}. Out-of-range targets
// contribute nothing (they cannot be checked without a host sync).
std::pair<Value, Value> nll_loss(Builder& b, Value self, Value target, std::optional<Value> weight, int64_t reduction,
                                 Value ignore_index);
Value nll_loss_backward(Builder& b, Value grad, Value self, Value target, std::optional<Value> weight,
                        int64_t reduction, Value ignore_index, Value total_weight);
// mse_loss on already broadcast, same-dtype operands.
Value mse_loss(Builder& b, Value x, Value y, int64_t reduction, DType out);
// grad (0-d or x's shape) -> d/dx, shape of x.
Value mse_loss_backward(Builder& b, Value grad, Value x, Value y, int64_t reduction, DType out);

}  // namespace ops
