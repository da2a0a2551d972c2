// Shared fixtures for the C++ tests: one client of the XLA:CPU plugin, whose
// path comes from TORCH_PJRT_PLUGIN_PATH (set by the test runner).
#pragma once

#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "pjrt/runtime.h"

namespace test_env {

inline pjrt::Client& client() {
  static std::unique_ptr<pjrt::Client> c = [] {
    const char* path = std::getenv("TORCH_PJRT_PLUGIN_PATH");
    if (!path) throw std::runtime_error("set TORCH_PJRT_PLUGIN_PATH to the XLA:CPU plugin");
    return std::make_unique<pjrt::Client>(std::make_shared<pjrt::Api>(path), pjrt::ClientOptions{});
  }();
  return *c;
}

}  // namespace test_env
