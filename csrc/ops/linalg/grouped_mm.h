// Grouped matrix products (PyTorch's _grouped_mm, the MoE expert matmul):
// groups given by cumulative offsets `offs` select rows, columns or K
// slices. Grouped rows (the MoE case) walk the groups in a loop, so the
// work follows the offsets; grouped columns and K slices mask, so the
// program has static shapes for any offsets.
#pragma once

#include <functional>
#include <vector>

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

// The rows of each group through its own weights, the work following the
// groups' sizes: a loop walks the groups that have rows, in ascending
// order, and each one's rows in tiles of `tile` (a loop that runs zero
// times for an empty group), so nothing is done for rows a group lacks and
// an idle group's weights are never read. x: [R + tile, C], the groups'
// rows consecutive from row starts[g] (counts[g] of them; counts, starts:
// S32 [G]), then `tile` rows of padding so a last tile never reaches past
// the end (a clamped window would overwrite rows already written).
// weights: tensors [G, ...], each passed to `body` as its group's slice
// (leading dim dropped). body(b, rows [tile, C], slices) -> [tile, N].
// Result: [R + tile, N] of `out` dtype; a tile's rows past its group's
// count hold anything until a later group (or nothing) writes them, so
// rows outside every group, and the padding, are the caller's to drop.
using GroupBody = std::function<Value(Builder&, Value, const std::vector<Value>&)>;
Value group_tiles(Builder& b, Value x, Value counts, Value starts, const std::vector<Value>& weights, int64_t tile,
                  int64_t n, shlo::DType out, const GroupBody& body);

// Rows per tile for `rows` rows over `groups` groups: about the mean rows
// a group gets, a power of two within [8, 256].
int64_t group_tile_rows(int64_t rows, int64_t groups);

}  // namespace ops
