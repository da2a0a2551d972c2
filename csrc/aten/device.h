// Device-level services of the tpu backend used across the aten layer.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <utility>

#include "shlo/builder.h"

namespace tpu {

c10::Allocator* allocator();
// (free, total) bytes of a tpu device's memory (torch.tpu.mem_get_info).
std::pair<size_t, size_t> memory_info(c10::DeviceIndex device);
c10::DeviceIndex current_device();
// d when it names a device index, else the current tpu device (a factory's
// device= argument).
c10::Device device_or_current(std::optional<at::Device> d);
int device_count();
// Starts the runtime if needed (a clear error naming the pip package when
// the plugin is missing) and checks that d is one of its devices.
void check_device(const c10::Device& d);
bool is_available();
// Whether a storage's DataPtr was made by the tpu allocator (a tpu tensor
// built on foreign memory, e.g. by from_blob, has no device content).
bool is_tpu_storage(const c10::DataPtr& p);
void synchronize();
void resize_storage_bytes(const c10::Storage& storage, size_t newsize);

// The generator to use for a random op, and the (seed, counter) key that
// makes this call's random stream; the counter advances per call.
at::Generator& generator_or_default(const std::optional<at::Generator>& g, c10::DeviceIndex i);
std::pair<uint64_t, uint64_t> next_random_key(at::Generator& gen);

}  // namespace tpu
