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
}

}  // namespace tpu
