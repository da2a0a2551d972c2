#include "engine/platform.h"

#include <atomic>
#include <mutex>

#include "engine/runtime.h"

namespace engine {

namespace {

PlatformPolicy make(pjrt::Platform p) {
  PlatformPolicy r;
  r.platform = p;
  switch (p) {
    case pjrt::Platform::Cpu:
      r.host_memory = r.host_functions = r.weight_copies = r.xnnpack_off = r.quick_small_compiles = true;
      break;
    case pjrt::Platform::Gpu:
      r.native_bf16 = true;
      break;
    case pjrt::Platform::Tpu:
      r.f64 = false;
      r.native_bf16 = true;
      break;
    case pjrt::Platform::Other:
      break;
  }
  return r;
}

std::mutex g_mu;
std::optional<pjrt::Platform> g_override;
std::atomic<const PlatformPolicy*> g_current{nullptr};

}  // namespace

const PlatformPolicy& policy_for(pjrt::Platform p) {
  static const PlatformPolicy table[] = {make(pjrt::Platform::Cpu), make(pjrt::Platform::Gpu),
                                         make(pjrt::Platform::Tpu), make(pjrt::Platform::Other)};
  return table[static_cast<int>(p)];
}

// Another platform's rules, with no host functions: the running plugin may
// not take them.
const PlatformPolicy& overridden_policy(pjrt::Platform p) {
  auto make_overridden = [](pjrt::Platform q) {
    PlatformPolicy r = make(q);
    r.host_functions = false;
    return r;
  };
  static const PlatformPolicy table[] = {make_overridden(pjrt::Platform::Cpu), make_overridden(pjrt::Platform::Gpu),
                                         make_overridden(pjrt::Platform::Tpu), make_overridden(pjrt::Platform::Other)};
  return table[static_cast<int>(p)];
}

const PlatformPolicy& platform_policy() {
  if (const PlatformPolicy* p = g_current.load(std::memory_order_acquire)) return *p;
  std::optional<pjrt::Platform> o;
  {
    std::lock_guard<std::mutex> g(g_mu);
    o = g_override;
  }
  const PlatformPolicy* p = o ? &overridden_policy(*o) : &policy_for(Runtime::get().client().kind());
  g_current.store(p, std::memory_order_release);
  return *p;
}

void set_platform_override(std::optional<pjrt::Platform> p) {
  std::lock_guard<std::mutex> g(g_mu);
  g_override = p;
  g_current.store(nullptr, std::memory_order_release);
}

bool platform_overridden() {
  std::lock_guard<std::mutex> g(g_mu);
  return g_override.has_value();
}

}  // namespace engine
