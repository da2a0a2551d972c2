// Tensor creation and filling.
#include "aten/kernels.h"

#include <ATen/EmptyTensor.h>

#include "aten/device.h"
#include "aten/tensor.h"

namespace tpu {

namespace {

c10::Device device_or_current(std::optional<at::Device> d) {
  if (d.has_value() && d->has_index()) return *d;
  return c10::Device(c10::DeviceType::PrivateUse1, current_device());
}

void check_dtype(at::ScalarType t) { (void)to_shlo(t); }

}  // namespace

at::Tensor empty_memory_format(c10::SymIntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout> layout, std::optional<at::Device> device,
                               std::optional<bool> pin_memory,
                               std::optional<at::MemoryFormat> memory_format) {
  at::ScalarType st = dtype.value_or(at::get_default_dtype_as_scalartype());
  check_dtype(st);
  c10::Device dev = device_or_current(device);
  check_device(dev);
  c10::DeviceGuard guard(dev);
  constexpr c10::DispatchKeySet ks(c10::DispatchKey::PrivateUse1);
  return at::detail::empty_generic(C10_AS_INTARRAYREF_SLOW(size), allocator(), ks, st, memory_format);
}

at::Tensor empty_strided(c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                         std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                         std::optional<at::Device> device, std::optional<bool> pin_memory) {
  at::ScalarType st = dtype.value_or(at::get_default_dtype_as_scalartype());
  check_dtype(st);
  c10::Device dev = device_or_current(device);
  check_device(dev);
  c10::DeviceGuard guard(dev);
  constexpr c10::DispatchKeySet ks(c10::DispatchKey::PrivateUse1);
  return at::detail::empty_strided_generic(C10_AS_INTARRAYREF_SLOW(size), C10_AS_INTARRAYREF_SLOW(stride),
                                           allocator(), ks, st);
}

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  shlo::DType d = to_shlo(self.scalar_type());
  engine::Ref s = value.isFloatingPoint() ? engine::scalar(shlo::DType::F64, value.toDouble())
                  : value.isBoolean()     ? engine::scalar(shlo::DType::PRED, value.toBool())
                                          : engine::scalar_i64(value.toLong());
  write(self, broadcast(cast(s, d), shape_of(self.sizes())));
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  write(self, broadcast(cast(read(value), to_shlo(self.scalar_type())), shape_of(self.sizes())));
  return self;
}

at::Tensor& zero_(at::Tensor& self) { return fill_scalar(self, 0); }

}  // namespace tpu
