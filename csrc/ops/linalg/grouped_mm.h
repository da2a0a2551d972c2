// Grouped matrix products (PyTorch's _grouped_mm, the MoE expert matmul):
// groups given by cumulative offsets `offs` select rows, columns or K
// slices by masking, so the program has static shapes for any offsets.
#pragma once

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

// a, b: same dtype; offs: 1-D integer ends of each group (nullptr only for
// 3-D x 3-D). Shapes: [M,K] x [G,K,N] -> [M,N] (rows grouped);
// [G,M,K] x [K,N] -> [M,N] (columns grouped); [M,K] x [K,N] -> [G,M,N]
// (K grouped); [G,M,K] x [G,K,N] -> [G,M,N]. Positions past the last
// offset are zero. The product accumulates in f32 for f16/bf16 and is
// converted to `out`.
Value grouped_mm(Builder& b, Value a, Value bm, const Value* offs, shlo::DType out);

}  // namespace ops
