// The ATen side's shared helpers for op families' entry points (the
// torch-free lowering primitives are lowering.h beside this file): dtype
// checks as PyTorch's CPU kernels make them, out= storing and resizing, and
// index tensors' range checks. Index outputs of our own ops are marked as
// known in range (so later ops never check them), and data-dependent sizes
// are read back from the device; aten_bounds.cc defines these, remembering
// the bounds of device indices.
#pragma once

#include <ATen/ATen.h>
#include <ATen/native/Resize.h>

#include <functional>
#include <vector>

#include "aten/tensor.h"

namespace tpu {

// ---- dtype checks

// The dtypes PyTorch's CPU kernel of an op accepts, so others fail alike
// (NotImplementedError).
enum class Accepts { All, NoBool, Float, FloatComplex, IntBool };

inline void check_dtype(const char* op, at::ScalarType t, Accepts a) {
  bool ok = a == Accepts::All || (a == Accepts::NoBool && t != at::kBool) ||
            (a == Accepts::Float && at::isFloatingType(t)) ||
            (a == Accepts::FloatComplex && (at::isFloatingType(t) || at::isComplexType(t))) ||
            (a == Accepts::IntBool && at::isIntegralType(t, /*includeBool=*/true));
  TORCH_CHECK_NOT_IMPLEMENTED(ok, "\"", op, "\" not implemented for '", at::toString(t), "'");
}

// A floating point t, else the RuntimeError of an op without a kernel for
// t's dtype.
inline void check_floating(const at::Tensor& t, const char* op) {
  TORCH_CHECK(at::isFloatingType(t.scalar_type()), "\"", op, "\" not implemented for '", at::toString(t.scalar_type()),
              "'");
}

// ---- out=

// Stores `v` into out (resized to v's shape first, as out= ops do).
inline at::Tensor& store_out(at::Tensor& out, engine::Ref v) {
  at::native::resize_output(out, v.type().shape);
  write(out, std::move(v));
  return out;
}

// Resizes an out= tensor, refusing a dtype other than `dtype` with op's
// message (out= of an op without a meta function to check it).
void resize_out(const at::Tensor& out, at::IntArrayRef sizes, at::ScalarType dtype, const char* op);

// t's size along dim; 1 for a 0-d t.
inline int64_t size_at(const at::Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.size(dim); }

// ---- index ranges and data-dependent sizes

// Checks lo <= idx < hi (host or device indices); fail(v) raises the op's
// own error for a value v outside.
void check_index_bounds(const at::Tensor& idx, int64_t lo, int64_t hi, const std::function<void(int64_t)>& fail);

// Marks the index tensor `t` (just written by our op) as within [0, n) when
// it is its whole storage.
void trust_indices(const at::Tensor& t, int64_t n);

// Records the min and max of integer host data just copied into `dst` when
// dst is its whole storage and the copy is small: an index tensor moved to
// the device and out of range then raises at the op that uses it.
void note_host_indices(const at::Tensor& dst, const at::Tensor& host);

// Reads an s64 device value back to the host (a data-dependent size or a
// checked range); `what` names the read in a failure.
std::vector<int64_t> fetch_i64(engine::Ref v, const char* what = "reading an index back");
// Reads a 0-d s64 device value (a data-dependent size).
inline int64_t fetch_count(engine::Ref v) { return fetch_i64(std::move(v))[0]; }
// The number of nonzero elements of v, read back from the device.
int64_t fetch_count_true(engine::Ref v);

}  // namespace tpu
