// ATen-side helpers the indexing and sort kernels share: index outputs of
// our own ops marked as known in range (so later ops never check them),
// data-dependent sizes read back from the device, and out= resizing. The
// range check itself is check_index_bounds (aten/index_bounds.h), defined
// in aten_bounds.cc.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "aten/index_bounds.h"
#include "aten/tensor.h"

namespace tpu {

// Marks the index tensor `t` (just written by our op) as within [0, n) when
// it is its whole storage.
void trust_indices(const at::Tensor& t, int64_t n);

// Reads an s64 device value back to the host (a data-dependent size or a
// checked range); `what` names the read in a failure.
std::vector<int64_t> fetch_i64(engine::Ref v, const char* what = "reading an index back");
// Reads a 0-d s64 device value (a data-dependent size).
inline int64_t fetch_count(engine::Ref v) { return fetch_i64(std::move(v))[0]; }
// The number of nonzero elements of v, read back from the device.
int64_t fetch_count_true(engine::Ref v);

// t's size along dim; 1 for a 0-d t.
inline int64_t size_at(const at::Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.size(dim); }

// Resizes an out= tensor, refusing a dtype other than `dtype` with op's message.
void resize_out(at::Tensor& out, at::IntArrayRef sizes, at::ScalarType dtype, const char* op);

}  // namespace tpu
