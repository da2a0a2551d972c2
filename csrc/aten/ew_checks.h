// Checks shared by the elementwise and activation kernels (ops/elementwise,
// ops/activation): which dtypes an op accepts, as on the CPU.
#pragma once

#include <ATen/TensorIterator.h>

#include "aten/tensor.h"

namespace tpu::ew {

// The dtypes PyTorch's CPU kernel of an op accepts, so others fail alike.
enum class Accepts { All, NoBool, Float, IntBool };

inline void check_dtype(const char* op, at::ScalarType t, Accepts a) {
  bool ok = a == Accepts::All || (a == Accepts::NoBool && t != at::kBool) ||
            (a == Accepts::Float && at::isFloatingType(t)) ||
            (a == Accepts::IntBool && at::isIntegralType(t, /*includeBool=*/true));
  TORCH_CHECK_NOT_IMPLEMENTED(ok, "\"", op, "\" not implemented for '", at::toString(t), "'");
}

inline shlo::DType common(const at::TensorIteratorBase& m) { return to_shlo(m.common_dtype()); }

}  // namespace tpu::ew
