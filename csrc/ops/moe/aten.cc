// torch.ops.torch_pjrt.moe_experts: a mixture-of-experts layer's experts as
// one op (lowering: moe.h), with a meta kernel so torch.compile and meta
// tensors see its shape. python/torch_pjrt/kernels/moe.py hands it to
// transformers' experts registry and gives it a backward.
#include <torch/library.h>

#include <string>

#include "aten/library.h"
#include "aten/tensor.h"
#include "engine/runtime.h"
#include "ops/linalg/grouped_mm.h"
#include "ops/linalg/grouped_rows_host.h"
#include "ops/moe/moe.h"
#include "ops/moe/moe_host.h"

namespace tpu {
namespace {

using ops::Activation;

// XLA:CPU programs route the layer's pairs natively (moe_host.h).
[[maybe_unused]] const int kMoeNative =
    engine::add_native_function({ops::kMoeDispatchTarget, &ops::moe_dispatch_handler, &ops::moe_dispatch_calls}) +
    engine::add_native_function({ops::kMoeCombineTarget, &ops::moe_combine_handler, &ops::moe_combine_calls});

Activation activation_named(const std::string& name) {
  if (name == "silu") return Activation::Silu;
  if (name == "gelu") return Activation::Gelu;
  if (name == "gelu_tanh") return Activation::GeluTanh;
  if (name == "relu") return Activation::Relu;
  TORCH_CHECK(false, "moe_experts: unsupported activation '", name, "' (silu, gelu, gelu_tanh or relu)");
}

// The layout of the expert tensors: 4-D tensors are the host panels (the
// form the torch.compile backend passes on XLA:CPU, grouped_rows_host.h).
ops::ExpertLayout layout_of(const at::Tensor& gate_up, bool in_out) {
  if (gate_up.dim() == 4) return ops::ExpertLayout::HostPanels;
  return in_out ? ops::ExpertLayout::InOut : ops::ExpertLayout::OutIn;
}

void check_args(const at::Tensor& hidden, const at::Tensor& index, const at::Tensor& weights, const at::Tensor& gate_up,
                const at::Tensor& down, const std::string& act, bool in_out) {
  activation_named(act);
  TORCH_CHECK(hidden.dim() == 2, "moe_experts: hidden_states must be [tokens, hidden], got ", hidden.sizes());
  TORCH_CHECK(index.dim() == 2 && index.size(0) == hidden.size(0),
              "moe_experts: top_k_index must be [tokens, top_k] with hidden_states' tokens, got ", index.sizes());
  TORCH_CHECK(!at::isFloatingType(index.scalar_type()) && !at::isComplexType(index.scalar_type()) &&
                  index.scalar_type() != at::kBool,
              "moe_experts: top_k_index must hold integers, got ", index.scalar_type());
  TORCH_CHECK(weights.sizes() == index.sizes(), "moe_experts: top_k_weights ", weights.sizes(),
              " must have top_k_index's shape ", index.sizes());
  const int64_t h = hidden.size(1), p = ops::kHostPanel;
  if (layout_of(gate_up, in_out) == ops::ExpertLayout::HostPanels) {
    TORCH_CHECK(down.dim() == 4 && gate_up.size(0) == down.size(0) && gate_up.size(3) == p && down.size(3) == p &&
                    gate_up.size(2) == h && down.size(1) * p == h && gate_up.size(1) * p == 2 * down.size(2),
                "moe_experts: host-panel expert tensors must be [experts, 2 * inter / ", p, ", hidden, ", p,
                "] and [experts, hidden / ", p, ", inter, ", p, "] for hidden size ", h, ", got ", gate_up.sizes(),
                " and ", down.sizes());
    TORCH_CHECK(hidden.scalar_type() == at::kFloat, "moe_experts: host-panel expert tensors are float32 only");
  } else {
    TORCH_CHECK(gate_up.dim() == 3 && down.dim() == 3 && gate_up.size(0) == down.size(0), "moe_experts: gate_up_proj ",
                in_out ? "[experts, hidden, 2 * inter]" : "[experts, 2 * inter, hidden]", " and down_proj ",
                in_out ? "[experts, inter, hidden]" : "[experts, hidden, inter]", " expected, got ", gate_up.sizes(),
                " and ", down.sizes());
    // (features in, features out) of each expert matrix.
    int64_t gi = gate_up.size(in_out ? 1 : 2), go = gate_up.size(in_out ? 2 : 1);
    int64_t di = down.size(in_out ? 1 : 2), dout = down.size(in_out ? 2 : 1);
    TORCH_CHECK(gi == h && go == 2 * di && dout == h, "moe_experts: gate_up_proj ", gate_up.sizes(), " and down_proj ",
                down.sizes(), " do not fit hidden size ", h);
  }
  at::ScalarType t = hidden.scalar_type();
  TORCH_CHECK(t == at::kFloat || t == at::kBFloat16 || t == at::kHalf,
              "moe_experts: hidden_states must be float32, bfloat16 or float16, got ", t);
  TORCH_CHECK(gate_up.scalar_type() == t && down.scalar_type() == t && weights.scalar_type() == t,
              "moe_experts: hidden_states, top_k_weights and the expert weights must share one dtype, got ", t, ", ",
              weights.scalar_type(), ", ", gate_up.scalar_type(), " and ", down.scalar_type());
}

// The panel-major view of 3-D expert matrices [E, in, out] (in_out) or [E,
// out, in]: [E, out / P, in, P], a view of the same storage.
at::Tensor host_panels(const at::Tensor& w, bool in_out) {
  const int64_t p = ops::kHostPanel;
  if (in_out) return w.view({w.size(0), w.size(1), w.size(2) / p, p}).permute({0, 2, 1, 3});
  return w.view({w.size(0), w.size(1) / p, p, w.size(2)}).permute({0, 1, 3, 2});
}

at::Tensor moe_experts(const at::Tensor& hidden, const at::Tensor& index, const at::Tensor& weights,
                       const at::Tensor& gate_up, const at::Tensor& down, c10::string_view act_name, bool in_out) {
  std::string act(act_name);
  check_args(hidden, index, weights, gate_up, down, act, in_out);
  at::Device device = common_device({&hidden, &index, &weights, &gate_up, &down});
  int64_t tile = ops::group_tile_rows(index.numel(), gate_up.size(0));
  ops::ExpertLayout layout = layout_of(gate_up, in_out);
  engine::Ref gu, dn;
  // On XLA:CPU, expert tensors read again with the same content
  // (inference) come from copies dense_copy keeps with the weights: f32 ones
  // in panels for the native grouped kernel (a single token gathers its k
  // experts' panels: one copy serves prefill and decoding), others [in,
  // out], the layout XLA:CPU's own products take fastest.
  auto from_copies = [&](const at::Tensor& gu_view, const at::Tensor& dn_view, ops::ExpertLayout copied) {
    std::optional<engine::Ref> g = dense_copy(gu_view), d = dense_copy(dn_view);
    if (!g || !d) return;
    gu = *g;
    dn = *d;
    layout = copied;
  };
  const int64_t p = ops::kHostPanel;
  if (layout != ops::ExpertLayout::HostPanels && hidden.scalar_type() == at::kFloat &&
      gate_up.size(in_out ? 2 : 1) % p == 0 && hidden.size(1) % p == 0 && native_functions())
    from_copies(host_panels(gate_up, in_out), host_panels(down, in_out), ops::ExpertLayout::HostPanels);
  else if (layout == ops::ExpertLayout::OutIn && platform().weight_copies)
    from_copies(gate_up.transpose(1, 2), down.transpose(1, 2), ops::ExpertLayout::InOut);
  if (!gu) {
    gu = read(gate_up);
    dn = read(down);
  }
  engine::Ref r = op1(
      "moe_experts", {read(hidden), read(index), read(weights), gu, dn}, type_of(hidden),
      [](shlo::Builder& b, const std::vector<shlo::Value>& in, Activation a, ops::ExpertLayout layout, int64_t tile) {
        return std::vector<shlo::Value>{ops::moe_experts(b, in[0], in[1], in[2], in[3], in[4], a, layout, tile)};
      },
      activation_named(act), layout, tile);
  return wrap(r, device);
}

at::Tensor moe_experts_meta(const at::Tensor& hidden, const at::Tensor& index, const at::Tensor& weights,
                            const at::Tensor& gate_up, const at::Tensor& down, c10::string_view act, bool in_out) {
  check_args(hidden, index, weights, gate_up, down, std::string(act), in_out);
  return at::empty_like(hidden, at::MemoryFormat::Contiguous);
}

}  // namespace
}  // namespace tpu

TORCH_LIBRARY_FRAGMENT(torch_pjrt, m) {
  m.def(
      "moe_experts(Tensor hidden_states, Tensor top_k_index, Tensor top_k_weights, Tensor gate_up_proj, "
      "Tensor down_proj, str activation, bool in_out=False) -> Tensor");
}
TORCH_LIBRARY_IMPL(torch_pjrt, PrivateUse1, m) { tpu::Kernels(m).impl("moe_experts", &tpu::moe_experts); }
TORCH_LIBRARY_IMPL(torch_pjrt, Meta, m) { m.impl("moe_experts", &tpu::moe_experts_meta); }
