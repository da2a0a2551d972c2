"""Layers for the `kernels` library's hub mechanism, shipped in this package.

transformers marks layers it lets the `kernels` library swap with
`@use_kernel_forward_from_hub(name)`; `model.use_kernels = True` (or
`from_pretrained(..., use_kernels=True)`, or `kernels.kernelize`) then
replaces each marked layer's forward with the one registered for that name,
the model's device type and the mode. For device type "tpu" the registered
forwards are the classes below, served from this package by a repository
that never reaches the network.

- "RMSNorm" (the norm of Llama, Qwen, Mistral and ~130 other models): one
  `aten::_fused_rms_norm` (a single program on tpu in every eager mode,
  differentiable through its own backward) and the weight's product,
  rounding as transformers' forward does: the normalised value in float32,
  cast to the input's dtype, then times the weight.

Every forward here works in inference, training and under torch.compile
(`can_torch_compile`, `has_backward`), as transformers asks of hub layers.
"""
import torch
from torch import nn

_rms_norm = torch.ops.aten._fused_rms_norm.default


class RMSNorm(nn.Module):
    can_torch_compile = True
    has_backward = True

    def forward(self, hidden_states):
        normed = _rms_norm(hidden_states, [hidden_states.shape[-1]], None, self.variance_epsilon)[0]
        return self.weight * normed


class LocalRepository:
    """A `kernels` repository whose layer is a class of this package (the
    protocol asks only for `load()`; hub repositories download a package)."""

    def __init__(self, layer):
        self.layer = layer
        self.layer_name = layer.__name__

    def load(self):
        return self.layer

    def __repr__(self):
        return f"torch_pjrt.kernels.hub.{self.layer_name}"


# Hub layer name -> the forward registered for it on tpu.
LAYERS = {"RMSNorm": RMSNorm}
REPOSITORIES = {name: LocalRepository(layer) for name, layer in LAYERS.items()}


def register(module):
    """Adds the tpu entries to the `kernels` library's global mapping (run
    when `kernels` is imported; transformers' own entries for other devices
    merge beside them)."""
    module.register_kernel_mapping({name: {"tpu": repo} for name, repo in REPOSITORIES.items()}, inherit_mapping=True)
