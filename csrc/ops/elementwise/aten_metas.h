// TensorIterator configurations of the elementwise and activation ops ATen
// implements without a structured kernel: the ones their CPU kernels build,
// written as structured metas so Kernels::structured registers them. Rest:
// the op's arguments past the tensors (scalars, flags), which do not change
// the output metadata. Only the ATen side (aten*.cc) includes this.
#pragma once

#include <ATen/TensorIterator.h>

namespace tpu::ew {

template <class... Rest>
struct UnaryMeta : at::TensorIteratorBase {
  void meta(const at::Tensor& a, Rest...) { build_borrowing_unary_op(maybe_get_output(), a); }
};

// TensorIterator::unary_float_op (logit): integer inputs compute in float.
template <class... Rest>
struct UnaryFloatMeta : at::TensorIteratorBase {
  void meta(const at::Tensor& a, Rest...) { build_borrowing_unary_float_op(maybe_get_output(), a); }
};

// A bool result (isinf, isnan).
struct BoolUnaryMeta : at::TensorIteratorBase {
  void meta(const at::Tensor& a) { build_borrowing_unary_force_boolean_op(maybe_get_output(), a); }
};

// The output keeps whatever dtype it has (logical_not).
struct AnyOutUnaryMeta : at::TensorIteratorBase {
  void meta(const at::Tensor& a) {
    at::TensorIteratorConfig config;
    config.check_all_same_dtype(false).add_output(maybe_get_output()).add_const_input(a);
    build(config);
  }
};

template <class... Rest>
struct BinaryMeta : at::TensorIteratorBase {
  void meta(const at::Tensor& a, const at::Tensor& b, Rest...) { build_borrowing_binary_op(maybe_get_output(), a, b); }
};

// Inputs promoted to a common dtype, the output keeps its own (logical ops).
struct ComparisonMeta : at::TensorIteratorBase {
  void meta(const at::Tensor& a, const at::Tensor& b) { build_borrowing_comparison_op(maybe_get_output(), a, b); }
};

}  // namespace tpu::ew
