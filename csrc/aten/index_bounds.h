// Range checks of index tensors shared by kernel families (defined in
// ops/indexing/aten_bounds.cc, which remembers the bounds of device indices).
#pragma once

#include <ATen/ATen.h>

#include <functional>

namespace tpu {

// Checks lo <= idx < hi (host or device indices); fail(v) raises the op's
// own error for a value v outside.
void check_index_bounds(const at::Tensor& idx, int64_t lo, int64_t hi, const std::function<void(int64_t)>& fail);

}  // namespace tpu
