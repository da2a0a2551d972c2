// Sparse COO tensors on the tpu. A sparse tpu tensor is PyTorch's own
// SparseTensorImpl whose two members are ordinary tpu tensors: indices
// (int64, [sparse_dim, nnz]) and values ([nnz, dense sizes...]). Every kernel
// here is written in dense ops on those two, so sparse work runs through the
// same lowerings, eager modes and program cache as dense work, and nothing is
// densified unless the user asks for a dense result (to_dense, a sparse
// tensor added into a dense one, a product with a dense matrix).
//
// PyTorch's device-generic sparse kernels (constructors, accessors, clone,
// copy, resize) are registered as they are; coalesce, add, sparse_mask,
// mm / addmm and the products with a scalar are ours, because PyTorch's are
// written per device. Other sparse ops raise PyTorch's "not implemented for
// the Sparsetpu backend" error, never a wrong result.
#include <ATen/SparseTensorImpl.h>
#include <ATen/native/Resize.h>
#include <ATen/native/SparseTensorUtils.h>
#include <ATen/ops/_coalesced_native.h>
#include <ATen/ops/_indices_native.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_native.h>
#include <ATen/ops/_to_dense_native.h>
#include <ATen/ops/_to_sparse_native.h>
#include <ATen/ops/_values_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/copy_sparse_to_sparse_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/indices_native.h>
#include <ATen/ops/is_coalesced_native.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/sparse_resize_and_clear_native.h>
#include <ATen/ops/sparse_resize_native.h>
#include <ATen/ops/sum_native.h>
#include <ATen/ops/unsqueeze_native.h>
#include <ATen/ops/values_native.h>
#include <ATen/ops/zero_native.h>

#include "aten/fallback.h"
#include "aten/library.h"

namespace tpu {

namespace {

// The result of a sparse op written into `out`: sizes, the two members and
// whether its indices are known unique and sorted.
at::Tensor& set_sparse(at::Tensor& out, at::IntArrayRef sizes, int64_t sparse_dim, const at::Tensor& indices,
                       const at::Tensor& values, bool coalesced) {
  auto* impl = at::sparse::get_sparse_impl(out);
  impl->resize_(sparse_dim, values.dim() - 1, sizes);
  impl->set_indices_and_values_unsafe(indices, values);
  impl->set_coalesced(coalesced);
  return out;
}

at::Tensor new_sparse(at::IntArrayRef sizes, int64_t sparse_dim, const at::Tensor& indices, const at::Tensor& values,
                      bool coalesced) {
  at::Tensor out = at::native::new_with_dims_sparse(sparse_dim, values.dim() - 1, sizes, values.scalar_type(),
                                                    at::kSparse, values.device());
  return set_sparse(out, sizes, sparse_dim, indices, values, coalesced);
}

// Each entry's position in the sparse dimensions as one row-major number.
at::Tensor linear_index(const at::Tensor& self) {
  const at::Tensor idx = self._indices();
  int64_t k = self.sparse_dim();
  at::Tensor lin = at::zeros({idx.size(1)}, idx.options());
  for (int64_t d = 0; d < k; ++d) lin = lin * self.size(d) + idx[d];
  return lin;
}

// Duplicates summed, indices sorted row-major, as the CPU's coalesce: entries
// whose sum is zero stay (coalescing never drops an explicit entry).
at::Tensor coalesce(const at::Tensor& self) {
  if (self.is_coalesced()) return self;
  int64_t k = self.sparse_dim();
  const at::Tensor values = self._values();
  if (self._nnz() < 2) {
    return new_sparse(self.sizes(), k, self._indices().clone(), values.clone(), /*coalesced=*/true);
  }
  auto [unique, inverse, counts] = at::_unique2(linear_index(self), /*sorted=*/true, /*return_inverse=*/true);
  (void)counts;
  std::vector<int64_t> shape(values.sizes().begin(), values.sizes().end());
  shape[0] = unique.size(0);
  at::Tensor summed = at::zeros(shape, values.options()).index_add_(0, inverse, values);
  std::vector<at::Tensor> rows(k);
  at::Tensor rest = unique;
  for (int64_t d = k - 1; d >= 0; --d) {
    rows[d] = rest.remainder(self.size(d));
    rest = rest.div(self.size(d), "floor");
  }
  return new_sparse(self.sizes(), k, at::stack(rows), summed, /*coalesced=*/true);
}

// The dense positions of a sparse tensor's entries, as an index for
// index / index_put_.
c10::List<std::optional<at::Tensor>> positions_of(const at::Tensor& indices) {
  c10::List<std::optional<at::Tensor>> idx;
  for (const at::Tensor& row : indices.unbind(0)) idx.push_back(row);
  return idx;
}
c10::List<std::optional<at::Tensor>> positions(const at::Tensor& sparse) { return positions_of(sparse._indices()); }

void check_same_sizes(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.sizes().equals(b.sizes()), "add: expected 'self' and 'other' to have same size, but self has size ",
              a.sizes(), " while other has size ", b.sizes(),
              " (FYI: dense-sparse addition does not currently support broadcasting)");
}

at::Tensor& add_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(other.is_sparse(), "add(sparse, dense) is not supported. Use add(dense, sparse) instead.");
  check_same_sizes(self, other);
  at::Tensor values = other._values();
  if (!alpha.equal(1)) values = values * alpha;
  if (!self.is_sparse()) {
    // dense + sparse: the entries accumulate into a copy of the dense.
    TORCH_CHECK(!out.is_sparse(), "add: a dense + sparse sum is dense; got a sparse out");
    at::ScalarType t = at::result_type(self, other);
    TORCH_CHECK(at::canCast(t, out.scalar_type()), "result type ", t, " can't be cast to the desired output type ",
                out.scalar_type());
    if (!out.is_same(self)) {
      at::native::resize_output(out, self.sizes());
      out.copy_(self);
    }
    if (other._nnz() > 0) out.index_put_(positions(other), values.to(out.scalar_type()), /*accumulate=*/true);
    return out;
  }
  // sparse + sparse: the entries of both; summed again where both were
  // coalesced, so the result is too (the CPU merges them).
  TORCH_CHECK(out.is_sparse(), "add: a sparse + sparse sum is sparse; got a dense out");
  TORCH_CHECK(self.sparse_dim() == other.sparse_dim() && self.dense_dim() == other.dense_dim(),
              "add: expected 'self' and 'other' to have the same sparse and dense dimensions");
  at::ScalarType t = out.scalar_type();
  at::Tensor indices = at::cat({self._indices(), other._indices()}, 1);
  at::Tensor all = at::cat({self._values().to(t), values.to(t)}, 0);
  bool both = self.is_coalesced() && other.is_coalesced();
  at::Tensor sum = new_sparse(self.sizes(), self.sparse_dim(), indices, all, /*coalesced=*/false);
  if (both) sum = coalesce(sum);
  return set_sparse(out, self.sizes(), self.sparse_dim(), sum._indices(), sum._values(), both);
}

at::Tensor add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  at::ScalarType t = at::result_type(self, other);
  at::Tensor out = self.is_sparse() ? at::native::new_with_dims_sparse(self.sparse_dim(), self.dense_dim(),
                                                                       self.sizes(), t, at::kSparse, self.device())
                                    : at::empty(self.sizes(), self.options().dtype(t));
  return add_out(self, other, alpha, out);
}

at::Tensor& add_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return add_out(self, other, alpha, self);
}

// The values of a dense tensor at a sparse tensor's entries, as a sparse
// tensor with the mask's indices (the mask's values are not read).
at::Tensor sparse_mask(const at::Tensor& self, const at::Tensor& mask) {
  TORCH_CHECK(mask.is_sparse(), "sparse_mask: expected a sparse COO mask");
  TORCH_CHECK(self.sizes().equals(mask.sizes()), "sparse_mask(): operands have incompatible sizes; self has size ",
              self.sizes(), " but mask has size ", mask.sizes());
  if (self.is_sparse()) return sparse_mask(self.to_dense(), mask);
  at::Tensor values = mask._nnz() == 0 ? mask._values().to(self.scalar_type()) : self.index(positions(mask));
  return new_sparse(mask.sizes(), mask.sparse_dim(), mask._indices().clone(), values, mask.is_coalesced());
}

// sparse [m, k] @ dense [k, n]: each entry's row of the dense matrix, scaled
// and summed into its row of the result.
at::Tensor sparse_dense_mm(const at::Tensor& sparse, const at::Tensor& dense) {
  TORCH_CHECK(sparse.sparse_dim() == 2 && sparse.dense_dim() == 0, "addmm: matrices expected, got ",
              sparse.sparse_dim(), "D sparse tensor");
  TORCH_CHECK(dense.dim() == 2, "addmm: matrices expected, got ", dense.dim(), "D tensor");
  TORCH_CHECK(sparse.size(1) == dense.size(0), "mat1 and mat2 shapes cannot be multiplied (", sparse.size(0), "x",
              sparse.size(1), " and ", dense.size(0), "x", dense.size(1), ")");
  TORCH_CHECK(sparse.scalar_type() == dense.scalar_type(),
              "expected mat1 and mat2 to have the same dtype, but got: ", sparse.scalar_type(),
              " != ", dense.scalar_type());
  at::Tensor product = at::zeros({sparse.size(0), dense.size(1)}, dense.options());
  if (sparse._nnz() == 0) return product;
  const at::Tensor idx = sparse._indices();
  at::Tensor rows = dense.index_select(0, idx[1]) * sparse._values().unsqueeze(1);
  return product.index_add_(0, idx[0], rows);
}

at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(mat1.is_sparse() && !mat2.is_sparse() && !self.is_sparse(),
              "addmm: the tpu device multiplies a sparse COO mat1 by a dense mat2 into a dense self");
  at::Tensor product = sparse_dense_mm(mat1, mat2);
  if (!alpha.equal(1)) product = product * alpha;
  // beta == 0 ignores self, NaNs included, as the CPU's addmm.
  at::Tensor r = beta.equal(0) ? product : at::add(product, self.expand_as(product), beta);
  if (!out.is_same(r)) {
    at::native::resize_output(out, r.sizes());
    out.copy_(r);
  }
  return out;
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2, const at::Scalar& beta,
                 const at::Scalar& alpha) {
  at::Tensor out = at::empty({0}, mat2.options());
  return addmm_out(self, mat1, mat2, beta, alpha, out);
}

at::Tensor& addmm_(at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2, const at::Scalar& beta,
                   const at::Scalar& alpha) {
  return addmm_out(self, mat1, mat2, beta, alpha, self);
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK(self.is_sparse() && !mat2.is_sparse(),
              "mm: the tpu device multiplies a sparse COO matrix by a dense one");
  return sparse_dense_mm(self, mat2);
}

at::Tensor mv(const at::Tensor& self, const at::Tensor& vec) {
  TORCH_CHECK(self.is_sparse() && !vec.is_sparse() && vec.dim() == 1,
              "mv: the tpu device multiplies a sparse COO matrix by a dense vector");
  return sparse_dense_mm(self, vec.unsqueeze(1)).squeeze(1);
}

// The factor of a product of a sparse tensor and a number (a 0-d dense
// tensor, as Python scalars arrive), or undefined for other products.
at::Tensor number_factor(const at::Tensor& self, const at::Tensor& other) {
  const at::Tensor& factor = self.is_sparse() ? other : self;
  return !factor.is_sparse() && factor.dim() == 0 ? factor : at::Tensor();
}

// Products of two sparse tensors, or of a sparse and a dense one, run on
// the CPU (counted with the CPU fallback's calls).
at::Tensor& mul_on_cpu(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  static const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::mul", "out");
  torch::jit::Stack stack{self, other, out};
  sparse_fallback(op, &stack);
  return out;
}

// A sparse tensor times a number: its values scaled, its indices shared.
at::Tensor& scale_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  at::Tensor factor = number_factor(self, other);
  if (!factor.defined()) return mul_on_cpu(self, other, out);
  const at::Tensor& sparse = self.is_sparse() ? self : other;
  at::Tensor values = at::mul(sparse._values(), factor).to(out.scalar_type());
  return set_sparse(out, sparse.sizes(), sparse.sparse_dim(), sparse._indices().clone(), values, sparse.is_coalesced());
}

at::Tensor mul(const at::Tensor& self, const at::Tensor& other) {
  const at::Tensor& sparse = self.is_sparse() ? self : other;
  at::Tensor out = at::native::new_with_dims_sparse(sparse.sparse_dim(), sparse.dense_dim(), sparse.sizes(),
                                                    at::result_type(self, other), at::kSparse, sparse.device());
  return scale_out(self, other, out);
}

at::Tensor& mul_(at::Tensor& self, const at::Tensor& other) {
  scale_out(self, other, self);
  return self;
}

at::Tensor neg(const at::Tensor& self) {
  return new_sparse(self.sizes(), self.sparse_dim(), self._indices().clone(), self._values().neg(),
                    self.is_coalesced());
}

// dense -> sparse COO: the positions in the first sparse_dim dimensions
// whose value (or dense slice) is not all zero, found on the device, in
// row-major order as the CPU finds them.
at::Tensor to_sparse_dims(const at::Tensor& self, int64_t sparse_dim) {
  TORCH_CHECK(sparse_dim > 0 || self.dim() == 0, "sparse_dim must be >0 if dimensionality > 0");
  TORCH_CHECK(sparse_dim <= self.dim(), "sparse_dim must be less than or equal to self.dim()");
  at::Tensor nonzero = self != 0;
  std::vector<int64_t> dense_dims;
  for (int64_t d = sparse_dim; d < self.dim(); ++d) dense_dims.push_back(d);
  if (!dense_dims.empty()) nonzero = nonzero.any(dense_dims);
  at::Tensor indices = sparse_dim == 0 ? at::zeros({0, 1}, self.options().dtype(at::kLong)) : nonzero.nonzero().t();
  at::Tensor values = sparse_dim == 0 ? self.unsqueeze(0) : self.index(positions_of(indices));
  return new_sparse(self.sizes(), sparse_dim, indices.contiguous(), values, /*coalesced=*/true);
}
at::Tensor to_sparse(const at::Tensor& self, std::optional<at::Layout> layout, at::OptionalIntArrayRef blocksize,
                     std::optional<int64_t> dense_dim) {
  if (layout.value_or(at::kSparse) != at::kSparse)
    return at::native::dense_to_sparse(self, layout, blocksize, dense_dim);
  return to_sparse_dims(self, self.dim() - dense_dim.value_or(0));
}

// PyTorch's device-generic sparse kernels, given the signatures Kernels takes.
at::Tensor with_dims_and_tensors(int64_t sparse_dim, int64_t dense_dim, c10::SymIntArrayRef size,
                                 const at::Tensor& indices, const at::Tensor& values,
                                 std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                                 std::optional<at::Device> device, std::optional<bool> pin,
                                 std::optional<bool> is_coalesced) {
  return at::native::new_with_dims_and_tensor_sparse_symint(sparse_dim, dense_dim, size, indices, values, dtype, layout,
                                                            device, pin, is_coalesced);
}
at::Tensor with_dims(int64_t sparse_dim, int64_t dense_dim, at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                     std::optional<at::Layout> layout, std::optional<at::Device> device, std::optional<bool> pin) {
  return at::native::new_with_dims_sparse(sparse_dim, dense_dim, size, dtype, layout, device, pin);
}
at::Tensor empty_coo(c10::SymIntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                     std::optional<at::Device> device, std::optional<bool> pin,
                     std::optional<at::MemoryFormat> format) {
  return at::native::empty_sparse_symint(size, dtype, layout, device, pin, format);
}
at::Tensor indices_(const at::Tensor& self) { return at::native::_indices_sparse(self); }
at::Tensor values_(const at::Tensor& self) { return at::native::_values_sparse(self); }
at::Tensor indices(const at::Tensor& self) { return at::native::indices_sparse(self); }
at::Tensor values(const at::Tensor& self) { return at::native::values_sparse(self); }
int64_t nnz(const at::Tensor& self) { return at::native::_nnz_sparse(self); }
int64_t sparse_dim(const at::Tensor& self) { return at::native::sparse_dim_sparse(self); }
int64_t dense_dim(const at::Tensor& self) { return at::native::dense_dim_sparse(self); }
bool is_coalesced(const at::Tensor& self) { return at::native::is_coalesced_sparse(self); }
at::Tensor& coalesced_(at::Tensor& self, bool coalesced) { return at::native::_coalesced_sparse_(self, coalesced); }
at::Tensor clone(const at::Tensor& self, std::optional<at::MemoryFormat> format) {
  return at::native::clone_sparse(self, format);
}
at::Tensor& copy_(at::Tensor& self, const at::Tensor& src, bool non_blocking) {
  return at::native::copy_sparse_wrapper_(self, src, non_blocking);
}
at::Tensor& copy_sparse_to_sparse_(at::Tensor& self, const at::Tensor& src, bool non_blocking) {
  return at::native::copy_sparse_(self, src, non_blocking);
}
at::Tensor& zero_(at::Tensor& self) { return at::native::zero_sparse_(self); }
const at::Tensor& resize_and_clear_(const at::Tensor& self, at::IntArrayRef size, int64_t sparse_dim,
                                    int64_t dense_dim) {
  return at::native::sparse_resize_and_clear_(self, size, sparse_dim, dense_dim);
}
const at::Tensor& resize_(const at::Tensor& self, at::IntArrayRef size, int64_t sparse_dim, int64_t dense_dim) {
  return at::native::sparse_resize_(self, size, sparse_dim, dense_dim);
}
at::Tensor to_dense(const at::Tensor& self, std::optional<at::ScalarType> dtype, std::optional<bool> masked_grad) {
  return at::native::sparse_to_dense(self, dtype, masked_grad);
}
at::Tensor sparse_to_sparse(const at::Tensor& self, int64_t sparse_dim) {
  return at::native::sparse_coo_to_sparse(self, sparse_dim);
}
at::Tensor unsqueeze(const at::Tensor& self, int64_t dim) { return at::native::unsqueeze_sparse(self, dim); }
at::Tensor sum(const at::Tensor& self, std::optional<at::ScalarType> dtype) { return at::native::sum_coo(self, dtype); }

}  // namespace

TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, lib) {
  Kernels m(lib);
  m.impl("_sparse_coo_tensor_with_dims_and_tensors", &with_dims_and_tensors);
  m.impl("_sparse_coo_tensor_with_dims", &with_dims);
  m.impl("empty.memory_format", &empty_coo);
  m.impl("_indices", &indices_);
  m.impl("_values", &values_);
  m.impl("indices", &indices);
  m.impl("values", &values);
  m.impl("_nnz", &nnz);
  m.impl("sparse_dim", &sparse_dim);
  m.impl("dense_dim", &dense_dim);
  m.impl("is_coalesced", &is_coalesced);
  m.impl("_coalesced_", &coalesced_);
  m.impl("_coalesce", &coalesce);
  m.impl("clone", &clone);
  m.impl("copy_", &copy_);
  m.impl("copy_sparse_to_sparse_", &copy_sparse_to_sparse_);
  m.impl("zero_", &zero_);
  m.impl("sparse_resize_and_clear_", &resize_and_clear_);
  m.impl("sparse_resize_", &resize_);
  m.impl("_to_dense", &to_dense);
  m.impl("_to_sparse.sparse_dim", &sparse_to_sparse);
  m.impl("add.Tensor", &add);
  m.impl("add_.Tensor", &add_);
  m.impl("add.out", &add_out);
  m.impl("mul.Tensor", &mul);
  m.impl("mul_.Tensor", &mul_);
  m.impl("mul.out", &scale_out);
  m.impl("neg", &neg);
  m.impl("mv", &mv);
  m.impl("unsqueeze", &unsqueeze);
  m.impl("sparse_mask", &sparse_mask);
  m.impl("mm", &mm);
  m.impl("addmm", &addmm);
  m.impl("addmm_", &addmm_);
  m.impl("addmm.out", &addmm_out);
  m.impl("sum", &sum);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("_to_sparse.sparse_dim", &to_sparse_dims);
  m.impl("_to_sparse", &to_sparse);
}

}  // namespace tpu
