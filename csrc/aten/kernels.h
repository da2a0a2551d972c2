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
at::Tensor index_add(const at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                     const at::Scalar& a);
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
std::tuple<at::Tensor&, at::Tensor&> kthvalue_values(const at::Tensor& self, c10::SymInt k, int64_t dim,
                                                     bool keepdim, at::Tensor& values, at::Tensor& indices);
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
at::Tensor& scatter__reduce(at::Tensor& s, int64_t dim, const at::Tensor& i, const at::Tensor& src,
                            c10::string_view r);
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
std::tuple<at::Tensor&, at::Tensor&> sort_values_stable(const at::Tensor& self, std::optional<bool> stable,
                                                        int64_t dim, bool descending, at::Tensor& values,
                                                        at::Tensor& indices);
at::Tensor take(const at::Tensor& self, const at::Tensor& index);
at::Tensor& take_out(const at::Tensor& self, const at::Tensor& index, at::Tensor& out);
std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& self, c10::SymInt k, int64_t dim, bool largest, bool sorted);
std::tuple<at::Tensor&, at::Tensor&> topk_values(const at::Tensor& self, c10::SymInt k, int64_t dim, bool largest,
                                                 bool sorted, at::Tensor& values, at::Tensor& indices);
at::Tensor tril_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout, std::optional<at::Device> device,
                        std::optional<bool> pin_memory);
at::Tensor triu_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout, std::optional<at::Device> device,
                        std::optional<bool> pin_memory);
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_consecutive(const at::Tensor& self, bool return_inverse,
                                                                  bool return_counts, std::optional<int64_t> dim);
at::Tensor tril(const at::Tensor& s, c10::SymInt d);
at::Tensor& tril_(at::Tensor& s, c10::SymInt d);
at::Tensor& tril_out(const at::Tensor& s, c10::SymInt d, at::Tensor& out);
at::Tensor triu(const at::Tensor& s, c10::SymInt d);
at::Tensor& triu_(at::Tensor& s, c10::SymInt d);
at::Tensor& triu_out(const at::Tensor& s, c10::SymInt d, at::Tensor& out);

// ---- kernels_random.cc (random fills, dropout, arange/linspace/eye)

}  // namespace tpu
