// Complex <-> real views (view_as_real, view_as_complex) and their
// registration. They are plain strided views with a different dtype, made by
// PyTorch's generic view kernels; reading them reinterprets the storage
// (ops::reinterpret_flat splits the pairs), so the family has no lowering.
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>

#include "aten/library.h"

namespace tpu {

namespace {

at::Tensor view_as_complex(const at::Tensor& self) { return at::native::view_as_complex(self); }
at::Tensor view_as_real(const at::Tensor& self) { return at::native::view_as_real(self); }

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("view_as_complex", &view_as_complex);
  m.impl("view_as_real", &view_as_real);
}

}  // namespace tpu
