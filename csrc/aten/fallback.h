// The CPU fallbacks, dense and sparse, and their per-op call counts.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <cstdint>
#include <map>
#include <string>

namespace tpu {

std::map<std::string, int64_t> fallback_counts();
void reset_fallback_counts();

// Runs op on the CPU for arguments that include sparse tpu tensors (moved
// there and back; written arguments take the CPU's result), counted as a
// fallback call. Registered for every sparse op without a tpu kernel.
void sparse_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace tpu
