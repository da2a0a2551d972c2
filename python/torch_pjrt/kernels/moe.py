"""The experts of a mixture-of-experts layer as one program on `tpu`.

transformers runs a MoE layer's experts through a function picked by name
from `ALL_EXPERTS_FUNCTIONS`: "grouped_mm" by default and, on any device but
the CPU, "batched_mm" while `generate()` decodes. Both are ~20 small ops, and
"batched_mm" copies the chosen expert's weights once per (token, choice).
`torch.ops.torch_pjrt.moe_experts` (csrc/ops/moe) does the whole layer in
one program that reads each active expert's weights once.

Registered as "tpu_experts" (`from_pretrained(..., experts_implementation=
"tpu_experts")`), and, for tensors on `tpu`, standing in for "grouped_mm" and
"batched_mm" whenever the layer has the shape the kernel computes: gate and
up projections concatenated, not transposed, no biases, no post-expert
norm, transformers' own gate, an activation the kernel knows (either
weight layout: `is_transposed` layers are read as they are). Any other
layer, device or `torch_pjrt.kernels.standard_only()` block runs
transformers' function unchanged.

Backward: the kernel's outputs are differentiable; the gradient is that of
the same layer written with `torch._grouped_mm` (recomputed, not saved), so
training steps give transformers' gradients.
"""
import torch

# Whether "grouped_mm" / "batched_mm" on tpu run the kernel (see
# torch_pjrt.kernels.standard_only).
substitute = True

# config.hidden_act -> the kernel's activation name.
_ACTIVATIONS = {"silu": "silu", "swish": "silu", "gelu": "gelu", "gelu_pytorch_tanh": "gelu_tanh",
                "gelu_new": "gelu_tanh", "relu": "relu"}
_TORCH_ACTIVATIONS = {"silu": torch.nn.functional.silu,
                      "gelu": torch.nn.functional.gelu,
                      "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
                      "relu": torch.nn.functional.relu}


def _layer_reference(hidden, index, weights, gate_up, down, activation, in_out):
    """The layer in differentiable ATen ops (the kernel's backward)."""
    if not in_out:
        gate_up, down = gate_up.transpose(1, 2), down.transpose(1, 2)
    tokens, top_k = index.shape
    experts = gate_up.shape[0]
    ids = index.reshape(-1)
    valid = (ids >= 0) & (ids < experts)
    ids = torch.where(valid, ids, experts)
    sorted_ids, perm = torch.sort(ids, stable=True)
    counts = (sorted_ids.unsqueeze(0) == torch.arange(experts, device=ids.device).unsqueeze(1)).sum(1)
    offs = torch.cumsum(counts, 0).to(torch.int32)
    rows = hidden[perm // top_k]
    proj = torch._grouped_mm(rows, gate_up, offs)
    gate, up = proj.chunk(2, dim=-1)
    mid = _TORCH_ACTIVATIONS[activation](gate) * up
    out = torch._grouped_mm(mid, down, offs)
    out = out * weights.reshape(-1)[perm].unsqueeze(-1)
    out = torch.where((sorted_ids < experts).unsqueeze(-1), out, torch.zeros((), dtype=out.dtype, device=out.device))
    per_pair = torch.empty_like(out).index_copy(0, perm, out)
    return per_pair.view(tokens, top_k, -1).sum(1).to(hidden.dtype)


class _Experts(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, index, weights, gate_up, down, activation, in_out):
        ctx.save_for_backward(hidden, index, weights, gate_up, down)
        ctx.activation, ctx.in_out = activation, in_out
        return torch.ops.torch_pjrt.moe_experts(hidden, index, weights, gate_up, down, activation, in_out)

    @staticmethod
    def backward(ctx, grad):
        hidden, index, weights, gate_up, down = ctx.saved_tensors
        inputs = [t.detach().requires_grad_(need) for t, need in
                  zip((hidden, weights, gate_up, down), (ctx.needs_input_grad[0], *ctx.needs_input_grad[2:5]))]
        with torch.enable_grad():
            out = _layer_reference(inputs[0], index, inputs[1], inputs[2], inputs[3], ctx.activation, ctx.in_out)
            wanted = [t for t in inputs if t.requires_grad]
            grads = iter(torch.autograd.grad(out, wanted, grad)) if wanted else iter(())
        g = [next(grads) if t.requires_grad else None for t in inputs]
        return g[0], None, g[1], g[2], g[3], None, None


def moe_experts(hidden_states, top_k_index, top_k_weights, gate_up_proj, down_proj, activation="silu", in_out=False):
    """The experts layer: `hidden_states` [tokens, hidden], `top_k_index` /
    `top_k_weights` [tokens, top_k], `gate_up_proj` [experts, 2 * inter,
    hidden], `down_proj` [experts, hidden, inter] (with `in_out`: [experts,
    hidden, 2 * inter] and [experts, inter, hidden]); ids outside [0,
    experts) contribute nothing. Differentiable."""
    return _Experts.apply(hidden_states, top_k_index, top_k_weights.to(hidden_states.dtype),
                          gate_up_proj, down_proj, activation, in_out)


def _kernel_activation(layer):
    """The kernel's activation name for this experts layer, or None when the
    kernel does not compute what the layer's forward would."""
    from transformers.integrations import moe as hf_moe
    if getattr(layer, "has_bias", True) or not getattr(layer, "has_gate", False):
        return None
    if not getattr(layer, "is_concatenated", False):
        return None
    if getattr(layer, "has_post_expert_norm", True):
        return None
    if type(layer)._apply_gate is not hf_moe._default_apply_gate:
        return None
    if not hasattr(layer, "gate_up_proj") or not hasattr(layer, "down_proj"):
        return None
    return _ACTIVATIONS.get(getattr(layer.config, "hidden_act", None))


def tpu_experts_forward(self, hidden_states, top_k_index, top_k_weights):
    """The "tpu_experts" implementation: the kernel where it applies,
    transformers' "grouped_mm" elsewhere."""
    from transformers.integrations import moe as hf_moe
    act = _kernel_activation(self) if hidden_states.device.type == "tpu" else None
    if act is None:
        return hf_moe.grouped_mm_experts_forward(self, hidden_states, top_k_index, top_k_weights)
    # (Eager on XLA:CPU the op reads [out, in] expert tensors from [in, out]
    # copies itself; a compiled graph gets them as inputs, see fx_passes.py.)
    in_out = bool(getattr(self, "is_transposed", False))
    return moe_experts(hidden_states, top_k_index, top_k_weights, self.gate_up_proj, self.down_proj, act, in_out)


def _substituting(standard):
    def forward(self, hidden_states, top_k_index, top_k_weights):
        if substitute and hidden_states.device.type == "tpu" and _kernel_activation(self) is not None:
            return tpu_experts_forward(self, hidden_states, top_k_index, top_k_weights)
        return standard(self, hidden_states, top_k_index, top_k_weights)
    forward.__name__ = f"{standard.__name__}_or_tpu_experts"
    forward.standard = standard
    return forward


def register(module):
    """Registers the kernel in transformers' experts registry (run when
    transformers.integrations.moe is imported)."""
    interface = module.ExpertsInterface
    standard = {name: interface._global_mapping[name] for name in ("grouped_mm", "batched_mm")}  # before any change
    interface.register("tpu_experts", tpu_experts_forward)
    for name, current in standard.items():
        if not hasattr(current, "standard"):
            interface.register(name, _substituting(current))
