// The one table binding ATen op names to tpu kernels, sorted by op name
// within each family. Anything not listed runs through the counted CPU
// fallback (fallback.cc).
#include <torch/library.h>

#include "aten/copy.h"
#include "aten/data_checks.h"
#include "aten/kernels.h"
#include "aten/library.h"

namespace tpu {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
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

  // ---- checks of values (data_checks.cc)
  m.impl("_assert_async", &_assert_async);
  m.impl("_assert_async.msg", &_assert_async_msg);

  // ---- factories and fills
  m.impl("arange.start_out", &arange_start_out);
  m.impl("eye.m_out", &eye_m_out);
  m.impl("eye.out", &eye_out);
  m.impl("fill_.Scalar", &fill_scalar);
  m.impl("fill_.Tensor", &fill_tensor);
  m.impl("linspace.out", &linspace_out);
  m.impl("logspace.out", &logspace_out);
  m.impl("tril_indices", &tril_indices);
  m.impl("triu_indices", &triu_indices);
  m.impl("zero_", &zero_);

  // ---- reductions, scans, losses (kernels_reduction.cc)
  m.impl("_logcumsumexp", &_logcumsumexp);
  m.impl("_logcumsumexp.out", &_logcumsumexp_out);
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
  m.impl("_index_put_impl_", &_index_put_impl_);
  m.impl("_unique2", &_unique2);
  m.impl("cat", &cat);
  m.impl("cat.out", &cat_out);
  m.impl("constant_pad_nd", &constant_pad_nd);
  m.impl("embedding_dense_backward", &embedding_dense_backward);
  m.impl("flip", &flip);
  m.impl("gather", &gather);
  m.impl("gather.out", &gather_out);
  m.impl("index.Tensor", &index_Tensor);
  m.impl("index.Tensor_out", &index_Tensor_out);
  m.impl("index_add", &index_add);
  m.impl("index_add.out", &index_add_out);
  m.impl("index_add_", &index_add_);
  m.impl("index_copy", &index_copy);
  m.impl("index_copy.out", &index_copy_out);
  m.impl("index_copy_", &index_copy_);
  m.impl("index_fill_.int_Scalar", &index_fill__int_Scalar);
  m.impl("index_fill_.int_Tensor", &index_fill__int_Tensor);
  m.impl("index_select", &index_select);
  m.impl("index_select.out", &index_select_out);
  m.impl("kthvalue", &kthvalue);
  m.impl("kthvalue.values", &kthvalue_values);
  m.impl("masked_scatter_", &masked_scatter_);
  m.impl("masked_select", &masked_select);
  m.impl("masked_select.out", &masked_select_out);
  m.impl("median", &median);
  m.impl("median.dim_values", &median_dim_values);
  m.impl("nanmedian", &nanmedian);
  m.impl("nanmedian.dim_values", &nanmedian_dim_values);
  m.impl("nonzero", &nonzero);
  m.impl("nonzero.out", &nonzero_out);
  m.impl("nonzero_static", &nonzero_static);
  m.impl("nonzero_static.out", &nonzero_static_out);
  m.impl("one_hot", &one_hot);
  m.impl("repeat_interleave.Tensor", &repeat_interleave_Tensor);
  m.impl("roll", &roll);
  m.impl("scatter.reduce", &scatter_reduce);
  m.impl("scatter.reduce_out", &scatter_reduce_out);
  m.impl("scatter.src", &scatter_src);
  m.impl("scatter.src_out", &scatter_src_out);
  m.impl("scatter.value", &scatter_value);
  m.impl("scatter.value_out", &scatter_value_out);
  m.impl("scatter.value_reduce", &scatter_value_reduce);
  m.impl("scatter.value_reduce_out", &scatter_value_reduce_out);
  m.impl("scatter_.reduce", &scatter__reduce);
  m.impl("scatter_.src", &scatter__src);
  m.impl("scatter_.value", &scatter__value);
  m.impl("scatter_.value_reduce", &scatter__value_reduce);
  m.impl("scatter_add", &scatter_add);
  m.impl("scatter_add.out", &scatter_add_out);
  m.impl("scatter_add_", &scatter_add_);
  m.impl("scatter_reduce.two", &scatter_reduce_two);
  m.impl("scatter_reduce.two_out", &scatter_reduce_two_out);
  m.impl("scatter_reduce_.two", &scatter_reduce__two);
  m.impl("sort.stable", &sort_stable);
  m.impl("sort.values_stable", &sort_values_stable);
  m.impl("take", &take);
  m.impl("take.out", &take_out);
  m.impl("topk", &topk);
  m.impl("topk.values", &topk_values);
  m.impl("tril", &tril);
  m.impl("tril.out", &tril_out);
  m.impl("tril_", &tril_);
  m.impl("triu", &triu);
  m.impl("triu.out", &triu_out);
  m.impl("triu_", &triu_);
  m.impl("unique_consecutive", &unique_consecutive);

  // ---- random, dropout, ranges (kernels_random.cc)
  m.impl("bernoulli.out", &bernoulli_out);
  m.impl("bernoulli_.Tensor", &bernoulli__Tensor);
  m.impl("bernoulli_.float", &bernoulli__float);
  m.impl("cauchy_", &cauchy_);
  m.impl("exponential_", &exponential_);
  m.impl("geometric_", &geometric_);
  m.impl("log_normal_", &log_normal_);
  m.impl("multinomial", &multinomial);
  m.impl("multinomial.out", &multinomial_out);
  m.impl("native_dropout", &native_dropout);
  m.impl("native_dropout_backward", &native_dropout_backward);
  m.impl("normal.Tensor_Tensor", &normal_Tensor_Tensor);
  m.impl("normal.Tensor_Tensor_out", &normal_Tensor_Tensor_out);
  m.impl("normal.Tensor_float", &normal_Tensor_float);
  m.impl("normal.Tensor_float_out", &normal_Tensor_float_out);
  m.impl("normal.float_Tensor", &normal_float_Tensor);
  m.impl("normal.float_Tensor_out", &normal_float_Tensor_out);
  m.impl("normal_", &normal_);
  m.impl("random_", &random_);
  m.impl("random_.from", &random_from);
  m.impl("random_.to", &random_to);
  m.impl("randperm.generator_out", &randperm_generator_out);
  m.impl("uniform_", &uniform_);

  // ---- membership (kernels_membership.cc)
  m.impl("isin.Scalar_Tensor", &isin_Scalar_Tensor);
  m.impl("isin.Tensor_Scalar", &isin_Tensor_Scalar);
  m.impl("isin.Tensor_Tensor", &isin_Tensor_Tensor);
  m.impl("isin.Tensor_Tensor_out", &isin_Tensor_Tensor_out);

  // ---- convolution, complex views, grouped mm (kernels_conv.cc, kernels_grouped_mm.cc)
  m.impl("_grouped_mm", &_grouped_mm);
  m.impl("convolution_backward_overrideable", &convolution_backward_overrideable);
  m.impl("convolution_overrideable", &convolution_overrideable);
  m.impl("view_as_complex", &view_as_complex);
  m.impl("view_as_real", &view_as_real);

  // ---- amp: GradScaler's native ops (kernels_amp.cc; autocast kernels are in autocast.cc)
  m.impl("_amp_foreach_non_finite_check_and_unscale_", &_amp_foreach_non_finite_check_and_unscale_);
  m.impl("_amp_update_scale_", &_amp_update_scale_);

  // ---- ops Hugging Face models need (kernels_models.cc)
  m.impl("_has_compatible_shallow_copy_type", &_has_compatible_shallow_copy_type);
  m.impl("histc", &histc);
  m.impl("histc.out", &histc_out);

  // ---- coverage: ops that used to fall back to the CPU (kernels_coverage*.cc)
  m.impl("_adaptive_avg_pool2d", &cov::_adaptive_avg_pool2d);
  m.impl("_adaptive_avg_pool2d.out", &cov::_adaptive_avg_pool2d_out);
  m.impl("_adaptive_avg_pool2d_backward", &cov::_adaptive_avg_pool2d_backward);
  m.impl("_adaptive_avg_pool3d", &cov::_adaptive_avg_pool3d);
  m.impl("_adaptive_avg_pool3d.out", &cov::_adaptive_avg_pool3d_out);
  m.impl("_adaptive_avg_pool3d_backward", &cov::_adaptive_avg_pool3d_backward);
  m.impl("_cummax_helper", &cov::_cummax_helper);
  m.impl("_cummin_helper", &cov::_cummin_helper);
  m.impl("_fft_c2c", &cov::_fft_c2c);
  m.impl("_fft_c2c.out", &cov::_fft_c2c_out);
  m.impl("_fft_c2r", &cov::_fft_c2r);
  m.impl("_fft_c2r.out", &cov::_fft_c2r_out);
  m.impl("_fft_r2c", &cov::_fft_r2c);
  m.impl("_fft_r2c.out", &cov::_fft_r2c_out);
  m.impl("adaptive_max_pool2d", &cov::adaptive_max_pool2d);
  m.impl("adaptive_max_pool2d.out", &cov::adaptive_max_pool2d_out);
  m.impl("adaptive_max_pool2d_backward", &cov::adaptive_max_pool2d_backward);
  m.impl("adaptive_max_pool2d_backward.grad_input", &cov::adaptive_max_pool2d_backward_out);
  m.impl("adaptive_max_pool3d", &cov::adaptive_max_pool3d);
  m.impl("adaptive_max_pool3d.out", &cov::adaptive_max_pool3d_out);
  m.impl("adaptive_max_pool3d_backward", &cov::adaptive_max_pool3d_backward);
  m.impl("adaptive_max_pool3d_backward.grad_input", &cov::adaptive_max_pool3d_backward_out);
  m.impl("avg_pool2d", &cov::avg_pool2d);
  m.impl("avg_pool2d.out", &cov::avg_pool2d_out);
  m.impl("avg_pool2d_backward", &cov::avg_pool2d_backward);
  m.impl("avg_pool2d_backward.grad_input", &cov::avg_pool2d_backward_out);
  m.impl("avg_pool3d", &cov::avg_pool3d);
  m.impl("avg_pool3d.out", &cov::avg_pool3d_out);
  m.impl("avg_pool3d_backward", &cov::avg_pool3d_backward);
  m.impl("avg_pool3d_backward.grad_input", &cov::avg_pool3d_backward_out);
  m.impl("binary_cross_entropy", &cov::binary_cross_entropy);
  m.impl("binary_cross_entropy.out", &cov::binary_cross_entropy_out);
  m.impl("binary_cross_entropy_backward", &cov::binary_cross_entropy_backward);
  m.impl("binary_cross_entropy_backward.grad_input", &cov::binary_cross_entropy_backward_out);
  m.impl("bincount", &cov::bincount);
  m.impl("bucketize.Scalar", &cov::bucketize_Scalar);
  m.impl("bucketize.Tensor", &cov::bucketize_Tensor);
  m.impl("bucketize.Tensor_out", &cov::bucketize_Tensor_out);
  m.impl("equal", &cov::equal);
  m.impl("huber_loss", &cov::huber_loss);
  m.impl("huber_loss.out", &cov::huber_loss_out);
  m.impl("huber_loss_backward", &cov::huber_loss_backward);
  m.impl("huber_loss_backward.out", &cov::huber_loss_backward_out);
  m.impl("index_reduce", &cov::index_reduce);
  m.impl("index_reduce.out", &cov::index_reduce_out);
  m.impl("index_reduce_", &cov::index_reduce_);
  m.impl("linalg_cross", &cov::linalg_cross);
  m.impl("linalg_cross.out", &cov::linalg_cross_out);
  m.impl("max_pool2d_with_indices", &cov::max_pool2d_with_indices);
  m.impl("max_pool2d_with_indices.out", &cov::max_pool2d_with_indices_out);
  m.impl("max_pool2d_with_indices_backward", &cov::max_pool2d_with_indices_backward);
  m.impl("max_pool2d_with_indices_backward.grad_input", &cov::max_pool2d_with_indices_backward_out);
  m.impl("max_pool3d_with_indices", &cov::max_pool3d_with_indices);
  m.impl("max_pool3d_with_indices.out", &cov::max_pool3d_with_indices_out);
  m.impl("max_pool3d_with_indices_backward", &cov::max_pool3d_with_indices_backward);
  m.impl("max_pool3d_with_indices_backward.grad_input", &cov::max_pool3d_with_indices_backward_out);
  m.impl("max_unpool2d", &cov::max_unpool2d);
  m.impl("max_unpool2d.out", &cov::max_unpool2d_out);
  m.impl("max_unpool3d", &cov::max_unpool3d);
  m.impl("max_unpool3d.out", &cov::max_unpool3d_out);
  m.impl("nansum", &cov::nansum);
  m.impl("nansum.out", &cov::nansum_out);
  m.impl("renorm", &cov::renorm);
  m.impl("renorm.out", &cov::renorm_out);
  m.impl("renorm_", &cov::renorm_);
  m.impl("searchsorted.Scalar", &cov::searchsorted_Scalar);
  m.impl("searchsorted.Scalar_out", &cov::searchsorted_Scalar_out);
  m.impl("searchsorted.Tensor", &cov::searchsorted_Tensor);
  m.impl("searchsorted.Tensor_out", &cov::searchsorted_Tensor_out);
  m.impl("smooth_l1_loss", &cov::smooth_l1_loss);
  m.impl("smooth_l1_loss.out", &cov::smooth_l1_loss_out);
  m.impl("smooth_l1_loss_backward", &cov::smooth_l1_loss_backward);
  m.impl("smooth_l1_loss_backward.grad_input", &cov::smooth_l1_loss_backward_out);
  m.impl("trace", &cov::trace);
}

}  // namespace tpu
