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
  m.impl("tril_indices", &tril_indices);
  m.impl("triu", &triu);
  m.impl("triu.out", &triu_out);
  m.impl("triu_", &triu_);
  m.impl("triu_indices", &triu_indices);
  m.impl("unique_consecutive", &unique_consecutive);

  // ---- random, dropout, ranges (kernels_random.cc)
}

}  // namespace tpu
