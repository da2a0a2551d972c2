// The one table binding ATen op names to tpu kernels, sorted by op name
// within each family. Anything not listed runs through the counted CPU
// fallback (fallback.cc).
#include <torch/library.h>

#include "aten/copy.h"
#include "aten/kernels.h"

namespace tpu {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // ---- storage, views, copies
  m.impl("_copy_from", &_copy_from);
  m.impl("_copy_from_and_resize", &_copy_from_and_resize);
  m.impl("_local_scalar_dense", &_local_scalar_dense);
  m.impl("_reshape_alias", &_reshape_alias);
  m.impl("as_strided", &as_strided);
  m.impl("copy_", &copy_);
  m.impl("empty.memory_format", &empty_memory_format);
  m.impl("empty_strided", &empty_strided);
  m.impl("resize_", &resize_);
  m.impl("set_", &set_empty);
  m.impl("set_.source_Storage", &set_source_storage);
  m.impl("set_.source_Storage_storage_offset", &set_storage);
  m.impl("set_.source_Tensor", &set_source_tensor);
  m.impl("unfold", &unfold);
  m.impl("view", &view);

  // ---- factories and fills
  m.impl("fill_.Scalar", &fill_scalar);
  m.impl("fill_.Tensor", &fill_tensor);
  m.impl("zero_", &zero_);

  // ---- binary arithmetic
  m.impl("add.Tensor", &add_Tensor);
  m.impl("add.out", &add_out);
  m.impl("add_.Tensor", &add__Tensor);
  m.impl("div.Tensor", &div_Tensor);
  m.impl("div.Tensor_mode", &div_Tensor_mode);
  m.impl("div.out", &div_out);
  m.impl("div.out_mode", &div_out_mode);
  m.impl("div_.Tensor", &div__Tensor);
  m.impl("div_.Tensor_mode", &div__Tensor_mode);
  m.impl("mul.Tensor", &mul_Tensor);
  m.impl("mul.out", &mul_out);
  m.impl("mul_.Tensor", &mul__Tensor);
  m.impl("sub.Tensor", &sub_Tensor);
  m.impl("sub.out", &sub_out);
  m.impl("sub_.Tensor", &sub__Tensor);

  // ---- elementwise: unary, comparison, logical, activations (kernels_elementwise.cc)

  // ---- reductions, scans, softmax, losses (kernels_reduction.cc)

  // ---- norms (kernels_norm.cc)

  // ---- matmul family, attention (kernels_linalg.cc)
  m.impl("_fused_sdp_choice", &_fused_sdp_choice);
  m.impl("_scaled_dot_product_fused_attention_overrideable", &_scaled_dot_product_fused_attention_overrideable);
  m.impl("_scaled_dot_product_fused_attention_overrideable_backward",
         &_scaled_dot_product_fused_attention_overrideable_backward);
  m.impl("addbmm", &addbmm);
  m.impl("addbmm.out", &addbmm_out);
  m.impl("addbmm_", &addbmm_);
  m.impl("addmm", &addmm);
  m.impl("addmm.out", &addmm_out);
  m.impl("addmm_", &addmm_);
  m.impl("addmv", &addmv);
  m.impl("addmv.out", &addmv_out);
  m.impl("addmv_", &addmv_);
  m.impl("baddbmm", &baddbmm);
  m.impl("baddbmm.out", &baddbmm_out);
  m.impl("baddbmm_", &baddbmm_);
  m.impl("bmm", &bmm);
  m.impl("bmm.out", &bmm_out);
  m.impl("dot", &dot);
  m.impl("dot.out", &dot_out);
  m.impl("mm", &mm);
  m.impl("mm.out", &mm_out);
  m.impl("mv", &mv);
  m.impl("mv.out", &mv_out);
  m.impl("vdot", &vdot);
  m.impl("vdot.out", &vdot_out);

  // ---- indexing, gather/scatter, cat, sort, pad (kernels_indexing.cc)

  // ---- random, dropout, ranges (kernels_random.cc)
}

}  // namespace tpu
