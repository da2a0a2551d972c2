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

// ---- kernels_norm.cc (layer norm, rms norm)

// ---- kernels_linalg.cc (matmul family, attention)
int64_t _fused_sdp_choice(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const std::optional<at::Tensor>& mask, double dropout_p, bool is_causal,
                          std::optional<double> scale, bool enable_gqa);
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt, at::Tensor, at::Tensor,
           at::Tensor>
_scaled_dot_product_fused_attention_overrideable(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                 const std::optional<at::Tensor>& attn_bias, double dropout_p,
                                                 bool is_causal, bool return_debug_mask,
                                                 std::optional<double> scale);
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> _scaled_dot_product_fused_attention_overrideable_backward(
    const at::Tensor& grad_out, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
    const at::Tensor& attn_bias, std::array<bool, 4> grad_input_mask, const at::Tensor& out,
    const at::Tensor& logsumexp, const at::Tensor& cum_seq_q, const at::Tensor& cum_seq_k, c10::SymInt max_q,
    c10::SymInt max_k, double dropout_p, bool is_causal, const at::Tensor& philox_seed,
    const at::Tensor& philox_offset, std::optional<double> scale);
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

// ---- kernels_random.cc (random fills, dropout, arange/linspace/eye)

}  // namespace tpu
