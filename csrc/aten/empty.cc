// Tensor allocation on the tpu: empty and empty_strided make a storage of
// the allocator (aten/device.h) with PyTorch's own size and stride rules;
// nothing is computed until the tensor is first written.
#include <ATen/EmptyTensor.h>

#include "aten/device.h"
#include "aten/library.h"
#include "aten/tensor.h"

namespace tpu {

namespace {

void check_dtype(at::ScalarType t) { (void)to_shlo(t); }

constexpr c10::DispatchKeySet kTpuKeys(c10::DispatchKey::PrivateUse1);

// A new tensor's dtype (the default one unless given), one the device holds.
at::ScalarType checked_dtype(std::optional<at::ScalarType> dtype) {
  at::ScalarType st = dtype.value_or(at::get_default_dtype_as_scalartype());
  check_dtype(st);
  check_f64(st);
  return st;
}

// A new tensor's device (the current one unless given), one that exists.
c10::Device checked_device(std::optional<at::Device> device) {
  c10::Device dev = device_or_current(device);
  check_device(dev);
  return dev;
}

at::Tensor empty_memory_format(c10::SymIntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout> layout, std::optional<at::Device> device,
                               std::optional<bool> pin_memory, std::optional<at::MemoryFormat> memory_format) {
  at::ScalarType st = checked_dtype(dtype);
  c10::DeviceGuard guard(checked_device(device));
  return at::detail::empty_generic(C10_AS_INTARRAYREF_SLOW(size), allocator(), kTpuKeys, st, memory_format);
}

at::Tensor empty_strided(c10::SymIntArrayRef size, c10::SymIntArrayRef stride, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout> layout, std::optional<at::Device> device,
                         std::optional<bool> pin_memory) {
  at::ScalarType st = checked_dtype(dtype);
  c10::DeviceGuard guard(checked_device(device));
  return at::detail::empty_strided_generic(C10_AS_INTARRAYREF_SLOW(size), C10_AS_INTARRAYREF_SLOW(stride), allocator(),
                                           kTpuKeys, st);
}

}  // namespace

at::Tensor new_empty(at::IntArrayRef sizes, at::IntArrayRef strides, at::ScalarType dtype, const c10::Device& device) {
  check_dtype(dtype);
  check_f64(dtype);
  // The allocator places a storage on the current device. An op's outputs
  // are nearly always there already: that device was checked when it was
  // made current (or is device 0 of a started runtime, as the op's inputs
  // show), and a guard would only set it twice.
  c10::OptionalDeviceGuard guard;
  if (!device.has_index() || device.index() != current_device()) guard.reset_device(checked_device(device));
  if (strides.empty()) return at::detail::empty_generic(sizes, allocator(), kTpuKeys, dtype, std::nullopt);
  return at::detail::empty_strided_generic(sizes, strides, allocator(), kTpuKeys, dtype);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("empty.memory_format", &empty_memory_format);
  m.impl("empty_strided", &empty_strided);
}

}  // namespace tpu
