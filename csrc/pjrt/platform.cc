#include "pjrt/platform.h"

#include <cctype>
#include <string>

namespace pjrt {

Platform platform_named(std::string_view name) {
  std::string n(name);
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n == "cpu" || n == "host") return Platform::Cpu;
  if (n == "cuda" || n == "rocm" || n == "gpu") return Platform::Gpu;
  if (n == "tpu") return Platform::Tpu;
  return Platform::Other;
}

const char* platform_label(Platform p) {
  switch (p) {
    case Platform::Cpu:
      return "cpu";
    case Platform::Gpu:
      return "gpu";
    case Platform::Tpu:
      return "tpu";
    case Platform::Other:
      break;
  }
  return "other";
}

}  // namespace pjrt
