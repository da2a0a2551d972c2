// Host <-> device transfers and same-device copies.
#pragma once

#include <ATen/ATen.h>

namespace tpu {

at::Tensor to_cpu(const at::Tensor& src);
const at::Tensor& copy_into(const at::Tensor& dst, const at::Tensor& src);
at::Tensor& copy_(at::Tensor& self, const at::Tensor& src, bool non_blocking);
at::Tensor _copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking);
at::Tensor _copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst);
at::Scalar _local_scalar_dense(const at::Tensor& self);

}  // namespace tpu
