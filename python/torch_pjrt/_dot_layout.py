"""Weights read as [in, out] on XLA:CPU.

XLA:CPU multiplies x @ W.T (W stored [out, in], as torch.nn.Linear and
transformers' expert tensors keep it) at half the speed of x @ W with W
stored [in, out] once there are tens of rows (64 x 512 x 1408: 1.9 ms
against 0.6 ms; 64 x 512 x 32000: 16.8 ms against 8.6), and at a quarter for
the 8-row tiles of the MoE kernel; for one row, as in batch-1 decoding, [out,
in] is the faster of the two. Other plugins choose layouts themselves.
Inference reads such weights from an [in, out] copy made once per weight and
content, and dropped with the weight. A copy is current while the weight's
storage holds the content it was made from (_C._ContentView, the rule the
eager copies follow): any write makes a new one, those that leave the
tensor's version alone included (`.data` assignment, `.data.mul_()`). Here, the torch.compile backend's, for matmuls of many rows
and the MoE kernel's expert tensors as graph inputs (f32 ones in the panel
form the native grouped kernel reads, csrc/ops/linalg/grouped_rows_host.h);
eager mm, addmm and the MoE kernel make theirs in C++ (dense_copy in
csrc/aten/tensor.h).
"""
import weakref

import torch

from . import _C, _platform

# Row count from which a plain matmul reads its weight better as [in, out].
MIN_ROWS = 16

# (id(weight), layout) -> (weakref to it, the content copied, the copy).
copies = {}

# Output columns per panel of the native grouped kernel's weights (kHostPanel
# in csrc/ops/linalg/grouped_rows_host.h).
HOST_PANEL = 32

_applies = None
_native = None


def applies():
    global _applies
    if _applies is None:  # the platform's policy, asked once
        _applies = _platform.policy().weight_copies
    return _applies


def native_functions():
    """Whether programs may call the native host kernels (XLA:CPU)."""
    global _native
    if _native is None:
        _native = bool(_C._runtime_info().get("native_functions"))
    return _native


def _copy(w, layout, make):
    key = (id(w), layout)
    hit = copies.get(key)
    if hit is not None and hit[0]() is w and hit[1].matches(w):
        return hit[2]
    content = _C._ContentView(w)
    with torch.no_grad():
        c = make(w.detach())
    copies[key] = (weakref.ref(w, lambda _: copies.pop(key, None)), content, c)
    return c


def in_out(w):
    """W with its last two dims swapped, contiguous, made once per weight and
    content."""
    return _copy(w, "in_out", lambda w: w.transpose(-2, -1).contiguous())


def host_panels(w):
    """Expert matrices [E, out, in] in the native grouped kernel's panel-major
    form [E, out / HOST_PANEL, in, HOST_PANEL], made once per weight and
    content."""
    def make(w):
        e, n, k = w.shape
        return w.view(e, n // HOST_PANEL, HOST_PANEL, k).permute(0, 1, 3, 2).contiguous()
    return _copy(w, "host_panels", make)
