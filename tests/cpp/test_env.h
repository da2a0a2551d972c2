// Shared fixtures for the C++ tests: one client of the XLA:CPU plugin, whose
// path comes from TORCH_PJRT_PLUGIN_PATH (set by the test runner).
#pragma once

#include <cstdlib>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/runtime.h"
#include "pjrt/ffi.h"
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

// Registers a native function with the test client's plugin, once per
// target for the process.
inline void register_native(const char* target, pjrt::ffi::Handler* handler) {
  static std::set<std::string> done;
  if (done.insert(target).second) pjrt::register_ffi_handler(client().api(), target, "Host", handler);
}

// Points the engine's runtime at the same plugin, once per process (the
// engine tests of every file share it).
inline void configure_engine() {
  static bool done = [] {
    engine::Config c;
    const char* path = std::getenv("TORCH_PJRT_PLUGIN_PATH");
    if (!path) throw std::runtime_error("set TORCH_PJRT_PLUGIN_PATH to the XLA:CPU plugin");
    c.plugin_path = path;
    c.plugin_name = "cpu";
    engine::Runtime::configure(c);
    return true;
  }();
  (void)done;
}

// Compiles a program of f32 inputs, runs it, and returns each output
// flattened (out_sizes: element count of each output read back).
inline std::vector<std::vector<float>> run_f32(const std::string& text, const std::vector<std::vector<float>>& ins,
                                               const std::vector<std::vector<int64_t>>& dims,
                                               const std::vector<size_t>& out_sizes) {
  auto& c = client();
  auto exe = c.compile(text);
  std::vector<pjrt::BufferPtr> bufs;
  std::vector<PJRT_Buffer*> raw;
  for (size_t i = 0; i < ins.size(); ++i) {
    bufs.push_back(c.from_host(ins[i].data(), PJRT_Buffer_Type_F32, dims[i]));
    raw.push_back(bufs.back()->get());
  }
  auto outs = exe->execute(raw);
  std::vector<std::vector<float>> r;
  for (size_t i = 0; i < out_sizes.size(); ++i) {
    r.emplace_back(out_sizes[i]);
    if (out_sizes[i]) outs[i]->to_host(r.back().data(), out_sizes[i] * 4);
  }
  return r;
}

}  // namespace test_env
