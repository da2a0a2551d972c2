// Scaled dot product attention as one fused lowering, forward and analytic
// backward, with causal / boolean / additive masks and grouped-query heads.
// Shapes: q [..., Hq, L, E], k [..., Hkv, S, E], v [..., Hkv, S, Ev] with
// Hq a multiple of Hkv (query head h reads kv head h / (Hq / Hkv)).
#pragma once

#include <array>
#include <optional>
#include <tuple>
#include <vector>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

struct AttentionSpec {
  bool causal = false;  // keep key j for query i iff j <= i (top-left aligned)
  auto fields() const { return std::tie(causal); }
};

// Returns {out [..., Hq, L, Ev] in q's dtype, logsumexp [..., Hq, L] in f32}.
// mask: bool (true = attend) or additive, broadcastable to [..., Hq, L, S].
// scale: 0-d float. Rows with every key masked give out = 0, lse = -inf.
std::vector<Value> attention_forward(Builder& b, Value q, Value k, Value v, std::optional<Value> mask, Value scale,
                                     const AttentionSpec& spec);

// Gradients wanted[i] of {q, k, v, mask}, in that order, only those wanted
// (the mask gradient is reduced to the mask's own shape and dtype).
std::vector<Value> attention_backward(Builder& b, Value grad_out, Value q, Value k, Value v, std::optional<Value> mask,
                                      Value lse, Value scale, const AttentionSpec& spec,
                                      const std::array<bool, 4>& wanted);

}  // namespace ops
