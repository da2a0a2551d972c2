"""In-place updates reuse the device buffer (donation) when nothing else can
see the old value, and never when something can."""
import copy

import pytest
import torch

import torch_pjrt
from conftest import assert_close

TPU = "tpu"


@pytest.fixture
def mode(request):
    prev = torch_pjrt.get_eager_mode()
    torch_pjrt.set_eager_mode(request.param)
    yield request.param
    torch_pjrt.set_eager_mode(prev)


def donated():
    return torch.tpu.memory_stats()["num_donated_buffers"]


@pytest.mark.parametrize("mode", ["strict", "fused"], indirect=True)
@pytest.mark.once("runs in the eager modes it names")
def test_in_place_loop_updates_in_place(mode):
    x = torch.randn(512, 512, device=TPU)  # 1 MiB
    ref = x.cpu()
    torch.tpu.synchronize()
    before, base = donated(), torch.tpu.memory_allocated()
    torch.tpu.reset_peak_memory_stats()
    for _ in range(10):
        x.mul_(1.01).add_(0.5)
        ref.mul_(1.01).add_(0.5)
    torch.tpu.synchronize()
    assert donated() > before
    # never two copies of x at once
    assert torch.tpu.max_memory_allocated() - base < 512 * 512 * 4
    assert_close(x, ref)


@pytest.mark.parametrize("mode", ["debug", "strict", "fused"], indirect=True)
@pytest.mark.once("runs in the eager modes it names")
def test_old_value_still_read_is_not_lost(mode):
    x = torch.randn(64, device=TPU)
    ref = x.cpu()
    y = x * 2  # reads the old x; in strict mode still queued, in fused mode pending
    x.add_(1)
    z = x * 3
    assert_close(y, ref * 2)
    assert_close(x, ref + 1)
    assert_close(z, (ref + 1) * 3)


@pytest.mark.parametrize("mode", ["debug", "strict", "fused"], indirect=True)
@pytest.mark.once("runs in the eager modes it names")
def test_aliases_and_views_see_the_update(mode):
    x = torch.randn(8, 8, device=TPU)
    ref = x.cpu()
    alias, row = x.detach(), x[2]
    x.add_(1)
    ref.add_(1)
    assert_close(alias, ref)
    assert_close(row, ref[2])
    assert_close(x, ref)


@pytest.mark.parametrize("mode", ["strict", "fused"], indirect=True)
@pytest.mark.once("runs in the eager modes it names")
def test_optimizer_steps_donate_and_match_cpu(mode):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
    dev = copy.deepcopy(model).to(TPU)
    opts = [torch.optim.AdamW(m.parameters(), lr=1e-2) for m in (model, dev)]
    before = donated()
    for _ in range(3):
        x = torch.randn(8, 16)
        for m, opt, xx in ((model, opts[0], x), (dev, opts[1], x.to(TPU))):
            m(xx).pow(2).mean().backward()
            opt.step()
            opt.zero_grad()
    torch.tpu.synchronize()
    assert donated() > before
    for a, b in zip(model.parameters(), dev.parameters()):
        assert_close(b, a, atol=1e-5, rtol=1e-5)
