// Declarations of every native tpu kernel; registry.cc binds them to ATen
// op names. One section per family, in the file that defines them.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <tuple>

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
at::Tensor& arange_start_out(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step, at::Tensor& out);
at::Tensor& linspace_out(const at::Scalar& start, const at::Scalar& end, int64_t steps, at::Tensor& out);
at::Tensor& logspace_out(const at::Scalar& start, const at::Scalar& end, int64_t steps, double base, at::Tensor& out);
at::Tensor& eye_out(c10::SymInt n, at::Tensor& out);
at::Tensor& eye_m_out(c10::SymInt n, c10::SymInt m, at::Tensor& out);
at::Tensor tril_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout, std::optional<at::Device> device,
                        std::optional<bool> pin_memory);
at::Tensor triu_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout, std::optional<at::Device> device,
                        std::optional<bool> pin_memory);

// ---- views.cc
at::Tensor view(const at::Tensor& self, c10::SymIntArrayRef size);
at::Tensor as_strided(const at::Tensor& self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                      std::optional<c10::SymInt> storage_offset);
at::Tensor _reshape_alias(const at::Tensor& self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride);
at::Tensor unfold(const at::Tensor& self, int64_t dim, int64_t size, int64_t step);
const at::Tensor& resize_(const at::Tensor& self, c10::SymIntArrayRef size,
                          std::optional<at::MemoryFormat> memory_format);
at::Tensor& set_storage(at::Tensor& self, at::Storage source, c10::SymInt storage_offset, c10::SymIntArrayRef size,
                        c10::SymIntArrayRef stride);
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
at::Tensor& div_out_mode(const at::Tensor& s, const at::Tensor& o, std::optional<c10::string_view> md, at::Tensor& out);

// ---- kernels_elementwise.cc, kernels_binary.cc (namespace ew): unary,
// binary, comparison, logical, activations. Names follow the ATen overloads:
// NAME (functional), NAME_ (in-place), NAME_out (out=), with the overload name
// appended where ATen has one (add_Tensor style).
namespace ew {

// clang-format off: macro lists, several entries to a line
#define TPU_EW_UNARY(n)                       \
  at::Tensor n(const at::Tensor& self);       \
  at::Tensor& n##_(at::Tensor& self);         \
  at::Tensor& n##_out(const at::Tensor& self, at::Tensor& out);
TPU_EW_UNARY(abs) TPU_EW_UNARY(acos) TPU_EW_UNARY(acosh) TPU_EW_UNARY(asin) TPU_EW_UNARY(asinh)
TPU_EW_UNARY(atan) TPU_EW_UNARY(atanh) TPU_EW_UNARY(bitwise_not) TPU_EW_UNARY(ceil) TPU_EW_UNARY(cos)
TPU_EW_UNARY(cosh) TPU_EW_UNARY(digamma) TPU_EW_UNARY(erf) TPU_EW_UNARY(erfc) TPU_EW_UNARY(erfinv) TPU_EW_UNARY(exp)
TPU_EW_UNARY(exp2) TPU_EW_UNARY(expm1) TPU_EW_UNARY(floor) TPU_EW_UNARY(frac) TPU_EW_UNARY(hardsigmoid)
TPU_EW_UNARY(hardswish) TPU_EW_UNARY(lgamma) TPU_EW_UNARY(log) TPU_EW_UNARY(log10) TPU_EW_UNARY(log1p)
TPU_EW_UNARY(log2)
TPU_EW_UNARY(logical_not) TPU_EW_UNARY(mish) TPU_EW_UNARY(neg) TPU_EW_UNARY(reciprocal) TPU_EW_UNARY(round)
TPU_EW_UNARY(rsqrt) TPU_EW_UNARY(sgn) TPU_EW_UNARY(sigmoid) TPU_EW_UNARY(sign) TPU_EW_UNARY(silu)
TPU_EW_UNARY(sin) TPU_EW_UNARY(sinc) TPU_EW_UNARY(sinh) TPU_EW_UNARY(sqrt) TPU_EW_UNARY(tan) TPU_EW_UNARY(tanh) TPU_EW_UNARY(trunc)
#undef TPU_EW_UNARY
at::Tensor round_decimals(const at::Tensor& self, int64_t decimals);
at::Tensor& round__decimals(at::Tensor& self, int64_t decimals);
at::Tensor& round_decimals_out(const at::Tensor& self, int64_t decimals, at::Tensor& out);
at::Tensor isinf(const at::Tensor& self);
at::Tensor isnan(const at::Tensor& self);
at::Tensor isneginf(const at::Tensor& self);
at::Tensor& isneginf_out(const at::Tensor& self, at::Tensor& out);
at::Tensor isposinf(const at::Tensor& self);
at::Tensor& isposinf_out(const at::Tensor& self, at::Tensor& out);
at::Tensor signbit(const at::Tensor& self);
at::Tensor& signbit_out(const at::Tensor& self, at::Tensor& out);
at::Tensor nan_to_num(const at::Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                      std::optional<double> neginf);
at::Tensor& nan_to_num_(at::Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                        std::optional<double> neginf);
at::Tensor& nan_to_num_out(const at::Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                           std::optional<double> neginf, at::Tensor& out);

// activations and their backward formulas
at::Tensor relu(const at::Tensor& self);
at::Tensor& relu_(at::Tensor& self);
at::Tensor threshold(const at::Tensor& self, const at::Scalar& threshold, const at::Scalar& value);
at::Tensor& threshold_(at::Tensor& self, const at::Scalar& threshold, const at::Scalar& value);
at::Tensor& threshold_out(const at::Tensor& self, const at::Scalar& threshold, const at::Scalar& value,
                          at::Tensor& out);
at::Tensor threshold_backward(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& threshold);
at::Tensor& threshold_backward_grad_input(const at::Tensor& grad, const at::Tensor& self,
                                          const at::Scalar& threshold, at::Tensor& grad_input);
at::Tensor gelu(const at::Tensor& self, c10::string_view approximate);
at::Tensor& gelu_(at::Tensor& self, c10::string_view approximate);
at::Tensor& gelu_out(const at::Tensor& self, c10::string_view approximate, at::Tensor& out);
at::Tensor gelu_backward(const at::Tensor& grad, const at::Tensor& self, c10::string_view approximate);
at::Tensor& gelu_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, c10::string_view approximate,
                                     at::Tensor& grad_input);
at::Tensor hardsigmoid_backward(const at::Tensor& grad, const at::Tensor& self);
at::Tensor& hardsigmoid_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, at::Tensor& grad_input);
at::Tensor hardswish_backward(const at::Tensor& grad, const at::Tensor& self);
at::Tensor sigmoid_backward(const at::Tensor& grad, const at::Tensor& output);
at::Tensor& sigmoid_backward_grad_input(const at::Tensor& grad, const at::Tensor& output, at::Tensor& grad_input);
at::Tensor silu_backward(const at::Tensor& grad, const at::Tensor& self);
at::Tensor& silu_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, at::Tensor& grad_input);
at::Tensor tanh_backward(const at::Tensor& grad, const at::Tensor& output);
at::Tensor& tanh_backward_grad_input(const at::Tensor& grad, const at::Tensor& output, at::Tensor& grad_input);
at::Tensor mish_backward(const at::Tensor& grad, const at::Tensor& self);
at::Tensor leaky_relu(const at::Tensor& self, const at::Scalar& slope);
at::Tensor& leaky_relu_(at::Tensor& self, const at::Scalar& slope);
at::Tensor& leaky_relu_out(const at::Tensor& self, const at::Scalar& slope, at::Tensor& out);
at::Tensor leaky_relu_backward(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& slope,
                               bool self_is_result);
at::Tensor& leaky_relu_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& slope,
                                           bool self_is_result, at::Tensor& grad_input);
at::Tensor elu(const at::Tensor& self, const at::Scalar& alpha, const at::Scalar& scale,
               const at::Scalar& input_scale);
at::Tensor& elu_(at::Tensor& self, const at::Scalar& alpha, const at::Scalar& scale, const at::Scalar& input_scale);
at::Tensor& elu_out(const at::Tensor& self, const at::Scalar& alpha, const at::Scalar& scale,
                    const at::Scalar& input_scale, at::Tensor& out);
at::Tensor elu_backward(const at::Tensor& grad, const at::Scalar& alpha, const at::Scalar& scale,
                        const at::Scalar& input_scale, bool is_result, const at::Tensor& self_or_result);
at::Tensor& elu_backward_grad_input(const at::Tensor& grad, const at::Scalar& alpha, const at::Scalar& scale,
                                    const at::Scalar& input_scale, bool is_result, const at::Tensor& self_or_result,
                                    at::Tensor& grad_input);
at::Tensor hardtanh(const at::Tensor& self, const at::Scalar& min_val, const at::Scalar& max_val);
at::Tensor& hardtanh_(at::Tensor& self, const at::Scalar& min_val, const at::Scalar& max_val);
at::Tensor& hardtanh_out(const at::Tensor& self, const at::Scalar& min_val, const at::Scalar& max_val,
                         at::Tensor& out);
at::Tensor hardtanh_backward(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& min_val,
                             const at::Scalar& max_val);
at::Tensor& hardtanh_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& min_val,
                                         const at::Scalar& max_val, at::Tensor& grad_input);
at::Tensor softplus(const at::Tensor& self, const at::Scalar& beta, const at::Scalar& threshold);
at::Tensor& softplus_out(const at::Tensor& self, const at::Scalar& beta, const at::Scalar& threshold,
                         at::Tensor& out);
at::Tensor softplus_backward(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& beta,
                             const at::Scalar& threshold);
at::Tensor& softplus_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& beta,
                                         const at::Scalar& threshold, at::Tensor& grad_input);
at::Tensor hardshrink(const at::Tensor& self, const at::Scalar& lambd);
at::Tensor& hardshrink_out(const at::Tensor& self, const at::Scalar& lambd, at::Tensor& out);
at::Tensor hardshrink_backward(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& lambd);
at::Tensor& hardshrink_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& lambd,
                                           at::Tensor& grad_input);
at::Tensor softshrink(const at::Tensor& self, const at::Scalar& lambd);
at::Tensor& softshrink_out(const at::Tensor& self, const at::Scalar& lambd, at::Tensor& out);
at::Tensor softshrink_backward(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& lambd);
at::Tensor& softshrink_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& lambd,
                                           at::Tensor& grad_input);
at::Tensor polygamma(int64_t n, const at::Tensor& self);
at::Tensor& polygamma_(at::Tensor& self, int64_t n);
at::Tensor& polygamma_out(int64_t n, const at::Tensor& self, at::Tensor& out);
at::Tensor logit(const at::Tensor& self, std::optional<double> eps);
at::Tensor& logit_(at::Tensor& self, std::optional<double> eps);
at::Tensor& logit_out(const at::Tensor& self, std::optional<double> eps, at::Tensor& out);
at::Tensor logit_backward(const at::Tensor& grad, const at::Tensor& self, std::optional<double> eps);
at::Tensor& logit_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, std::optional<double> eps,
                                      at::Tensor& grad_input);
std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& self);
std::tuple<at::Tensor&, at::Tensor&> log_sigmoid_forward_output(const at::Tensor& self, at::Tensor& output,
                                                                at::Tensor& buffer);
at::Tensor log_sigmoid_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& buffer);
at::Tensor& log_sigmoid_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& buffer,
                                            at::Tensor& grad_input);

// clamp, where, masked_fill
at::Tensor clamp(const at::Tensor& self, const std::optional<at::Scalar>& min, const std::optional<at::Scalar>& max);
at::Tensor& clamp_(at::Tensor& self, const std::optional<at::Scalar>& min, const std::optional<at::Scalar>& max);
at::Tensor& clamp_out(const at::Tensor& self, const std::optional<at::Scalar>& min,
                      const std::optional<at::Scalar>& max, at::Tensor& out);
at::Tensor clamp_Tensor(const at::Tensor& self, const std::optional<at::Tensor>& min,
                        const std::optional<at::Tensor>& max);
at::Tensor& clamp__Tensor(at::Tensor& self, const std::optional<at::Tensor>& min, const std::optional<at::Tensor>& max);
at::Tensor& clamp_Tensor_out(const at::Tensor& self, const std::optional<at::Tensor>& min,
                             const std::optional<at::Tensor>& max, at::Tensor& out);
#define TPU_EW_CLAMP_ONE(n)                                                          \
  at::Tensor n(const at::Tensor& self, const at::Scalar& v);                         \
  at::Tensor& n##_(at::Tensor& self, const at::Scalar& v);                           \
  at::Tensor& n##_out(const at::Tensor& self, const at::Scalar& v, at::Tensor& out); \
  at::Tensor n##_Tensor(const at::Tensor& self, const at::Tensor& v);                \
  at::Tensor& n##__Tensor(at::Tensor& self, const at::Tensor& v);                    \
  at::Tensor& n##_Tensor_out(const at::Tensor& self, const at::Tensor& v, at::Tensor& out);
TPU_EW_CLAMP_ONE(clamp_max) TPU_EW_CLAMP_ONE(clamp_min)
#undef TPU_EW_CLAMP_ONE
at::Tensor where_self(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other);
at::Tensor& where_self_out(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other,
                           at::Tensor& out);
at::Tensor masked_fill_Scalar(const at::Tensor& self, const at::Tensor& mask, const at::Scalar& value);
at::Tensor masked_fill_Tensor(const at::Tensor& self, const at::Tensor& mask, const at::Tensor& value);
at::Tensor& masked_fill__Scalar(at::Tensor& self, const at::Tensor& mask, const at::Scalar& value);
at::Tensor& masked_fill__Tensor(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value);

// binary ops (kernels_binary.cc)
#define TPU_EW_BINARY_FN(fn) at::Tensor fn(const at::Tensor& self, const at::Tensor& other);
#define TPU_EW_BINARY_INPLACE(fn) at::Tensor& fn(at::Tensor& self, const at::Tensor& other);
#define TPU_EW_BINARY_OUT(fn) at::Tensor& fn(const at::Tensor& self, const at::Tensor& other, at::Tensor& out);
#define TPU_EW_BINARY3(n) TPU_EW_BINARY_FN(n) TPU_EW_BINARY_INPLACE(n##_) TPU_EW_BINARY_OUT(n##_out)
#define TPU_EW_BINARY3_T(n) \
  TPU_EW_BINARY_FN(n##_Tensor) TPU_EW_BINARY_INPLACE(n##__Tensor) TPU_EW_BINARY_OUT(n##_Tensor_out)
TPU_EW_BINARY3(atan2) TPU_EW_BINARY3(heaviside) TPU_EW_BINARY3(hypot) TPU_EW_BINARY3(logical_and) TPU_EW_BINARY3(logical_or)
TPU_EW_BINARY3(logical_xor)
TPU_EW_BINARY3_T(bitwise_and) TPU_EW_BINARY3_T(bitwise_or) TPU_EW_BINARY3_T(bitwise_xor) TPU_EW_BINARY3_T(fmod)
TPU_EW_BINARY3_T(remainder)
TPU_EW_BINARY_FN(copysign_Tensor) TPU_EW_BINARY_INPLACE(copysign__Tensor) TPU_EW_BINARY_OUT(copysign_out)
TPU_EW_BINARY_FN(xlogy_Tensor) TPU_EW_BINARY_INPLACE(xlogy__Tensor) TPU_EW_BINARY_OUT(xlogy_OutTensor)
TPU_EW_BINARY_FN(floor_divide) TPU_EW_BINARY_INPLACE(floor_divide__Tensor) TPU_EW_BINARY_OUT(floor_divide_out)
TPU_EW_BINARY_FN(fmax) TPU_EW_BINARY_OUT(fmax_out) TPU_EW_BINARY_FN(fmin) TPU_EW_BINARY_OUT(fmin_out)
TPU_EW_BINARY_FN(logaddexp) TPU_EW_BINARY_OUT(logaddexp_out)
TPU_EW_BINARY_FN(logaddexp2) TPU_EW_BINARY_OUT(logaddexp2_out)
TPU_EW_BINARY_FN(maximum) TPU_EW_BINARY_OUT(maximum_out) TPU_EW_BINARY_FN(minimum) TPU_EW_BINARY_OUT(minimum_out)
TPU_EW_BINARY_FN(pow_Tensor_Tensor) TPU_EW_BINARY_INPLACE(pow__Tensor) TPU_EW_BINARY_OUT(pow_Tensor_Tensor_out)
// comparisons: NAME.Tensor, NAME.Scalar, their out= and in-place overloads
#define TPU_EW_COMPARE(n)                                                                  \
  TPU_EW_BINARY3_T(n)                                                                      \
  at::Tensor n##_Scalar(const at::Tensor& self, const at::Scalar& other);                  \
  at::Tensor& n##__Scalar(at::Tensor& self, const at::Scalar& other);                      \
  at::Tensor& n##_Scalar_out(const at::Tensor& self, const at::Scalar& other, at::Tensor& out);
TPU_EW_COMPARE(eq) TPU_EW_COMPARE(ge) TPU_EW_COMPARE(gt) TPU_EW_COMPARE(le) TPU_EW_COMPARE(lt) TPU_EW_COMPARE(ne)
#undef TPU_EW_COMPARE
#undef TPU_EW_BINARY3_T
#undef TPU_EW_BINARY3
#undef TPU_EW_BINARY_OUT
#undef TPU_EW_BINARY_INPLACE
#undef TPU_EW_BINARY_FN
at::Tensor remainder_Scalar_Tensor(const at::Scalar& self, const at::Tensor& other);
at::Tensor pow_Tensor_Scalar(const at::Tensor& self, const at::Scalar& exponent);
at::Tensor& pow__Scalar(at::Tensor& self, const at::Scalar& exponent);
at::Tensor& pow_Tensor_Scalar_out(const at::Tensor& self, const at::Scalar& exponent, at::Tensor& out);
at::Tensor pow_Scalar(const at::Scalar& self, const at::Tensor& exponent);
at::Tensor& pow_Scalar_out(const at::Scalar& self, const at::Tensor& exponent, at::Tensor& out);
at::Tensor rsub_Tensor(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha);
at::Tensor lerp_Scalar(const at::Tensor& self, const at::Tensor& end, const at::Scalar& weight);
at::Tensor& lerp__Scalar(at::Tensor& self, const at::Tensor& end, const at::Scalar& weight);
at::Tensor& lerp_Scalar_out(const at::Tensor& self, const at::Tensor& end, const at::Scalar& weight, at::Tensor& out);
at::Tensor lerp_Tensor(const at::Tensor& self, const at::Tensor& end, const at::Tensor& weight);
at::Tensor& lerp__Tensor(at::Tensor& self, const at::Tensor& end, const at::Tensor& weight);
at::Tensor& lerp_Tensor_out(const at::Tensor& self, const at::Tensor& end, const at::Tensor& weight, at::Tensor& out);
#define TPU_EW_ADDC(n)                                                                                         \
  at::Tensor n(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& value);   \
  at::Tensor& n##_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& value);     \
  at::Tensor& n##_out(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& value, \
                      at::Tensor& out);
TPU_EW_ADDC(addcdiv) TPU_EW_ADDC(addcmul)
#undef TPU_EW_ADDC
// clang-format on

}  // namespace ew

// ---- kernels_reduction.cc (reductions, scans, losses)
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
std::tuple<at::Tensor&, at::Tensor&> max_dim_max(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& max,
                                                 at::Tensor& max_values);
std::tuple<at::Tensor, at::Tensor> min_dim(const at::Tensor& self, int64_t dim, bool keepdim);
std::tuple<at::Tensor&, at::Tensor&> min_dim_min(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& min,
                                                 at::Tensor& min_indices);
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
at::Tensor linalg_vector_norm(const at::Tensor& self, const at::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                              std::optional<at::ScalarType> dtype);
at::Tensor& linalg_vector_norm_out(const at::Tensor& self, const at::Scalar& ord, at::OptionalIntArrayRef dim,
                                   bool keepdim, std::optional<at::ScalarType> dtype, at::Tensor& out);
at::Tensor norm_ScalarOpt_dim(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim,
                              bool keepdim);
at::Tensor norm_ScalarOpt_dim_dtype(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim,
                                    bool keepdim, at::ScalarType dtype);
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
std::tuple<at::Tensor, at::Tensor> nll_loss_forward(const at::Tensor& self, const at::Tensor& target,
                                                    const std::optional<at::Tensor>& weight, int64_t reduction,
                                                    c10::SymInt ignore_index);
std::tuple<at::Tensor&, at::Tensor&> nll_loss_forward_output(const at::Tensor& self, const at::Tensor& target,
                                                             const std::optional<at::Tensor>& weight, int64_t reduction,
                                                             c10::SymInt ignore_index, at::Tensor& output,
                                                             at::Tensor& total_weight);
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
int64_t _fused_sdp_choice(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const std::optional<at::Tensor>& mask, double dropout_p, bool is_causal,
                          std::optional<double> scale, bool enable_gqa);
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt, at::Tensor, at::Tensor, at::Tensor>
_scaled_dot_product_fused_attention_overrideable(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                 const std::optional<at::Tensor>& attn_bias, double dropout_p,
                                                 bool is_causal, bool return_debug_mask, std::optional<double> scale);
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> _scaled_dot_product_fused_attention_overrideable_backward(
    const at::Tensor& grad_out, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
    const at::Tensor& attn_bias, std::array<bool, 4> grad_input_mask, const at::Tensor& out,
    const at::Tensor& logsumexp, const at::Tensor& cum_seq_q, const at::Tensor& cum_seq_k, c10::SymInt max_q,
    c10::SymInt max_k, double dropout_p, bool is_causal, const at::Tensor& philox_seed, const at::Tensor& philox_offset,
    std::optional<double> scale);
at::Tensor addbmm(const at::Tensor& s, const at::Tensor& b1, const at::Tensor& b2, const at::Scalar& beta,
                  const at::Scalar& alpha);
at::Tensor& addbmm_(at::Tensor& s, const at::Tensor& b1, const at::Tensor& b2, const at::Scalar& beta,
                    const at::Scalar& alpha);
at::Tensor& addbmm_out(const at::Tensor& s, const at::Tensor& b1, const at::Tensor& b2, const at::Scalar& beta,
                       const at::Scalar& alpha, at::Tensor& out);
at::Tensor addmm(const at::Tensor& s, const at::Tensor& m1, const at::Tensor& m2, const at::Scalar& beta,
                 const at::Scalar& alpha);
at::Tensor& addmm_(at::Tensor& s, const at::Tensor& m1, const at::Tensor& m2, const at::Scalar& beta,
                   const at::Scalar& alpha);
at::Tensor& addmm_out(const at::Tensor& s, const at::Tensor& m1, const at::Tensor& m2, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out);
at::Tensor addmv(const at::Tensor& s, const at::Tensor& mat, const at::Tensor& vec, const at::Scalar& beta,
                 const at::Scalar& alpha);
at::Tensor& addmv_(at::Tensor& s, const at::Tensor& mat, const at::Tensor& vec, const at::Scalar& beta,
                   const at::Scalar& alpha);
at::Tensor& addmv_out(const at::Tensor& s, const at::Tensor& mat, const at::Tensor& vec, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out);
at::Tensor baddbmm(const at::Tensor& s, const at::Tensor& b1, const at::Tensor& b2, const at::Scalar& beta,
                   const at::Scalar& alpha);
at::Tensor& baddbmm_(at::Tensor& s, const at::Tensor& b1, const at::Tensor& b2, const at::Scalar& beta,
                     const at::Scalar& alpha);
at::Tensor& baddbmm_out(const at::Tensor& s, const at::Tensor& b1, const at::Tensor& b2, const at::Scalar& beta,
                        const at::Scalar& alpha, at::Tensor& out);
at::Tensor bmm(const at::Tensor& s, const at::Tensor& m2);
at::Tensor& bmm_out(const at::Tensor& s, const at::Tensor& m2, at::Tensor& out);
at::Tensor dot(const at::Tensor& s, const at::Tensor& o);
at::Tensor& dot_out(const at::Tensor& s, const at::Tensor& o, at::Tensor& out);
at::Tensor mm(const at::Tensor& s, const at::Tensor& m2);
at::Tensor& mm_out(const at::Tensor& s, const at::Tensor& m2, at::Tensor& out);
at::Tensor mv(const at::Tensor& s, const at::Tensor& vec);
at::Tensor& mv_out(const at::Tensor& s, const at::Tensor& vec, at::Tensor& out);
at::Tensor vdot(const at::Tensor& s, const at::Tensor& o);
at::Tensor& vdot_out(const at::Tensor& s, const at::Tensor& o, at::Tensor& out);

// ---- kernels_indexing.cc (gather/scatter, index, cat, sort, pad, tri)
using IndexList = c10::List<std::optional<at::Tensor>>;
at::Tensor& _index_put_impl_(at::Tensor& self, const IndexList& indices, const at::Tensor& values, bool accumulate,
                             bool unsafe);
std::tuple<at::Tensor, at::Tensor, at::Tensor> _unique2(const at::Tensor& self, bool sorted, bool return_inverse,
                                                        bool return_counts);
at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim);
at::Tensor& cat_out(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out);
at::Tensor constant_pad_nd(const at::Tensor& self, c10::SymIntArrayRef pad, const at::Scalar& value);
at::Tensor embedding_dense_backward(const at::Tensor& grad, const at::Tensor& indices, c10::SymInt num_weights,
                                    c10::SymInt padding_idx, bool scale_grad_by_freq);
at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims);
at::Tensor gather(const at::Tensor& s, int64_t dim, const at::Tensor& i, bool sparse_grad);
at::Tensor& gather_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, bool sparse_grad, at::Tensor& out);
at::Tensor index_Tensor(const at::Tensor& self, const IndexList& indices);
at::Tensor& index_Tensor_out(const at::Tensor& self, const IndexList& indices, at::Tensor& out);
at::Tensor index_add(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src, const at::Scalar& a);
at::Tensor& index_add_(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src, const at::Scalar& a);
at::Tensor& index_add_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                          const at::Scalar& a, at::Tensor& out);
at::Tensor index_copy(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src);
at::Tensor& index_copy_(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src);
at::Tensor& index_copy_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                           at::Tensor& out);
at::Tensor& index_fill__int_Scalar(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Scalar& v);
at::Tensor& index_fill__int_Tensor(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& v);
at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index);
at::Tensor& index_select_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, at::Tensor& out);
std::tuple<at::Tensor, at::Tensor> kthvalue(const at::Tensor& self, c10::SymInt k, int64_t dim, bool keepdim);
std::tuple<at::Tensor&, at::Tensor&> kthvalue_values(const at::Tensor& self, c10::SymInt k, int64_t dim, bool keepdim,
                                                     at::Tensor& values, at::Tensor& indices);
at::Tensor& masked_scatter_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& source);
at::Tensor masked_select(const at::Tensor& self, const at::Tensor& mask);
at::Tensor& masked_select_out(const at::Tensor& self, const at::Tensor& mask, at::Tensor& out);
at::Tensor median(const at::Tensor& self);
std::tuple<at::Tensor&, at::Tensor&> median_dim_values(const at::Tensor& self, int64_t dim, bool keepdim,
                                                       at::Tensor& values, at::Tensor& indices);
at::Tensor nanmedian(const at::Tensor& self);
std::tuple<at::Tensor&, at::Tensor&> nanmedian_dim_values(const at::Tensor& self, int64_t dim, bool keepdim,
                                                          at::Tensor& values, at::Tensor& indices);
at::Tensor nonzero(const at::Tensor& self);
at::Tensor& nonzero_out(const at::Tensor& self, at::Tensor& out);
at::Tensor nonzero_static(const at::Tensor& self, c10::SymInt size, int64_t fill_value);
at::Tensor& nonzero_static_out(const at::Tensor& self, c10::SymInt size, int64_t fill_value, at::Tensor& out);
at::Tensor one_hot(const at::Tensor& self, int64_t num_classes);
at::Tensor repeat_interleave_Tensor(const at::Tensor& repeats, std::optional<c10::SymInt> output_size);
at::Tensor roll(const at::Tensor& self, c10::SymIntArrayRef shifts, at::IntArrayRef dims);
at::Tensor scatter_src(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src);
at::Tensor& scatter__src(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src);
at::Tensor& scatter_src_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                            at::Tensor& out);
at::Tensor scatter_value(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Scalar& v);
at::Tensor& scatter__value(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Scalar& v);
at::Tensor& scatter_value_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Scalar& v,
                              at::Tensor& out);
at::Tensor scatter_reduce(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                          c10::string_view r);
at::Tensor& scatter__reduce(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src, c10::string_view r);
at::Tensor& scatter_reduce_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                               c10::string_view r, at::Tensor& out);
at::Tensor scatter_value_reduce(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Scalar& v,
                                c10::string_view r);
at::Tensor& scatter__value_reduce(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Scalar& v,
                                  c10::string_view r);
at::Tensor& scatter_value_reduce_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Scalar& v,
                                     c10::string_view r, at::Tensor& out);
at::Tensor scatter_add(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src);
at::Tensor& scatter_add_(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src);
at::Tensor& scatter_add_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                            at::Tensor& out);
at::Tensor scatter_reduce_two(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                              c10::string_view r, bool include_self);
at::Tensor& scatter_reduce__two(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                                c10::string_view r, bool include_self);
at::Tensor& scatter_reduce_two_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                                   c10::string_view r, bool include_self, at::Tensor& out);
std::tuple<at::Tensor, at::Tensor> sort_stable(const at::Tensor& self, std::optional<bool> stable, int64_t dim,
                                               bool descending);
std::tuple<at::Tensor&, at::Tensor&> sort_values_stable(const at::Tensor& self, std::optional<bool> stable, int64_t dim,
                                                        bool descending, at::Tensor& values, at::Tensor& indices);
at::Tensor take(const at::Tensor& self, const at::Tensor& index);
at::Tensor& take_out(const at::Tensor& self, const at::Tensor& index, at::Tensor& out);
std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& self, c10::SymInt k, int64_t dim, bool largest, bool sorted);
std::tuple<at::Tensor&, at::Tensor&> topk_values(const at::Tensor& self, c10::SymInt k, int64_t dim, bool largest,
                                                 bool sorted, at::Tensor& values, at::Tensor& indices);
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_consecutive(const at::Tensor& self, bool return_inverse,
                                                                  bool return_counts, std::optional<int64_t> dim);
at::Tensor tril(const at::Tensor& s, c10::SymInt d);
at::Tensor& tril_(at::Tensor& s, c10::SymInt d);
at::Tensor& tril_out(const at::Tensor& s, c10::SymInt d, at::Tensor& out);
at::Tensor triu(const at::Tensor& s, c10::SymInt d);
at::Tensor& triu_(at::Tensor& s, c10::SymInt d);
at::Tensor& triu_out(const at::Tensor& s, c10::SymInt d, at::Tensor& out);

// ---- kernels_random.cc (random fills, dropout, arange/linspace/eye)
at::Tensor& bernoulli__float(at::Tensor& self, double p, std::optional<at::Generator> gen);
at::Tensor& bernoulli__Tensor(at::Tensor& self, const at::Tensor& p, std::optional<at::Generator> gen);
at::Tensor& bernoulli_out(const at::Tensor& self, std::optional<at::Generator> gen, at::Tensor& out);
at::Tensor& cauchy_(at::Tensor& self, double median, double sigma, std::optional<at::Generator> gen);
at::Tensor& exponential_(at::Tensor& self, double lambd, std::optional<at::Generator> gen);
at::Tensor& geometric_(at::Tensor& self, double p, std::optional<at::Generator> gen);
at::Tensor& log_normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen);
at::Tensor multinomial(const at::Tensor& self, c10::SymInt n_sample, bool replacement,
                       std::optional<at::Generator> gen);
at::Tensor& multinomial_out(const at::Tensor& self, c10::SymInt n_sample, bool replacement,
                            std::optional<at::Generator> gen, at::Tensor& out);
std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p, std::optional<bool> train);
at::Tensor native_dropout_backward(const at::Tensor& grad, const at::Tensor& mask, double scale);
at::Tensor normal_Tensor_float(const at::Tensor& mean, double std, std::optional<at::Generator> gen);
at::Tensor& normal_Tensor_float_out(const at::Tensor& mean, double std, std::optional<at::Generator> gen,
                                    at::Tensor& out);
at::Tensor normal_float_Tensor(double mean, const at::Tensor& std, std::optional<at::Generator> gen);
at::Tensor& normal_float_Tensor_out(double mean, const at::Tensor& std, std::optional<at::Generator> gen,
                                    at::Tensor& out);
at::Tensor normal_Tensor_Tensor(const at::Tensor& mean, const at::Tensor& std, std::optional<at::Generator> gen);
at::Tensor& normal_Tensor_Tensor_out(const at::Tensor& mean, const at::Tensor& std, std::optional<at::Generator> gen,
                                     at::Tensor& out);
at::Tensor& normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen);
at::Tensor& random_(at::Tensor& self, std::optional<at::Generator> gen);
at::Tensor& random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to, std::optional<at::Generator> gen);
at::Tensor& random_to(at::Tensor& self, int64_t to, std::optional<at::Generator> gen);
at::Tensor& randperm_generator_out(c10::SymInt n, std::optional<at::Generator> gen, at::Tensor& out);
at::Tensor& uniform_(at::Tensor& self, double from, double to, std::optional<at::Generator> gen);

// ---- kernels_membership.cc
at::Tensor& isin_Tensor_Tensor_out(const at::Tensor& e, const at::Tensor& t, bool assume_unique, bool invert,
                                   at::Tensor& out);
at::Tensor isin_Tensor_Tensor(const at::Tensor& e, const at::Tensor& t, bool assume_unique, bool invert);
at::Tensor isin_Tensor_Scalar(const at::Tensor& e, const at::Scalar& t, bool assume_unique, bool invert);
at::Tensor isin_Scalar_Tensor(const at::Scalar& e, const at::Tensor& t, bool assume_unique, bool invert);

// ---- kernels_conv.cc
at::Tensor convolution_overrideable(const at::Tensor& input, const at::Tensor& weight,
                                    const std::optional<at::Tensor>& bias, at::IntArrayRef stride,
                                    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                                    at::IntArrayRef output_padding, int64_t groups);
std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_overrideable(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding, int64_t groups,
    std::array<bool, 3> output_mask);
at::Tensor view_as_complex(const at::Tensor& self);
at::Tensor view_as_real(const at::Tensor& self);
// (kernels_grouped_mm.cc)
at::Tensor _grouped_mm(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& offs,
                       const std::optional<at::Tensor>& bias, std::optional<at::ScalarType> out_dtype);

// ---- amp: GradScaler's native ops (kernels_amp.cc)
void _amp_foreach_non_finite_check_and_unscale_(at::TensorList self, at::Tensor& found_inf,
                                                const at::Tensor& inv_scale);
at::Tensor& _amp_update_scale_(at::Tensor& self, at::Tensor& growth_tracker, const at::Tensor& found_inf,
                               double growth_factor, double backoff_factor, int64_t growth_interval);
at::Tensor _prelu_kernel(const at::Tensor& self, const at::Tensor& weight);
std::tuple<at::Tensor, at::Tensor> _prelu_kernel_backward(const at::Tensor& grad, const at::Tensor& self,
                                                          const at::Tensor& weight);

// ---- kernels_models.cc (ops Hugging Face models need)
bool _has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from);
at::Tensor histc(const at::Tensor& self, int64_t bins, const at::Scalar& min, const at::Scalar& max);
at::Tensor& histc_out(const at::Tensor& self, int64_t bins, const at::Scalar& min, const at::Scalar& max,
                      at::Tensor& out);

// ---- kernels_coverage.cc (namespace cov): ops that used to fall back to the CPU
namespace cov {
at::Tensor _fft_c2c(const at::Tensor& self, c10::SymIntArrayRef dim, int64_t normalization, bool forward);
at::Tensor& _fft_c2c_out(const at::Tensor& self, c10::SymIntArrayRef dim, int64_t normalization, bool forward,
                         at::Tensor& out);
at::Tensor _fft_c2r(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, c10::SymInt last_dim_size);
at::Tensor& _fft_c2r_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, c10::SymInt last_dim_size,
                         at::Tensor& out);
at::Tensor _fft_r2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, bool onesided);
at::Tensor& _fft_r2c_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, bool onesided,
                         at::Tensor& out);
at::Tensor conj_physical(const at::Tensor& self);
at::Tensor& conj_physical_(at::Tensor& self);
at::Tensor& conj_physical_out(const at::Tensor& self, at::Tensor& out);
at::Tensor gcd(const at::Tensor& a, const at::Tensor& b);
at::Tensor& gcd_(at::Tensor& a, const at::Tensor& b);
at::Tensor& gcd_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out);
at::Tensor lcm(const at::Tensor& a, const at::Tensor& b);
at::Tensor& lcm_(at::Tensor& a, const at::Tensor& b);
at::Tensor& lcm_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out);
at::Tensor bitwise_left_shift(const at::Tensor& a, const at::Tensor& b);
at::Tensor& bitwise_left_shift_(at::Tensor& a, const at::Tensor& b);
at::Tensor& bitwise_left_shift_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out);
at::Tensor bitwise_right_shift(const at::Tensor& a, const at::Tensor& b);
at::Tensor& bitwise_right_shift_(at::Tensor& a, const at::Tensor& b);
at::Tensor& bitwise_right_shift_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out);
at::Tensor nextafter(const at::Tensor& a, const at::Tensor& b);
at::Tensor& nextafter_(at::Tensor& a, const at::Tensor& b);
at::Tensor& nextafter_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out);
at::Tensor nansum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType> dtype);
at::Tensor& nansum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype, at::Tensor& out);
bool equal(const at::Tensor& self, const at::Tensor& other);
at::Tensor trace(const at::Tensor& self);
void _cummax_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim);
void _cummin_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim);
at::Tensor index_reduce(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                        c10::string_view reduce, bool include_self);
at::Tensor& index_reduce_(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                          c10::string_view reduce, bool include_self);
at::Tensor& index_reduce_out(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                             c10::string_view reduce, bool include_self, at::Tensor& out);
at::Tensor glu(const at::Tensor& self, int64_t dim);
at::Tensor& glu_out(const at::Tensor& self, int64_t dim, at::Tensor& out);
at::Tensor glu_backward(const at::Tensor& grad, const at::Tensor& self, int64_t dim);
at::Tensor& glu_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, int64_t dim,
                                    at::Tensor& grad_input);
at::Tensor special_xlog1py(const at::Tensor& a, const at::Tensor& b);
at::Tensor& special_xlog1py_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out);
at::Tensor lshift_Tensor(const at::Tensor& a, const at::Tensor& b);
at::Tensor lshift_Scalar(const at::Tensor& a, const at::Scalar& b);
at::Tensor& ilshift_Tensor(at::Tensor& a, const at::Tensor& b);
at::Tensor& ilshift_Scalar(at::Tensor& a, const at::Scalar& b);
at::Tensor rshift_Tensor(const at::Tensor& a, const at::Tensor& b);
at::Tensor rshift_Scalar(const at::Tensor& a, const at::Scalar& b);
at::Tensor& irshift_Tensor(at::Tensor& a, const at::Tensor& b);
at::Tensor& irshift_Scalar(at::Tensor& a, const at::Scalar& b);
at::Tensor linalg_cross(const at::Tensor& a, const at::Tensor& b, int64_t dim);
at::Tensor& linalg_cross_out(const at::Tensor& a, const at::Tensor& b, int64_t dim, at::Tensor& out);
at::Tensor renorm(const at::Tensor& s, const at::Scalar& p, int64_t dim, const at::Scalar& maxnorm);
at::Tensor& renorm_(at::Tensor& s, const at::Scalar& p, int64_t dim, const at::Scalar& maxnorm);
at::Tensor& renorm_out(const at::Tensor& s, const at::Scalar& p, int64_t dim, const at::Scalar& maxnorm,
                       at::Tensor& out);
at::Tensor searchsorted_Tensor(const at::Tensor& seq, const at::Tensor& self, bool out_int32, bool right,
                               std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter);
at::Tensor& searchsorted_Tensor_out(const at::Tensor& seq, const at::Tensor& self, bool out_int32, bool right,
                                    std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter,
                                    at::Tensor& out);
at::Tensor searchsorted_Scalar(const at::Tensor& seq, const at::Scalar& self, bool out_int32, bool right,
                               std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter);
at::Tensor& searchsorted_Scalar_out(const at::Tensor& seq, const at::Scalar& self, bool out_int32, bool right,
                                    std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter,
                                    at::Tensor& out);
at::Tensor bucketize_Tensor(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32, bool right);
at::Tensor& bucketize_Tensor_out(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32, bool right,
                                 at::Tensor& out);
at::Tensor bucketize_Scalar(const at::Scalar& self, const at::Tensor& boundaries, bool out_int32, bool right);
at::Tensor bincount(const at::Tensor& self, const std::optional<at::Tensor>& weights, c10::SymInt minlength_s);
at::Tensor max_unpool2d(const at::Tensor& self, const at::Tensor& indices, c10::SymIntArrayRef output_size);
at::Tensor& max_unpool2d_out(const at::Tensor& self, const at::Tensor& indices, c10::SymIntArrayRef output_size,
                             at::Tensor& out);
at::Tensor max_unpool3d(const at::Tensor& self, const at::Tensor& indices, c10::SymIntArrayRef output_size,
                        at::IntArrayRef stride, at::IntArrayRef padding);
at::Tensor& max_unpool3d_out(const at::Tensor& self, const at::Tensor& indices, c10::SymIntArrayRef output_size,
                             at::IntArrayRef stride, at::IntArrayRef padding, at::Tensor& out);
at::Tensor huber_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double delta);
at::Tensor& huber_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double delta,
                           at::Tensor& out);
at::Tensor huber_loss_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                               int64_t reduction, double delta);
at::Tensor& huber_loss_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                    int64_t reduction, double delta, at::Tensor& grad_input);
at::Tensor smooth_l1_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double beta);
at::Tensor& smooth_l1_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double beta,
                               at::Tensor& out);
at::Tensor smooth_l1_loss_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                   int64_t reduction, double beta);
at::Tensor& smooth_l1_loss_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                        int64_t reduction, double beta, at::Tensor& grad_input);
at::Tensor binary_cross_entropy(const at::Tensor& self, const at::Tensor& target,
                                const std::optional<at::Tensor>& weight, int64_t reduction);
at::Tensor& binary_cross_entropy_out(const at::Tensor& self, const at::Tensor& target,
                                     const std::optional<at::Tensor>& weight, int64_t reduction, at::Tensor& out);
at::Tensor binary_cross_entropy_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                         const std::optional<at::Tensor>& weight, int64_t reduction);
at::Tensor& binary_cross_entropy_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                              const std::optional<at::Tensor>& weight, int64_t reduction,
                                              at::Tensor& grad_input);
// (kernels_coverage_pool.cc)
std::tuple<at::Tensor, at::Tensor> max_pool2d_with_indices(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                                                           at::IntArrayRef p, at::IntArrayRef d, bool ceil_mode);
std::tuple<at::Tensor&, at::Tensor&> max_pool2d_with_indices_out(const at::Tensor& self, at::IntArrayRef k,
                                                                 at::IntArrayRef s, at::IntArrayRef p,
                                                                 at::IntArrayRef d, bool ceil_mode, at::Tensor& out,
                                                                 at::Tensor& indices);
at::Tensor max_pool2d_with_indices_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k,
                                            at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef d, bool ceil_mode,
                                            const at::Tensor& indices);
at::Tensor& max_pool2d_with_indices_backward_out(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k,
                                                 at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef d,
                                                 bool ceil_mode, const at::Tensor& indices, at::Tensor& grad_input);
std::tuple<at::Tensor, at::Tensor> max_pool3d_with_indices(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                                                           at::IntArrayRef p, at::IntArrayRef d, bool ceil_mode);
std::tuple<at::Tensor&, at::Tensor&> max_pool3d_with_indices_out(const at::Tensor& self, at::IntArrayRef k,
                                                                 at::IntArrayRef s, at::IntArrayRef p,
                                                                 at::IntArrayRef d, bool ceil_mode, at::Tensor& out,
                                                                 at::Tensor& indices);
at::Tensor& max_pool3d_with_indices_backward_out(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k,
                                                 at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef d,
                                                 bool ceil_mode, const at::Tensor& indices, at::Tensor& grad_input);
at::Tensor max_pool3d_with_indices_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k,
                                            at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef d, bool ceil_mode,
                                            const at::Tensor& indices);
at::Tensor avg_pool2d(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p, bool ceil_mode,
                      bool cip, std::optional<int64_t> div);
at::Tensor& avg_pool2d_out(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                           bool ceil_mode, bool cip, std::optional<int64_t> div, at::Tensor& out);
at::Tensor avg_pool2d_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                               at::IntArrayRef p, bool ceil_mode, bool cip, std::optional<int64_t> div);
at::Tensor& avg_pool2d_backward_out(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k,
                                    at::IntArrayRef s, at::IntArrayRef p, bool ceil_mode, bool cip,
                                    std::optional<int64_t> div, at::Tensor& grad_input);
at::Tensor avg_pool3d(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p, bool ceil_mode,
                      bool cip, std::optional<int64_t> div);
at::Tensor& avg_pool3d_out(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                           bool ceil_mode, bool cip, std::optional<int64_t> div, at::Tensor& out);
at::Tensor avg_pool3d_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                               at::IntArrayRef p, bool ceil_mode, bool cip, std::optional<int64_t> div);
at::Tensor& avg_pool3d_backward_out(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k,
                                    at::IntArrayRef s, at::IntArrayRef p, bool ceil_mode, bool cip,
                                    std::optional<int64_t> div, at::Tensor& grad_input);
at::Tensor _adaptive_avg_pool2d(const at::Tensor& self, c10::SymIntArrayRef output_size);
at::Tensor& _adaptive_avg_pool2d_out(const at::Tensor& self, c10::SymIntArrayRef output_size, at::Tensor& out);
at::Tensor _adaptive_avg_pool2d_backward(const at::Tensor& grad, const at::Tensor& self);
at::Tensor _adaptive_avg_pool3d(const at::Tensor& self, c10::SymIntArrayRef output_size);
at::Tensor& _adaptive_avg_pool3d_out(const at::Tensor& self, c10::SymIntArrayRef output_size, at::Tensor& out);
at::Tensor _adaptive_avg_pool3d_backward(const at::Tensor& grad, const at::Tensor& self);
std::tuple<at::Tensor, at::Tensor> adaptive_max_pool2d(const at::Tensor& self, at::IntArrayRef os);
std::tuple<at::Tensor&, at::Tensor&> adaptive_max_pool2d_out(const at::Tensor& self, at::IntArrayRef os,
                                                             at::Tensor& out, at::Tensor& indices);
at::Tensor adaptive_max_pool2d_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& indices);
at::Tensor& adaptive_max_pool2d_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& indices,
                                             at::Tensor& grad_input);
std::tuple<at::Tensor, at::Tensor> adaptive_max_pool3d(const at::Tensor& self, at::IntArrayRef os);
std::tuple<at::Tensor&, at::Tensor&> adaptive_max_pool3d_out(const at::Tensor& self, at::IntArrayRef os,
                                                             at::Tensor& out, at::Tensor& indices);
at::Tensor adaptive_max_pool3d_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& indices);
at::Tensor& adaptive_max_pool3d_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& indices,
                                             at::Tensor& grad_input);
}  // namespace cov

}  // namespace tpu
