// Per-op counts of CPU fallback calls.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace tpu {

std::map<std::string, int64_t> fallback_counts();
void reset_fallback_counts();

}  // namespace tpu
