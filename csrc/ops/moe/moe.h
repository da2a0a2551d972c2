// A mixture-of-experts layer's experts as one program: every (token, choice)
// pair is sorted by expert, each active expert's weights are read once for
// all of its rows, and the weighted results are summed back per token.
//
// Static shapes and data-dependent groups meet in a loop (group_tiles in
// ops/linalg/grouped_mm.h): the program walks the experts that have rows,
// and for each its sorted rows in tiles of `tile` rows, so the work done
// follows the routing, not experts x tokens as a masked dense product would. Pairs
// routed to an id outside [0, experts) (expert parallelism's sentinel for
// an expert held elsewhere) contribute nothing. A single token's choices are
// distinct experts: it gathers their matrices and needs no sort or loop.
#pragma once

#include <cstdint>

#include "ops/activation/activation.h"
#include "shlo/builder.h"

namespace ops {

// How the op receives the expert matrices.
enum class ExpertLayout {
  OutIn,       // gate_up [E, 2I, H] (gate rows first, then up rows) and down
               // [E, H, I], as nn.Linear weights
  InOut,       // their last two dims swapped: [E, H, 2I] and [E, I, H]
  HostPanels,  // f32, the panel-major form of InOut (grouped_rows_host.h):
               // [E, 2I / P, H, P] and [E, H / P, I, P]; XLA:CPU only
};

// hidden [T, H]; top_k_index [T, K] (any integer type); top_k_weights
// [T, K]; gate_up and down laid out as `layout` says. Result [T, H] in
// hidden's dtype:
//   out[t] = sum_k w[t,k] * down[e] @ (act(gate[e] @ x[t]) * (up[e] @ x[t])),
// e = top_k_index[t,k]. Products accumulate in f32 for f16/bf16 and each
// projection is rounded to the input dtype, as PyTorch's layers round.
shlo::Value moe_experts(shlo::Builder& b, shlo::Value hidden, shlo::Value top_k_index, shlo::Value top_k_weights,
                        shlo::Value gate_up, shlo::Value down, Activation act, ExpertLayout layout, int64_t tile);

}  // namespace ops
