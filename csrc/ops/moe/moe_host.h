// The experts layer's routing as native code inside an XLA:CPU program: two
// custom calls around the grouped row products (grouped_rows_host.h).
//
// Why: as StableHLO the routing is two sorts with a comparator region, a
// compare-and-reduce for the counts, three row gathers and a masked weighted
// sum; as native code the pairs are grouped by a counting sort and summed
// back in one pass each, and a single token needs no gathered copy of its
// experts' matrices. At 64 tokens and one thread the layer went from
// 3.1-3.2 to 2.9-3.1 ms (its two products are ~1.9 ms). Like the products,
// only XLA:CPU runs them (f32); other plugins keep the StableHLO.
#pragma once

#include <cstdint>

#include "pjrt/ffi.h"
#include "shlo/builder.h"

namespace ops {

inline constexpr const char* kMoeDispatchTarget = "torch_pjrt_moe_dispatch_f32";
inline constexpr const char* kMoeCombineTarget = "torch_pjrt_moe_combine_f32";

struct MoeDispatch {
  shlo::Value rows;    // f32 [T * K, H]
  shlo::Value counts;  // s32 [E]
  shlo::Value slot;    // s32 [T * K]
};

// hidden f32 [T, H], ids s32 [T, K] (pair q = t * K + k chose expert
// ids[t, k]). rows: each pair's token row, grouped by expert in expert
// order and, within an expert, in pair order; the pairs whose id lies
// outside [0, experts) (expert parallelism's sentinel) have no row and the
// rows past the grouped ones are zeros. counts: rows per expert. slot: the
// row of each pair, -1 for one without.
MoeDispatch moe_dispatch_host(shlo::Builder& b, shlo::Value hidden, shlo::Value ids, int64_t experts);

// ys f32 [T * K, H] (one result per dispatched row), slot as dispatched,
// weights f32 [T, K] -> f32 [T, H]: out[t] = sum over k, in order, of
// weights[t, k] * ys[slot[t * K + k]] for the pairs with a row.
shlo::Value moe_combine_host(shlo::Builder& b, shlo::Value ys, shlo::Value slot, shlo::Value weights);

// The native functions behind the two targets, and how many times each ran.
pjrt::ffi::Error* moe_dispatch_handler(pjrt::ffi::CallFrame* frame);
pjrt::ffi::Error* moe_combine_handler(pjrt::ffi::CallFrame* frame);
int64_t moe_dispatch_calls();
int64_t moe_combine_calls();

}  // namespace ops
