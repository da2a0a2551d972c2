// torch.autocast("tpu"): registers PyTorch's own autocast wrappers under the
// AutocastPrivateUse1 key with the op lists and cast policies CUDA uses, so
// mixed precision on the tpu behaves exactly like it does on a GPU.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

#include "aten/torch_compat.h"

namespace tpu {

namespace {

// The KERNEL_* macros name these types unqualified.
#if TPU_HAS_DIMNAMES
using at::DimnameList;
#endif
using at::IntArrayRef;
using at::Scalar;
using at::ScalarType;
using at::Tensor;

// binary_cross_entropy is not safe to run in fp16 (CUDA bans it too):
// point users at the fused, autocast-safe alternative.
Tensor binary_cross_entropy_banned(const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast "
              "(their inputs may not be representable in the autocast dtype).\n"
              "Many models use a sigmoid layer right before the binary cross entropy layer: combine them "
              "with torch.nn.functional.binary_cross_entropy_with_logits or torch.nn.BCEWithLogitsLoss, "
              "which are safe to autocast. To run binary_cross_entropy anyway, compute it outside the "
              "autocast region on float32 inputs.");
}

}  // namespace

// Ops without an autocast kernel run unchanged.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define TPU_LOWER_PRECISION_FP(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define TPU_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define TPU_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define TPU_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(TPU_LOWER_PRECISION_FP)
  AT_FORALL_FP32(TPU_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(TPU_FP32_SET_OPT_DTYPE)
#if TPU_AUTOCAST_RMS_NORM_FP32
  TPU_FP32(rms_norm)
#endif
  // norm: redispatched with an appended float32 dtype.
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(TPU_PROMOTE)
#undef TPU_LOWER_PRECISION_FP
#undef TPU_FP32
#undef TPU_FP32_SET_OPT_DTYPE
#undef TPU_PROMOTE
  m.impl(TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"), TORCH_FN(binary_cross_entropy_banned));
}

}  // namespace tpu
