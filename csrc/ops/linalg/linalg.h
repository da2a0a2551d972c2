// Matrix products (mm, bmm, mv, dot and their add* forms) with PyTorch's
// CPU numerics: f32 products at full precision, f16/bf16 products
// accumulated in f32 and rounded once, beta == 0 ignoring `self`; and the
// cross product of 3-vectors.
#pragma once

#include <vector>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

// The dtype a product of `t` inputs accumulates in: f32 for f16/bf16.
shlo::DType accumulate_dtype(shlo::DType t);

// dot_general of two same-dtype operands whose result stays in the
// accumulation dtype (not rounded back), so callers can fuse an epilogue.
// Result dims: batch, x free, y free (StableHLO order).
Value contract(Builder& b, Value x, Value y, const std::vector<int64_t>& x_batch, const std::vector<int64_t>& y_batch,
               const std::vector<int64_t>& x_contract, const std::vector<int64_t>& y_contract);

// [n,k] @ [k,m] -> [n,m]. y (here and in addmm) may also come as the
// panels of the native host kernel, [m / P, k, P] (f32, XLA:CPU only:
// grouped_rows_host.h).
Value mm(Builder& b, Value x, Value y);
// [B,n,k] @ [B,k,m] -> [B,n,m]
Value bmm(Builder& b, Value x, Value y);
// [n,k] @ [k] -> [n]
Value mv(Builder& b, Value mat, Value vec);
// [k] . [k] -> []
Value dot(Builder& b, Value x, Value y);

// beta * self + alpha * product (self broadcast to the product's shape),
// computed in the product's accumulation dtype and converted to `out`.
// beta == 0 drops self entirely, NaN and inf included, as PyTorch does.
// beta, alpha: 0-d values of any dtype.
Value add_scaled(Builder& b, Value self, Value product, Value beta, Value alpha, shlo::DType out);

Value addmm(Builder& b, Value self, Value m1, Value m2, Value beta, Value alpha);
Value baddbmm(Builder& b, Value self, Value b1, Value b2, Value beta, Value alpha);
// beta * self + alpha * sum_i b1[i] @ b2[i]
Value addbmm(Builder& b, Value self, Value b1, Value b2, Value beta, Value alpha);
Value addmv(Builder& b, Value self, Value mat, Value vec, Value beta, Value alpha);

// Cross product of 3-vectors along dim (operands of one shape).
Value cross(Builder& b, Value x, Value y, int64_t dim);

}  // namespace ops
