// Declarations of every native tpu kernel; registry.cc binds them to ATen
// op names. One section per family, in the file that defines them.
#pragma once

#include <ATen/ATen.h>

#include <optional>

namespace tpu {

// ---- copy.h: copy_, _copy_from, _copy_from_and_resize, _local_scalar_dense

// ---- factories.cc
at::Tensor empty_memory_format(c10::SymIntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout> layout, std::optional<at::Device> device,
                               std::optional<bool> pin_memory, std::optional<at::MemoryFormat> memory_format);
at::Tensor empty_strided(c10::SymIntArrayRef size, c10::SymIntArrayRef stride, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout> layout, std::optional<at::Device> device,
                         std::optional<bool> pin_memory);
at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value);
at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value);
at::Tensor& zero_(at::Tensor& self);

// ---- views.cc
at::Tensor view(const at::Tensor& self, c10::SymIntArrayRef size);
at::Tensor as_strided(const at::Tensor& self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                      std::optional<c10::SymInt> storage_offset);
at::Tensor _reshape_alias(const at::Tensor& self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride);
at::Tensor unfold(const at::Tensor& self, int64_t dim, int64_t size, int64_t step);
const at::Tensor& resize_(const at::Tensor& self, c10::SymIntArrayRef size,
                          std::optional<at::MemoryFormat> memory_format);
at::Tensor& set_storage(at::Tensor& self, at::Storage source, c10::SymInt storage_offset,
                        c10::SymIntArrayRef size, c10::SymIntArrayRef stride);
at::Tensor& set_source_storage(at::Tensor& self, at::Storage source);
at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& src);
at::Tensor& set_empty(at::Tensor& self);

// ---- kernels_binary.cc
at::Tensor add_Tensor(const at::Tensor& s, const at::Tensor& o, const at::Scalar& a);
at::Tensor& add__Tensor(at::Tensor& s, const at::Tensor& o, const at::Scalar& a);
at::Tensor& add_out(const at::Tensor& s, const at::Tensor& o, const at::Scalar& a, at::Tensor& out);
at::Tensor sub_Tensor(const at::Tensor& s, const at::Tensor& o, const at::Scalar& a);
at::Tensor& sub__Tensor(at::Tensor& s, const at::Tensor& o, const at::Scalar& a);
at::Tensor& sub_out(const at::Tensor& s, const at::Tensor& o, const at::Scalar& a, at::Tensor& out);
at::Tensor mul_Tensor(const at::Tensor& s, const at::Tensor& o);
at::Tensor& mul__Tensor(at::Tensor& s, const at::Tensor& o);
at::Tensor& mul_out(const at::Tensor& s, const at::Tensor& o, at::Tensor& out);
at::Tensor div_Tensor(const at::Tensor& s, const at::Tensor& o);
at::Tensor& div__Tensor(at::Tensor& s, const at::Tensor& o);
at::Tensor& div_out(const at::Tensor& s, const at::Tensor& o, at::Tensor& out);
at::Tensor div_Tensor_mode(const at::Tensor& s, const at::Tensor& o, std::optional<c10::string_view> md);
at::Tensor& div__Tensor_mode(at::Tensor& s, const at::Tensor& o, std::optional<c10::string_view> md);
at::Tensor& div_out_mode(const at::Tensor& s, const at::Tensor& o, std::optional<c10::string_view> md,
                         at::Tensor& out);

// ---- kernels_elementwise.cc (unary, binary, comparison, logical, activations)

// ---- kernels_reduction.cc (reductions, scans, softmax, losses)
at::Tensor sum_dim_IntList(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                           std::optional<at::ScalarType> dtype);
at::Tensor& sum_IntList_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype, at::Tensor& out);
at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype);
at::Tensor& mean_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype, at::Tensor& out);
at::Tensor prod(const at::Tensor& self, std::optional<at::ScalarType> dtype);
at::Tensor prod_dim_int(const at::Tensor& self, int64_t dim, bool keepdim, std::optional<at::ScalarType> dtype);
at::Tensor& prod_int_out(const at::Tensor& self, int64_t dim, bool keepdim, std::optional<at::ScalarType> dtype,
                         at::Tensor& out);
at::Tensor amax(const at::Tensor& self, at::IntArrayRef dim, bool keepdim);
at::Tensor& amax_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out);
at::Tensor amin(const at::Tensor& self, at::IntArrayRef dim, bool keepdim);
at::Tensor& amin_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out);
std::tuple<at::Tensor, at::Tensor> aminmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim);
std::tuple<at::Tensor&, at::Tensor&> aminmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                                                 at::Tensor& min, at::Tensor& max);
at::Tensor max(const at::Tensor& self);
at::Tensor min(const at::Tensor& self);
at::Tensor& max_unary_out(const at::Tensor& self, at::Tensor& out);
at::Tensor& min_unary_out(const at::Tensor& self, at::Tensor& out);
std::tuple<at::Tensor, at::Tensor> max_dim(const at::Tensor& self, int64_t dim, bool keepdim);
std::tuple<at::Tensor&, at::Tensor&> max_dim_max(const at::Tensor& self, int64_t dim, bool keepdim,
                                                 at::Tensor& max, at::Tensor& max_values);
std::tuple<at::Tensor, at::Tensor> min_dim(const at::Tensor& self, int64_t dim, bool keepdim);
std::tuple<at::Tensor&, at::Tensor&> min_dim_min(const at::Tensor& self, int64_t dim, bool keepdim,
                                                 at::Tensor& min, at::Tensor& min_indices);
at::Tensor argmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim);
at::Tensor& argmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, at::Tensor& out);
at::Tensor argmin(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim);
at::Tensor& argmin_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, at::Tensor& out);
at::Tensor all(const at::Tensor& self);
at::Tensor all_dim(const at::Tensor& self, int64_t dim, bool keepdim);
at::Tensor all_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim);
at::Tensor& all_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& out);
at::Tensor& all_dims_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, at::Tensor& out);
at::Tensor& all_all_out(const at::Tensor& self, at::Tensor& out);
at::Tensor any(const at::Tensor& self);
at::Tensor any_dim(const at::Tensor& self, int64_t dim, bool keepdim);
at::Tensor any_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim);
at::Tensor& any_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& out);
at::Tensor& any_dims_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, at::Tensor& out);
at::Tensor& any_all_out(const at::Tensor& self, at::Tensor& out);
at::Tensor var_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                          const std::optional<at::Scalar>& correction, bool keepdim);
at::Tensor& var_correction_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                               const std::optional<at::Scalar>& correction, bool keepdim, at::Tensor& out);
at::Tensor std_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                          const std::optional<at::Scalar>& correction, bool keepdim);
at::Tensor& std_correction_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                               const std::optional<at::Scalar>& correction, bool keepdim, at::Tensor& out);
std::tuple<at::Tensor, at::Tensor> var_mean_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                                       const std::optional<at::Scalar>& correction, bool keepdim);
std::tuple<at::Tensor, at::Tensor> std_mean_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                                       const std::optional<at::Scalar>& correction, bool keepdim);
at::Tensor logsumexp(const at::Tensor& self, at::IntArrayRef dim, bool keepdim);
at::Tensor& logsumexp_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out);
at::Tensor linalg_vector_norm(const at::Tensor& self, const at::Scalar& ord, at::OptionalIntArrayRef dim,
                              bool keepdim, std::optional<at::ScalarType> dtype);
at::Tensor& linalg_vector_norm_out(const at::Tensor& self, const at::Scalar& ord, at::OptionalIntArrayRef dim,
                                   bool keepdim, std::optional<at::ScalarType> dtype, at::Tensor& out);
at::Tensor norm_ScalarOpt_dim(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim,
                              bool keepdim);
at::Tensor norm_ScalarOpt_dim_dtype(const at::Tensor& self, const std::optional<at::Scalar>& p,
                                    at::IntArrayRef dim, bool keepdim, at::ScalarType dtype);
at::Tensor& norm_out(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim, bool keepdim,
                     at::Tensor& out);
at::Tensor& norm_dtype_out(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim,
                           bool keepdim, at::ScalarType dtype, at::Tensor& out);
at::Tensor count_nonzero_dim_IntList(const at::Tensor& self, at::IntArrayRef dim);
at::Tensor cumsum(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype);
at::Tensor& cumsum_(at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype);
at::Tensor& cumsum_out(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype, at::Tensor& out);
at::Tensor cumprod(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype);
at::Tensor& cumprod_(at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype);
at::Tensor& cumprod_out(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype, at::Tensor& out);
at::Tensor _logcumsumexp(const at::Tensor& self, int64_t dim);
at::Tensor& _logcumsumexp_out(const at::Tensor& self, int64_t dim, at::Tensor& out);
at::Tensor _softmax(const at::Tensor& self, int64_t dim, bool half_to_float);
at::Tensor& _softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float, at::Tensor& out);
at::Tensor _log_softmax(const at::Tensor& self, int64_t dim, bool half_to_float);
at::Tensor& _log_softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float, at::Tensor& out);
at::Tensor _softmax_backward_data(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                  at::ScalarType input_dtype);
at::Tensor& _softmax_backward_data_out(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                       at::ScalarType input_dtype, at::Tensor& grad_input);
at::Tensor _log_softmax_backward_data(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                      at::ScalarType input_dtype);
at::Tensor& _log_softmax_backward_data_out(const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                                           at::ScalarType input_dtype, at::Tensor& out);
std::tuple<at::Tensor, at::Tensor> nll_loss_forward(const at::Tensor& self, const at::Tensor& target,
                                                    const std::optional<at::Tensor>& weight, int64_t reduction,
                                                    c10::SymInt ignore_index);
std::tuple<at::Tensor&, at::Tensor&> nll_loss_forward_output(const at::Tensor& self, const at::Tensor& target,
                                                             const std::optional<at::Tensor>& weight,
                                                             int64_t reduction, c10::SymInt ignore_index,
                                                             at::Tensor& output, at::Tensor& total_weight);
at::Tensor nll_loss_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                             const std::optional<at::Tensor>& weight, int64_t reduction, c10::SymInt ignore_index,
                             const at::Tensor& total_weight);
at::Tensor& nll_loss_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                         const std::optional<at::Tensor>& weight, int64_t reduction,
                                         c10::SymInt ignore_index, const at::Tensor& total_weight,
                                         at::Tensor& grad_input);
std::tuple<at::Tensor, at::Tensor> nll_loss2d_forward(const at::Tensor& self, const at::Tensor& target,
                                                      const std::optional<at::Tensor>& weight, int64_t reduction,
                                                      c10::SymInt ignore_index);
std::tuple<at::Tensor&, at::Tensor&> nll_loss2d_forward_output(const at::Tensor& self, const at::Tensor& target,
                                                               const std::optional<at::Tensor>& weight,
                                                               int64_t reduction, c10::SymInt ignore_index,
                                                               at::Tensor& output, at::Tensor& total_weight);
at::Tensor nll_loss2d_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                               const std::optional<at::Tensor>& weight, int64_t reduction, c10::SymInt ignore_index,
                               const at::Tensor& total_weight);
at::Tensor& nll_loss2d_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                           const std::optional<at::Tensor>& weight, int64_t reduction,
                                           c10::SymInt ignore_index, const at::Tensor& total_weight,
                                           at::Tensor& grad_input);
at::Tensor mse_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction);
at::Tensor& mse_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, at::Tensor& out);
at::Tensor mse_loss_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                             int64_t reduction);
at::Tensor& mse_loss_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                         int64_t reduction, at::Tensor& grad_input);

// ---- kernels_norm.cc (layer norm, rms norm)
std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm(const at::Tensor& input,
                                                                 c10::SymIntArrayRef normalized_shape,
                                                                 const std::optional<at::Tensor>& weight,
                                                                 const std::optional<at::Tensor>& bias, double eps);
std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, c10::SymIntArrayRef normalized_shape, const at::Tensor& mean,
    const at::Tensor& rstd, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    std::array<bool, 3> output_mask);
std::tuple<at::Tensor, at::Tensor> _fused_rms_norm(const at::Tensor& input, at::IntArrayRef normalized_shape,
                                                   const std::optional<at::Tensor>& weight, std::optional<double> eps);
std::tuple<at::Tensor, at::Tensor> _fused_rms_norm_backward(const at::Tensor& grad_out, const at::Tensor& input,
                                                            at::IntArrayRef normalized_shape, const at::Tensor& rstd,
                                                            const std::optional<at::Tensor>& weight,
                                                            std::array<bool, 2> output_mask);

// ---- kernels_linalg.cc (matmul family, attention)

// ---- kernels_indexing.cc (gather/scatter, index, cat, sort, pad, tri)

// ---- kernels_random.cc (random fills, dropout, arange/linspace/eye)

}  // namespace tpu
