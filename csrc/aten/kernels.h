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

// ---- kernels_elementwise.cc, kernels_binary.cc (namespace ew): unary,
// binary, comparison, logical, activations. Names follow the ATen overloads:
// NAME (functional), NAME_ (in-place), NAME_out (out=), with the overload name
// appended where ATen has one (add_Tensor style).
namespace ew {

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

}  // namespace ew

// ---- kernels_reduction.cc (reductions, scans, softmax, losses)

// ---- kernels_norm.cc (layer norm, rms norm)

// ---- kernels_linalg.cc (matmul family, attention)

// ---- kernels_indexing.cc (gather/scatter, index, cat, sort, pad, tri)

// ---- kernels_random.cc (random fills, dropout, arange/linspace/eye)

}  // namespace tpu
