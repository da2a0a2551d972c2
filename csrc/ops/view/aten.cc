// Metadata-only ops: views share the storage handle and differ in
// (sizes, strides, offset, dtype); resize_ and set_ rebind storage; the
// shallow-copy compatibility query lets Module.to("tpu") keep tied
// parameters tied.
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_native.h>

#include "aten/device.h"
#include "aten/library.h"
#include "aten/tensor.h"

namespace tpu {

namespace {

at::Tensor view(const at::Tensor& self, c10::SymIntArrayRef size) {
  return at::native::view(self, C10_AS_INTARRAYREF_SLOW(size));
}

at::Tensor as_strided(const at::Tensor& self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                      std::optional<c10::SymInt> storage_offset) {
  std::optional<int64_t> off;
  if (storage_offset.has_value()) off = storage_offset->expect_int();
  return at::native::as_strided_tensorimpl(self, C10_AS_INTARRAYREF_SLOW(size), C10_AS_INTARRAYREF_SLOW(stride), off);
}

at::Tensor _reshape_alias(const at::Tensor& self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride) {
  return at::native::_reshape_alias(self, C10_AS_INTARRAYREF_SLOW(size), C10_AS_INTARRAYREF_SLOW(stride));
}

at::Tensor unfold(const at::Tensor& self, int64_t dim, int64_t size, int64_t step) {
  return at::native::unfold(self, dim, size, step);
}

namespace {

void ensure_storage_bytes(const at::Tensor& self, size_t needed) {
  const c10::Storage& st = self.storage();
  if (st.nbytes() < needed) resize_storage_bytes(st, needed);
}

}  // namespace

const at::Tensor& resize_(const at::Tensor& self, c10::SymIntArrayRef size,
                          std::optional<at::MemoryFormat> memory_format) {
  auto sizes = C10_AS_INTARRAYREF_SLOW(size);
  for (int64_t s : sizes) TORCH_CHECK(s >= 0, "resize_: negative size ", s);
  // Same sizes and no format request: PyTorch leaves the strides alone (an
  // out= view keeps writing the elements it views).
  if (self.sizes() == sizes && (!memory_format.has_value() || *memory_format == at::MemoryFormat::Preserve))
    return self;
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_contiguous(sizes);
  if (memory_format.has_value() && *memory_format != at::MemoryFormat::Preserve)
    impl->empty_tensor_restride(*memory_format);
  size_t needed =
      at::detail::computeStorageNbytes(self.sizes(), self.strides(), self.dtype().itemsize(), self.storage_offset());
  if (self.numel() > 0) ensure_storage_bytes(self, needed);
  return self;
}

at::Tensor& set_storage(at::Tensor& self, at::Storage source, c10::SymInt storage_offset, c10::SymIntArrayRef size,
                        c10::SymIntArrayRef stride) {
  auto sizes = C10_AS_INTARRAYREF_SLOW(size);
  auto strides = C10_AS_INTARRAYREF_SLOW(stride);
  int64_t off = storage_offset.expect_int();
  auto* impl = self.unsafeGetTensorImpl();
  if (!impl->storage().is_alias_of(source)) impl->set_storage_keep_dtype(std::move(source));
  impl->set_sizes_and_strides(sizes, strides, off);
  if (self.numel() > 0) {
    size_t needed = at::detail::computeStorageNbytes(self.sizes(), self.strides(), self.dtype().itemsize(), off);
    ensure_storage_bytes(self, needed);
  }
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, at::Storage source) {
  int64_t n = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  return set_storage(self, std::move(source), 0, {n}, {1});
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& src) {
  return set_storage(self, src.storage(), src.sym_storage_offset(), src.sym_sizes(), src.sym_strides());
}

at::Tensor& set_empty(at::Tensor& self) {
  at::Storage st(at::Storage::use_byte_size_t(), 0, allocator(), true);
  return set_storage(self, st, 0, {0}, {1});
}

bool dense_cpu_or_tpu(const at::Tensor& t) {
  return t.layout() == at::kStrided && (t.device().is_cpu() || t.device().is_privateuseone()) && !t.is_quantized() &&
         !t.key_set().has(c10::DispatchKey::Python);
}

// PrivateUse1 is not among c10's "dense" backends, so without this
// Module._apply makes a new Parameter per module when moving to the tpu
// and tied weights (embeddings / LM heads) come apart. Dense CPU and tpu
// tensors can swap implementations like CPU and CUDA ones do.
bool _has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  if (dense_cpu_or_tpu(self) && dense_cpu_or_tpu(from)) return true;
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("_has_compatible_shallow_copy_type", &_has_compatible_shallow_copy_type);
  m.impl("_reshape_alias", &_reshape_alias);
  m.impl("as_strided", &as_strided);
  m.impl("resize_", &resize_);
  m.impl("set_", &set_empty);
  m.impl("set_.source_Storage", &set_source_storage);
  m.impl("set_.source_Storage_storage_offset", &set_storage);
  m.impl("set_.source_Tensor", &set_source_tensor);
  m.impl("unfold", &unfold);
  m.impl("view", &view);
}

}  // namespace tpu
