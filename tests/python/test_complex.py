"""Complex tensors on the tpu: view_as_real / view_as_complex over shared
storage (reads, writes through either view) and complex arithmetic."""
import pytest
import torch

from conftest import TPU, assert_close


def test_view_as_real_reads_and_prints():
    z = torch.randn(3, 4, dtype=torch.complex64)
    zt = z.to(TPU)
    assert_close(zt, z)
    r = torch.view_as_real(zt)
    assert r.shape == (3, 4, 2) and r.dtype == torch.float32
    assert r.untyped_storage().data_ptr() == zt.untyped_storage().data_ptr()
    assert_close(r, torch.view_as_real(z))
    assert_close(torch.view_as_real(zt[:, 1::2]), torch.view_as_real(z[:, 1::2]))
    assert "j" in repr(zt)


def test_view_as_real_writes_are_visible():
    z = torch.randn(5, dtype=torch.complex64)
    zt = z.to(TPU)
    r, rt = torch.view_as_real(z), torch.view_as_real(zt)
    r[:, 1] = 7.0
    rt[:, 1] = 7.0
    assert_close(zt, z)
    zt.mul_(2)
    z.mul_(2)
    assert_close(rt, r)


def test_view_as_complex_writes_are_visible():
    x = torch.randn(4, 3, 2)
    xt = x.to(TPU)
    c, ct = torch.view_as_complex(x), torch.view_as_complex(xt)
    assert ct.dtype == torch.complex64 and ct.shape == (4, 3)
    assert_close(ct, c)
    src = torch.randn(3, dtype=torch.complex64)
    c[1] = src
    ct[1] = src.to(TPU)
    assert_close(xt, x)
    xt[0, 0, 1] = -3.0
    x[0, 0, 1] = -3.0
    assert_close(ct, c)


@pytest.mark.allow_fallback("polar")  # polar.out has no native lowering yet
def test_complex_arithmetic():
    a, b = torch.randn(6, dtype=torch.complex64), torch.randn(6, dtype=torch.complex64)
    assert_close((a.to(TPU) + b.to(TPU)), a + b)
    mag, ang = torch.rand(5) + 0.1, torch.randn(5)
    assert_close(torch.polar(mag.to(TPU), ang.to(TPU)), torch.polar(mag, ang), atol=1e-5, rtol=1e-5)
