// Scan lowerings with PyTorch semantics: inclusive running sums, products,
// log-sum-exps and extremes along one dim (0-d values allowed, scanned as
// one element).
#pragma once

#include <utility>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::DType;
using shlo::Value;

// cumsum / cumprod / logcumsumexp of x along dim, accumulated like the
// reductions (f32 for f16 / bf16) and returned in `out`.
enum class Scan { Sum, Prod, LogAddExp };
Value scan(Builder& b, Value x, Scan kind, int64_t dim, DType out);

// Inclusive running max / min along dim with the index where it was found:
// ties and NaN take the later index, NaN propagates (PyTorch's cummax / cummin).
std::pair<Value, Value> cum_extreme(Builder& b, Value x, int64_t dim, bool is_max);

}  // namespace ops
