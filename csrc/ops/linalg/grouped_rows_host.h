// Grouped row products computed by native code inside an XLA:CPU program
// (a custom call), for the MoE experts' few rows per expert.
//
// Why: XLA:CPU multiplies through Eigen, which packs the weight operand at
// every product; with the ~8 rows an expert gets while decoding, packing is
// most of the work (an [8,512] x [512,512] product runs at ~11-16 GB/s of
// weight against ~25 GB/s the memory gives). Here the weights are packed
// once, when their copy is made (dense_copy keeps it with their content),
// into panels of kHostPanel output columns, each panel's K rows
// consecutive, and the kernel streams each active group's panels once per 8
// rows with its accumulators in registers. Only XLA:CPU runs it; other
// plugins lower the same op as group_tiles (grouped_mm.h).
#pragma once

#include <cstdint>

#include "pjrt/ffi.h"
#include "shlo/builder.h"

namespace ops {

// Output columns per weight panel.
inline constexpr int64_t kHostPanel = 32;
// The custom call target the engine registers (engine::Runtime).
inline constexpr const char* kGroupedRowsTarget = "torch_pjrt_grouped_rows_f32";

// The panel-major form of G matrices [G, K, N]: [G, N / kHostPanel, K,
// kHostPanel], element (g, k, n) at [g, n / P, k, n % P].
//
// x: f32 [R, K], group g's rows consecutive from the sum of the earlier
// counts; counts: S32 [G]; w: f32 [G, N / kHostPanel, K, kHostPanel].
// Result f32 [R, N]: row r of group g is x[r] @ w[g]; rows past the last
// group are zeros. Counts below zero count as zero, and rows past R are
// never read.
shlo::Value grouped_rows_host(shlo::Builder& b, shlo::Value x, shlo::Value counts, shlo::Value w);

// One matrix: x f32 [R, K] @ the [K, N] matrix whose panels are w f32
// [N / kHostPanel, K, kHostPanel]. Result f32 [R, N].
shlo::Value rows_host(shlo::Builder& b, shlo::Value x, shlo::Value w);

// The native function behind kGroupedRowsTarget, and how many times it ran.
// Products of at least a few microseconds split their panels over the
// threads of XLA's pool (the calling one among them).
pjrt::ffi::Error* grouped_rows_handler(pjrt::ffi::CallFrame* frame);
int64_t grouped_rows_host_calls();
// Pieces of work the pool's other threads have run.
int64_t grouped_rows_host_pieces_elsewhere();

}  // namespace ops
