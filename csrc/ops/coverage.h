// Lowerings added to raise OpInfo conformance (the `coverage` branch): FFTs,
// conjugation, special functions, index_reduce, pooling inverses and other
// ops that used to run through the CPU fallback. PyTorch semantics, no torch.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

// ---- FFT (torch.fft's _fft_c2c / _fft_r2c / _fft_c2r). dims: sorted, unique.
// normalization: 0 none, 1 by 1/sqrt(n), 2 by 1/n (n: the signal's size).
Value fft_c2c(Builder& b, Value x, const std::vector<int64_t>& dims, int64_t normalization, bool forward);
// Real -> complex; onesided keeps the last dim's n/2+1 non-redundant outputs.
Value fft_r2c(Builder& b, Value x, const std::vector<int64_t>& dims, int64_t normalization, bool onesided);
// Hermitian complex -> real, the last transformed dim becoming last_dim_size long.
Value fft_c2r(Builder& b, Value x, const std::vector<int64_t>& dims, int64_t normalization, int64_t last_dim_size);

// ---- reductions and comparisons
// sum over dims treating NaN as zero (dims sorted; out: result dtype).
Value nansum(Builder& b, Value x, const std::vector<int64_t>& dims, bool keepdim, shlo::DType out);
// Whether x and y (same shape and dtype) hold equal values: a 0-d PRED.
Value all_equal(Builder& b, Value x, Value y);
// Sum of the main diagonal of a matrix, accumulated and returned in `out`.
Value trace(Builder& b, Value x, shlo::DType out);
// Inclusive running max / min along dim with the index where it was found:
// ties and NaN take the later index, NaN propagates (PyTorch's cummax / cummin).
std::pair<Value, Value> cum_extreme(Builder& b, Value x, int64_t dim, bool is_max);

// ---- index_reduce: reduce is prod, mean, amax or amin.
Value index_reduce(Builder& b, Value x, int64_t dim, Value idx, Value src, const std::string& reduce,
                   bool include_self);

// ---- vectors
// Cross product of 3-vectors along dim (operands broadcast).
Value cross(Builder& b, Value x, Value y, int64_t dim);
// Each slice along dim scaled down to p-norm at most maxnorm (p, maxnorm: 0-d).
// p_kind: 0 general (p used), 1 (p=0), 2 (p=1), 3 (p=2), 4 (inf), 5 (-inf).
Value renorm(Builder& b, Value x, Value p, int64_t dim, Value maxnorm, int p_kind);

// ---- searching and counting
// For each v of `values`, the number of boundaries b with !(b >= v) (left)
// or !(b > v) (right): its insertion point in a sorted sequence. boundaries:
// 1-D, or values' leading dims + one. Result: out (S32 / S64).
Value search_sorted(Builder& b, Value boundaries, Value values, bool right, shlo::DType out);
// bincount: out[i] = sum of weights (or 1) where x == i, for i < length.
Value bincount(Builder& b, Value x, std::optional<Value> weights, int64_t length, shlo::DType out);

// ---- max_unpool: x, idx of shape [N, C, *in] (N present); idx flat within each
// [*out] plane; result [N, C, *out] zeros except the scattered values.
Value max_unpool(Builder& b, Value x, Value idx, const shlo::Shape& out_spatial);

// ---- losses (reduction: 0 none, 1 mean, 2 sum); operands broadcast.
// kind: 0 huber (param = delta), 1 smooth_l1 (param = beta).
Value robust_loss(Builder& b, Value x, Value y, int kind, double param, int64_t reduction);
Value robust_loss_backward(Builder& b, Value grad, Value x, Value y, int kind, double param, int64_t reduction);
Value binary_cross_entropy(Builder& b, Value x, Value y, std::optional<Value> w, int64_t reduction);
Value binary_cross_entropy_backward(Builder& b, Value grad, Value x, Value y, std::optional<Value> w,
                                    int64_t reduction);

// ---- pooling (coverage_pool.cc). x: [B, C, *spatial] with 1 to 3 spatial dims.
// The input positions each output reads along one spatial dim: raw[o * len + j]
// is the j-th position of output o's window, -1 past its end or in padding.
struct Windows {
  int64_t in = 0, out = 0, len = 0;
  std::vector<int64_t> raw;
  // Average pooling: this dim's factor of each output's divisor.
  std::vector<int64_t> divisor;
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

}  // namespace ops
