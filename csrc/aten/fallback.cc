// The CPU fallback: any op without a tpu kernel runs on the CPU (inputs
// copied over, results and in-place / out= arguments copied back), counted
// per op so missing native coverage is visible.
#include "aten/fallback.h"

#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <map>
#include <mutex>

#include "engine/program.h"

namespace tpu {

namespace {

std::mutex g_mu;
std::map<std::string, int64_t> g_counts;

void fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& name = op.schema().operator_name();
  std::string key = name.name + (name.overload_name.empty() ? "" : "." + name.overload_name);
  if (key.rfind("aten::", 0) == 0) key = key.substr(6);
  // A compiled graph is traced on values without data: the host cannot run it.
  TORCH_CHECK(!engine::tracing(), "tpu: ", key, " has no native tpu kernel (it runs through the CPU fallback) ",
              "and cannot be part of a compiled tpu program");
  {
    std::lock_guard<std::mutex> g(g_mu);
    ++g_counts[key];
  }
  // View ops cannot alias across devices: refuse them loudly instead of
  // returning a copy that silently stops tracking writes.
  at::native::cpu_fallback(op, stack, /*error_on_views=*/true);
}

}  // namespace

std::map<std::string, int64_t> fallback_counts() {
  std::lock_guard<std::mutex> g(g_mu);
  return g_counts;
}

void reset_fallback_counts() {
  std::lock_guard<std::mutex> g(g_mu);
  g_counts.clear();
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>()); }

}  // namespace tpu
