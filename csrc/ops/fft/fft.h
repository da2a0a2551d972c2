// Discrete Fourier transforms (torch.fft's _fft_c2c / _fft_r2c / _fft_c2r) as
// stablehlo.fft, in groups of at most three dims (XLA's limit), with
// PyTorch's normalization modes.
#pragma once

#include <vector>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

// dims: unique, in the caller's order (r2c / c2r treat the last one specially).
// normalization: 0 none, 1 by 1/sqrt(n), 2 by 1/n (n: the signal's size).
Value fft_c2c(Builder& b, Value x, const std::vector<int64_t>& dims, int64_t normalization, bool forward);
// Real -> complex; onesided keeps the last dim's n/2+1 non-redundant outputs.
Value fft_r2c(Builder& b, Value x, const std::vector<int64_t>& dims, int64_t normalization, bool onesided);
// Hermitian complex -> real, the last transformed dim becoming last_dim_size long.
Value fft_c2r(Builder& b, Value x, const std::vector<int64_t>& dims, int64_t normalization, int64_t last_dim_size);

}  // namespace ops
