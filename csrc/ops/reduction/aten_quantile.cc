// quantile / nanquantile with a tensor q: PyTorch's composite with a
// deferred check of q's values in front, registered under PrivateUse1 and
// AutogradPrivateUse1.
#include <ATen/ops/nanquantile_native.h>
#include <ATen/ops/quantile_native.h>

#include "aten/data_checks.h"
#include "aten/library.h"

namespace tpu {

// PyTorch's composite checks q's values only for a CPU q (a CUDA one is
// not checked, to spare a wait): on the tpu the check is deferred, so q
// outside [0, 1] (or NaN) raises the CPU's error instead of reading out of
// the sorted data. The composite itself computes, under autograd (the
// AutogradPrivateUse1 registration) and below it (inference mode).
namespace {

void check_quantile_q(const at::Tensor& self, const at::Tensor& q) {
  // Fake and functional tensors (torch.compile tracing through this
  // registration) hold no device data: their calls go to the composite as
  // they did, like every traced graph's decomposed quantile.
  c10::DispatchKeySet traced({c10::DispatchKey::Python, c10::DispatchKey::Functionalize});
  if (self.key_set().has_any(traced) || q.key_set().has_any(traced)) return;
  // Only where the composite's own checks will pass: a call they refuse
  // raises at once and leaves no check behind.
  at::ScalarType t = self.scalar_type();
  if (self.numel() == 0 || q.dim() > 1 || (t != at::kFloat && t != at::kDouble) || q.scalar_type() != t ||
      q.device() != self.device())
    return;
  check_all_within(q, 0, 1, [] { TORCH_CHECK(false, "quantile() q values must be in the range [0, 1]"); });
}

at::Tensor quantile(const at::Tensor& self, const at::Tensor& q, std::optional<int64_t> dim, bool keepdim,
                    c10::string_view interpolation) {
  check_quantile_q(self, q);
  return at::native::quantile(self, q, dim, keepdim, interpolation);
}
at::Tensor& quantile_out(const at::Tensor& self, const at::Tensor& q, std::optional<int64_t> dim, bool keepdim,
                         c10::string_view interpolation, at::Tensor& out) {
  check_quantile_q(self, q);
  return at::native::quantile_out(self, q, dim, keepdim, interpolation, out);
}
at::Tensor nanquantile(const at::Tensor& self, const at::Tensor& q, std::optional<int64_t> dim, bool keepdim,
                       c10::string_view interpolation) {
  check_quantile_q(self, q);
  return at::native::nanquantile(self, q, dim, keepdim, interpolation);
}
at::Tensor& nanquantile_out(const at::Tensor& self, const at::Tensor& q, std::optional<int64_t> dim, bool keepdim,
                            c10::string_view interpolation, at::Tensor& out) {
  check_quantile_q(self, q);
  return at::native::nanquantile_out(self, q, dim, keepdim, interpolation, out);
}

// The same kernels under both keys.
void register_quantile(Kernels m) {
  m.impl("nanquantile", &nanquantile);
  m.impl("nanquantile.out", &nanquantile_out);
  m.impl("quantile", &quantile);
  m.impl("quantile.out", &quantile_out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { register_quantile(Kernels(m)); }
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) { register_quantile(Kernels(m)); }

}  // namespace tpu
