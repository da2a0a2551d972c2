"""Weights read as [in, out] on XLA:CPU.

XLA:CPU multiplies x @ W.T (W stored [out, in], as torch.nn.Linear and
transformers' expert tensors keep it) at half the speed of x @ W with W
stored [in, out] once there are tens of rows (64 x 512 x 1408: 1.9 ms
against 0.6 ms; 64 x 512 x 32000: 16.8 ms against 8.6), and at a quarter for
the 8-row tiles of the MoE kernel; for one row, as in batch-1 decoding, [out,
in] is the faster of the two. Other plugins choose layouts themselves.
Inference reads such weights from an [in, out] copy made once per weight and
version (an optimizer step or an in-place load makes a new one) and dropped
with the weight: here, the torch.compile backend's, for matmuls of many rows
and the MoE kernel's expert tensors as graph inputs; eager mm, addmm and the
MoE kernel make theirs in C++ (dense_copy in csrc/aten/tensor.h).
"""
import weakref

import torch

from . import _C

# Row count from which a plain matmul reads its weight better as [in, out].
MIN_ROWS = 16

# id(weight) -> (weakref to it, its version when copied, the copy).
copies = {}


_applies = None


def applies():
    global _applies
    if _applies is None:  # the plugin's platform, asked once
        _applies = _C._runtime_info().get("platform") == "cpu"
    return _applies


def in_out(w):
    """W with its last two dims swapped, contiguous, made once per weight and
    version."""
    key = id(w)
    hit = copies.get(key)
    if hit is not None and hit[0]() is w and hit[1] == w._version:
        return hit[2]
    with torch.no_grad():
        c = w.detach().transpose(-2, -1).contiguous()
    copies[key] = (weakref.ref(w, lambda _: copies.pop(key, None)), w._version, c)
    return c
