// Lowerings for ops that Hugging Face models reach and no other family
// covers (histc: the MoE tokens-per-expert count).
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

// 1 (as s64[1]) when any element of floating x is Inf or NaN, else 0: the
// finiteness of histc's data range, checked without a host wait.
shlo::Value nonfinite_flag(shlo::Builder& b, shlo::Value x);

}  // namespace ops
