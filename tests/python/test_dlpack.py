"""DLPack and tpu tensors: tpu memory is not addressable by other libraries,
so every route to another library either reports that clearly or goes
through the CPU; a capsule of a tpu tensor imported back into torch is an
alias of it. None may crash the process or name a wrong device."""
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch.utils.dlpack import from_dlpack, to_dlpack

from conftest import TPU


def test_dlpack_device_is_refused():
    t = torch.randn(3, 4).to(TPU)
    with pytest.raises((ValueError, RuntimeError, BufferError)):
        t.__dlpack_device__()
    with pytest.raises((ValueError, RuntimeError, BufferError)):
        torch.from_dlpack(t)
    with pytest.raises((ValueError, RuntimeError, BufferError, TypeError)):
        np.from_dlpack(t)


def test_a_capsule_imported_back_aliases_the_tensor():
    x = torch.randn(4, 5)
    t = x.to(TPU)
    for imp in (torch.from_dlpack, torch.asarray):
        a = imp(to_dlpack(t))
        assert a.device == t.device and a.data_ptr() == t.data_ptr()
        torch.testing.assert_close(a.cpu(), t.cpu())
    # Writes through either are seen by the other, as DLPack promises.
    a.add_(1)
    torch.testing.assert_close(t.cpu(), x + 1)
    t[0] = 0
    torch.testing.assert_close(a.cpu()[0], torch.zeros(5))
    # asarray(copy=True) copies.
    c = torch.asarray(to_dlpack(t), copy=True)
    assert c.data_ptr() != t.data_ptr()
    c.zero_()
    assert t.cpu().abs().sum() > 0
    # A view that starts inside its storage is refused with a way out.
    with pytest.raises(RuntimeError, match="export the whole tensor"):
        torch.from_dlpack(to_dlpack(t[1])).cpu()


def test_through_cpu_matches():
    x = torch.randn(3, 4)
    t = x.to(TPU)
    y = from_dlpack(to_dlpack(t.cpu()))
    torch.testing.assert_close(y, x)
    torch.testing.assert_close(torch.from_dlpack(np.from_dlpack(t.cpu())).to(TPU).cpu(), x)


# A capsule of a tpu tensor imported back (torch.asarray, from_dlpack of the
# capsule) used to make a tpu tensor over a foreign pointer that crashed the
# process at its first read: run in a child so the suite survives.
_IMPORT = r"""
import torch, torch_pjrt
from torch.utils.dlpack import to_dlpack, from_dlpack
t = torch.arange(6.0).reshape(2, 3).to("tpu")
for imp in (torch.asarray, from_dlpack):
    try:
        r = imp(to_dlpack(t))
        assert r.device.type in ("tpu", "cpu") and (r.device.index or 0) < torch.tpu.device_count(), r.device
        r.cpu()
    except (RuntimeError, BufferError, ValueError) as e:
        assert "tpu" in str(e), e
print("OK")
"""


@pytest.mark.once("runs its own child process")
def test_capsule_import_never_crashes():
    r = subprocess.run([sys.executable, "-c", _IMPORT], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "OK" in r.stdout, (r.returncode, r.stdout[-2000:], r.stderr[-4000:])
