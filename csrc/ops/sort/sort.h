// Sorting and selection lowerings with PyTorch semantics: stable sort in
// which NaN orders as the largest value, topk, kthvalue, median, nonzero and
// unique. Data-dependent result sizes (nonzero, unique) are computed first
// by the caller (one host read) and passed in as static sizes.
#pragma once

#include <utility>
#include <vector>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

// (values, s64 indices) stably sorted along dim.
std::pair<Value, Value> sort(Builder& b, Value x, int64_t dim, bool descending);
// The k largest (or smallest) along dim, sorted best first.
std::pair<Value, Value> topk(Builder& b, Value x, int64_t k, int64_t dim, bool largest);
// The k-th smallest (1-based) along dim; dim kept with size 1.
std::pair<Value, Value> kthvalue(Builder& b, Value x, int64_t k, int64_t dim);
// The lower median along dim; dim kept with size 1. A NaN makes the result
// the first NaN, unless ignore_nan (nanmedian) where NaNs are skipped.
std::pair<Value, Value> median(Builder& b, Value x, int64_t dim, bool ignore_nan);

// The most frequent value along dim (the smallest of equally frequent ones)
// and the last index holding it, as PyTorch's mode; dim kept with size 1.
std::pair<Value, Value> mode(Builder& b, Value x, int64_t dim);

// Row-major coordinates of x's `count` nonzero elements: s64[count, rank].
Value nonzero(Builder& b, Value x, int64_t count);
// The same padded / cut to `size` rows; rows past the count hold fill (0-d s64).
Value nonzero_static(Builder& b, Value x, int64_t size, Value fill);

// x: [N, M] rows. Number of distinct rows (0-d s64): with sorted, of
// distinct values (M == 1, torch.unique); without, of runs of equal
// consecutive rows (unique_consecutive).
Value unique_count(Builder& b, Value x, bool sorted);
// The distinct rows [count, M] (sorted or in run order), inverse [N] s64 and
// counts [count] s64.
std::vector<Value> unique(Builder& b, Value x, int64_t count, bool sorted);

}  // namespace ops
