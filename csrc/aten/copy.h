// Host <-> device transfers and same-device copies.
#pragma once

#include <ATen/ATen.h>

namespace tpu {

at::Tensor to_cpu(const at::Tensor& src);
const at::Tensor& copy_into(const at::Tensor& dst, const at::Tensor& src);

}  // namespace tpu
