// The kind of machine a plugin drives, read once from its platform name
// (PJRT_Client_PlatformName): code that behaves differently by platform
// asks for this enum, never compares the name.
#pragma once

#include <string_view>

namespace pjrt {

enum class Platform { Cpu, Gpu, Tpu, Other };

// "cpu" / "host" (XLA:CPU), "cuda" / "rocm" / "gpu" (XLA:GPU), "tpu"
// (libtpu), in any case; anything else is Other.
Platform platform_named(std::string_view name);
// The lowercase name users see: "cpu", "gpu", "tpu" or "other".
const char* platform_label(Platform p);

}  // namespace pjrt
