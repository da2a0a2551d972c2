// Searching a sorted sequence (searchsorted / bucketize) and counting
// values (bincount): PyTorch semantics, no torch.
#pragma once

#include <optional>

#include "shlo/builder.h"

namespace ops {

// For each v of `values`, its insertion point in a sorted sequence, found by
// PyTorch's binary search (moving right past b where !(b >= v), left; or
// !(b > v), right). boundaries: 1-D, or values' leading dims + one.
// Result: out (S32 / S64).
shlo::Value search_sorted(shlo::Builder& b, shlo::Value boundaries, shlo::Value values, bool right, shlo::DType out);
// bincount: out[i] = sum of weights (or 1) where x == i, for i < length.
shlo::Value bincount(shlo::Builder& b, shlo::Value x, std::optional<shlo::Value> weights, int64_t length,
                     shlo::DType out);

}  // namespace ops
