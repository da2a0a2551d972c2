// Pooling: max / avg / adaptive pooling over 1 to 3 spatial dims and their
// gradients, and max_unpool. x: [B, C, *spatial]. PyTorch semantics, no torch.
#pragma once

#include <tuple>
#include <utility>
#include <vector>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

// The input positions each output reads along one spatial dim: raw[o * len + j]
// is the j-th position of output o's window, -1 past its end or in padding.
struct Windows {
  int64_t in = 0, out = 0, len = 0;
  std::vector<int64_t> raw;
  // Average pooling: this dim's factor of each output's divisor.
  std::vector<int64_t> divisor;
  auto fields() const { return std::tie(in, out, len, raw, divisor); }
};
// Strided, padded, dilated windows (max / avg pooling, ceil_mode included
// through `out`). divisor: window extent clipped to in + padding, or to the
// input alone when !count_include_pad (PyTorch's avg_pool rules).
Windows pool_windows(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, int64_t d, bool count_include_pad);
// Adaptive pooling: output o reads [floor(o * in / out), ceil((o + 1) * in / out)).
Windows adaptive_windows(int64_t in, int64_t out);
// (max values, int64 flat indices within each [*spatial] plane): the first
// maximum wins ties, NaN wins and the last NaN is kept (PyTorch's CPU rule).
std::pair<Value, Value> window_max(Builder& b, Value x, const std::vector<Windows>& w);
// Window sums divided by the divisor (a nonzero divisor_override replaces it).
Value window_avg(Builder& b, Value x, const std::vector<Windows>& w, int64_t divisor_override);
// Gradient of window_avg: grad [B, C, *out] -> [B, C, *in].
Value window_avg_backward(Builder& b, Value grad, const std::vector<Windows>& w, int64_t divisor_override);
// grad [B, C, *out] summed into zeros [B, C, *in_spatial] at the flat plane indices idx.
Value plane_scatter_add(Builder& b, Value grad, Value idx, const shlo::Shape& in_spatial);

// max_unpool: x, idx of shape [N, C, *in] (N present); idx flat within each
// [*out] plane; result [N, C, *out] zeros except the scattered values.
Value max_unpool(Builder& b, Value x, Value idx, const shlo::Shape& out_spatial);

}  // namespace ops
