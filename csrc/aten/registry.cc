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
  m.impl("_log_softmax", &_log_softmax);
  m.impl("_log_softmax.out", &_log_softmax_out);
  m.impl("_log_softmax_backward_data", &_log_softmax_backward_data);
  m.impl("_log_softmax_backward_data.out", &_log_softmax_backward_data_out);
  m.impl("_logcumsumexp", &_logcumsumexp);
  m.impl("_logcumsumexp.out", &_logcumsumexp_out);
  m.impl("_softmax", &_softmax);
  m.impl("_softmax.out", &_softmax_out);
  m.impl("_softmax_backward_data", &_softmax_backward_data);
  m.impl("_softmax_backward_data.out", &_softmax_backward_data_out);
  m.impl("all", &all);
  m.impl("all.all_out", &all_all_out);
  m.impl("all.dim", &all_dim);
  m.impl("all.dims", &all_dims);
  m.impl("all.dims_out", &all_dims_out);
  m.impl("all.out", &all_out);
  m.impl("amax", &amax);
  m.impl("amax.out", &amax_out);
  m.impl("amin", &amin);
  m.impl("amin.out", &amin_out);
  m.impl("aminmax", &aminmax);
  m.impl("aminmax.out", &aminmax_out);
  m.impl("any", &any);
  m.impl("any.all_out", &any_all_out);
  m.impl("any.dim", &any_dim);
  m.impl("any.dims", &any_dims);
  m.impl("any.dims_out", &any_dims_out);
  m.impl("any.out", &any_out);
  m.impl("argmax", &argmax);
  m.impl("argmax.out", &argmax_out);
  m.impl("argmin", &argmin);
  m.impl("argmin.out", &argmin_out);
  m.impl("count_nonzero.dim_IntList", &count_nonzero_dim_IntList);
  m.impl("cumprod", &cumprod);
  m.impl("cumprod.out", &cumprod_out);
  m.impl("cumprod_", &cumprod_);
  m.impl("cumsum", &cumsum);
  m.impl("cumsum.out", &cumsum_out);
  m.impl("cumsum_", &cumsum_);
  m.impl("linalg_vector_norm", &linalg_vector_norm);
  m.impl("linalg_vector_norm.out", &linalg_vector_norm_out);
  m.impl("logsumexp", &logsumexp);
  m.impl("logsumexp.out", &logsumexp_out);
  m.impl("max", &max);
  m.impl("max.dim", &max_dim);
  m.impl("max.dim_max", &max_dim_max);
  m.impl("max.unary_out", &max_unary_out);
  m.impl("mean.dim", &mean_dim);
  m.impl("mean.out", &mean_out);
  m.impl("min", &min);
  m.impl("min.dim", &min_dim);
  m.impl("min.dim_min", &min_dim_min);
  m.impl("min.unary_out", &min_unary_out);
  m.impl("mse_loss", &mse_loss);
  m.impl("mse_loss.out", &mse_loss_out);
  m.impl("mse_loss_backward", &mse_loss_backward);
  m.impl("mse_loss_backward.grad_input", &mse_loss_backward_grad_input);
  m.impl("nll_loss2d_backward", &nll_loss2d_backward);
  m.impl("nll_loss2d_backward.grad_input", &nll_loss2d_backward_grad_input);
  m.impl("nll_loss2d_forward", &nll_loss2d_forward);
  m.impl("nll_loss2d_forward.output", &nll_loss2d_forward_output);
  m.impl("nll_loss_backward", &nll_loss_backward);
  m.impl("nll_loss_backward.grad_input", &nll_loss_backward_grad_input);
  m.impl("nll_loss_forward", &nll_loss_forward);
  m.impl("nll_loss_forward.output", &nll_loss_forward_output);
  m.impl("norm.ScalarOpt_dim", &norm_ScalarOpt_dim);
  m.impl("norm.ScalarOpt_dim_dtype", &norm_ScalarOpt_dim_dtype);
  m.impl("norm.dtype_out", &norm_dtype_out);
  m.impl("norm.out", &norm_out);
  m.impl("prod", &prod);
  m.impl("prod.dim_int", &prod_dim_int);
  m.impl("prod.int_out", &prod_int_out);
  m.impl("std.correction", &std_correction);
  m.impl("std.correction_out", &std_correction_out);
  m.impl("std_mean.correction", &std_mean_correction);
  m.impl("sum.IntList_out", &sum_IntList_out);
  m.impl("sum.dim_IntList", &sum_dim_IntList);
  m.impl("var.correction", &var_correction);
  m.impl("var.correction_out", &var_correction_out);
  m.impl("var_mean.correction", &var_mean_correction);

  // ---- norms (kernels_norm.cc)
  m.impl("_fused_rms_norm", &_fused_rms_norm);
  m.impl("_fused_rms_norm_backward", &_fused_rms_norm_backward);
  m.impl("native_layer_norm", &native_layer_norm);
  m.impl("native_layer_norm_backward", &native_layer_norm_backward);

  // ---- matmul family, attention (kernels_linalg.cc)

  // ---- indexing, gather/scatter, cat, sort, pad (kernels_indexing.cc)

  // ---- random, dropout, ranges (kernels_random.cc)
}

}  // namespace tpu
