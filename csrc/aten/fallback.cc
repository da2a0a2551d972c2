// The CPU fallback: any op without a tpu kernel runs on the CPU (inputs
// copied over, results and in-place / out= arguments copied back), counted
// per op so missing native coverage is visible.
#include "aten/fallback.h"

#include <ATen/SparseTensorImpl.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/SparseTensorUtils.h>
#include <torch/library.h>

#include <map>
#include <mutex>

#include "engine/program.h"

namespace tpu {

namespace {

std::mutex g_mu;
std::map<std::string, int64_t> g_counts;

// Counts a call of op through the CPU (and refuses it inside a traced graph).
void count(const c10::OperatorHandle& op) {
  const auto& name = op.schema().operator_name();
  std::string key = name.name + (name.overload_name.empty() ? "" : "." + name.overload_name);
  if (key.rfind("aten::", 0) == 0) key = key.substr(6);
  // A compiled graph is traced on values without data: the host cannot run it.
  TORCH_CHECK(!engine::tracing(), "tpu: ", key, " has no native tpu kernel (it runs through the CPU fallback) ",
              "and cannot be part of a compiled tpu program");
  std::lock_guard<std::mutex> g(g_mu);
  ++g_counts[key];
}

void fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  count(op);
  // View ops cannot alias across devices: refuse them loudly instead of
  // returning a copy that silently stops tracking writes.
  at::native::cpu_fallback(op, stack, /*error_on_views=*/true);
}

void write_back(const at::Tensor& dst, const at::Tensor& cpu) {
  if (!dst.is_sparse()) {
    const_cast<at::Tensor&>(dst).copy_(cpu);
    return;
  }
  TORCH_CHECK(cpu.is_sparse(), "tpu: a sparse tensor cannot take a dense result");
  auto* impl = at::sparse::get_sparse_impl(dst);
  impl->resize_(cpu.sparse_dim(), cpu.dense_dim(), cpu.sizes());
  impl->set_indices_and_values_unsafe(cpu._indices().to(dst.device()), cpu._values().to(dst.device()));
  impl->set_coalesced(cpu.is_coalesced());
}

}  // namespace

// PyTorch's cpu_fallback handles dense tensors only. Sparse ops without a
// tpu kernel run here the same way: every tpu tensor argument, sparse or
// dense, is moved to the CPU (Tensor.cpu() moves a sparse tensor's indices
// and values; one tensor passed twice stays one), the CPU kernel runs,
// written arguments take the CPU's result and new results move to the tpu.
void sparse_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  count(op);
  const c10::FunctionSchema& schema = op.schema();
  const size_t n = schema.arguments().size();
  const size_t first = stack->size() - n;
  std::optional<at::Device> device;
  std::vector<std::pair<at::Tensor, at::Tensor>> moved;  // (tpu tensor, its CPU copy)
  auto to_cpu = [&](const at::Tensor& t) {
    if (!t.defined() || t.device().type() != c10::DeviceType::PrivateUse1) return t;
    for (const auto& [tpu, cpu] : moved)
      if (tpu.is_same(t)) return cpu;
    device = t.device();
    moved.emplace_back(t, t.cpu());
    return moved.back().second;
  };
  std::vector<std::pair<at::Tensor, at::Tensor>> written;  // arguments the op writes
  for (size_t i = 0; i < n; ++i) {
    c10::IValue& v = (*stack)[first + i];
    if (v.isTensor()) {
      at::Tensor t = v.toTensor();
      v = to_cpu(t);
      const c10::AliasInfo* alias = schema.arguments()[i].alias_info();
      if (alias && alias->isWrite() && !v.toTensor().is_same(t)) written.emplace_back(t, v.toTensor());
    } else if (v.isTensorList()) {
      std::vector<at::Tensor> ts = v.toTensorVector();
      for (at::Tensor& t : ts) t = to_cpu(t);
      v = c10::IValue(ts);
    }
  }
  op.callBoxed(stack);
  if (!device) return;
  for (const auto& [tpu, cpu] : written) write_back(tpu, cpu);
  const size_t returns = schema.returns().size();
  for (size_t r = 0; r < returns; ++r) {
    c10::IValue& v = (*stack)[stack->size() - returns + r];
    if (!v.isTensor()) continue;
    if (!schema.returns()[r].alias_info()) {
      v = v.toTensor().to(*device);
      continue;
    }
    // An in-place / out= result is the written tpu tensor; any other alias
    // is a view, which a copy on another device cannot be.
    const at::Tensor result = v.toTensor();
    bool found = false;
    for (const auto& [tpu, cpu] : written)
      if (cpu.is_same(result)) {
        v = tpu;
        found = true;
      }
    TORCH_CHECK(found, "tpu: ", schema.name(),
                " returns a view, which the CPU fallback for sparse tensors cannot give");
  }
}

std::map<std::string, int64_t> fallback_counts() {
  std::lock_guard<std::mutex> g(g_mu);
  return g_counts;
}

void reset_fallback_counts() {
  std::lock_guard<std::mutex> g(g_mu);
  g_counts.clear();
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>()); }
TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&sparse_fallback>());
}

}  // namespace tpu
