// Lowerings added to raise OpInfo conformance (the `coverage` branch): FFTs,
// conjugation, special functions, pooling inverses and other
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

// Complex conjugate (identity for real values).
Value conj(Builder& b, Value x);

// ---- special functions (x in f32 / f64)
// polygamma(n, x) for n >= 1 (n: 0-d, x's dtype) with PyTorch's CPU rules:
// trigamma by reflection below 1/2, negative non-integer x shifted to
// positive by the recurrence, poles at non-positive integers.
Value polygamma_cpu(Builder& b, Value n, Value x);


// ---- activations (math in f32 for f16 / bf16)
// First half of x along dim times sigmoid of the second half.
Value glu(Builder& b, Value x, int64_t dim);
Value glu_backward(Builder& b, Value grad, Value x, int64_t dim);

// ---- integer and bit math (operands broadcast, one dtype)
Value gcd(Builder& b, Value x, Value y);
Value lcm(Builder& b, Value x, Value y);
// PyTorch's shifts: shifting by a negative amount or by the bit width or
// more gives 0 (left) or the sign fill (right).
Value shift_left(Builder& b, Value x, Value y);
Value shift_right(Builder& b, Value x, Value y);
// The next representable value after x towards y (x's float dtype).
Value nextafter(Builder& b, Value x, Value y);
// x * log1p(y), 0 where x == 0 unless y is NaN.
Value xlog1py(Builder& b, Value x, Value y);

// ---- vectors
// Cross product of 3-vectors along dim (operands broadcast).
Value cross(Builder& b, Value x, Value y, int64_t dim);

// ---- max_unpool: x, idx of shape [N, C, *in] (N present); idx flat within each
// [*out] plane; result [N, C, *out] zeros except the scattered values.
Value max_unpool(Builder& b, Value x, Value idx, const shlo::Shape& out_spatial);

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
