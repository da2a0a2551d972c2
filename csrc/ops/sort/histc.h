// torch.histc (Hugging Face MoE layers count tokens per expert with it) and
// the data-range check of its automatic edges.
#pragma once

#include "shlo/builder.h"

namespace ops {

// torch.histc over x (any shape, flattened): `bins` equal-width bins between
// lo and hi (0-d, x's dtype). When auto_range, the edges are x's min and max
// instead (widened by 1 on each side when equal). Elements outside the edges
// and NaN are not counted; an element equal to the right edge falls in the
// last bin. The bin is found as PyTorch does, (x - lo) * bins / (hi - lo) in
// x's dtype, truncated (integers: in int64, as CUDA does). Counts in x's dtype.
shlo::Value histc(shlo::Builder& b, shlo::Value x, shlo::Value lo, shlo::Value hi, int64_t bins, bool auto_range);

// The data range of floating x for histc's check, as s64[3]: {1 if any
// element is NaN else 0, min(x), max(x)}, min and max as the bits of an f64
// when x is f64 and of an f32 otherwise (every narrower float is exact in
// f32, and f64 needs no device support the data does not already need).
shlo::Value range_bits(shlo::Builder& b, shlo::Value x);

}  // namespace ops
