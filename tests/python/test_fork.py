"""A process forked after its parent started the device cannot use it (the
plugin's threads stay in the parent): touching the device there raises
CUDA's kind of error at once, and torch.tpu._is_in_bad_fork() says so.
Forked children that leave the device alone, such as DataLoader workers,
work as before."""
import os
import subprocess
import sys
import time

import torch

import torch_pjrt  # noqa: F401
from conftest import TPU, assert_close

MESSAGE = "Cannot re-initialize tpu in forked subprocess"


def _in_child(fn, timeout=60):
    """Runs fn() in a forked child; returns what it returned (a str), or
    fails if the child hangs."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave without running the parent's cleanup
        os.close(r)
        try:
            out = fn()
        except BaseException as e:  # noqa: BLE001
            out = f"child failed: {type(e).__name__}: {e}"
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    deadline = time.monotonic() + timeout
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            raise AssertionError("the forked child hung")
        time.sleep(0.01)
    with os.fdopen(r) as f:
        return f.read()


def test_forked_child_raises_at_once():
    x = torch.randn(4, 3)
    xt = x.to(TPU)
    assert_close(xt * 2, x * 2)  # the parent started the device
    assert not torch.tpu._is_in_bad_fork()
    compiled = torch.compile(lambda a: a.sin() + 1, backend="tpu")
    assert_close(compiled(xt), x.sin() + 1)

    def child():
        report = [f"bad_fork={torch.tpu._is_in_bad_fork()}", f"initialized={torch.tpu.is_initialized()}",
                  f"device_count={torch.tpu.device_count()}"]
        torch.manual_seed(0)  # asks _is_in_bad_fork first, as DataLoader workers do
        uses = {
            "new tensor": lambda: torch.ones(2, device=TPU),
            "op on the parent's tensor": lambda: xt + 1,
            "read of the parent's tensor": lambda: xt.cpu(),
            "compiled call": lambda: compiled(xt),
            "synchronize": torch.tpu.synchronize,
        }
        for name, use in uses.items():
            start = time.monotonic()
            try:
                use()
                report.append(f"{name}: no error")
            except RuntimeError as e:
                took = time.monotonic() - start
                report.append(f"{name}: " + ("raised" if MESSAGE in str(e) and took < 1 else f"{took:.2f}s {e}"))
        return "\n".join(report)

    lines = _in_child(child).splitlines()
    assert lines[:3] == ["bad_fork=True", "initialized=False", f"device_count={torch.tpu.device_count()}"], lines
    assert lines[3:] == [f"{name}: raised" for name in ("new tensor", "op on the parent's tensor",
                                                        "read of the parent's tensor", "compiled call",
                                                        "synchronize")], lines
    # The parent goes on using the device.
    assert_close(xt + 1, x + 1)


def test_forked_child_exits_cleanly_after_the_error():
    # A plain script: the parent starts the device and forks; the child
    # touches it, gets the error and ends as a normal process does (exit
    # handlers, interpreter teardown) without waiting for the parent's
    # threads; the parent is unaffected.
    code = f"""
import os, sys, torch, torch_pjrt
x = torch.arange(6.0, device="tpu")
assert float(x.sum()) == 15
pid = os.fork()
if pid == 0:
    try:
        (x * 2).cpu()
        print("child: no error")
    except RuntimeError as e:
        print("child: raised" if {MESSAGE!r} in str(e) else f"child: {{e}}")
    sys.exit(0)
_, status = os.waitpid(pid, 0)
print("child status", os.waitstatus_to_exitcode(status))
print("parent", float((x * 3).sum().cpu()))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=os.environ.copy())
    assert out.stdout.split("\n")[:3] == ["child: raised", "child status 0", "parent 45.0"], \
        out.stdout + out.stderr[-3000:]


def test_a_child_of_a_parent_that_never_started_the_device_uses_it():
    # Importing loads the plugin but starts no client: as with CUDA, a child
    # forked before the parent's first device use makes its own and works.
    code = """
import os, sys, torch
pid = os.fork()
if pid == 0:
    x = torch.arange(6.0, device="tpu")
    print("child", float((x * 2).sum().cpu()), torch.tpu._is_in_bad_fork())
    sys.stdout.flush()
    os._exit(0)
os.waitpid(pid, 0)
print("parent", float(torch.arange(3.0, device="tpu").sum().cpu()))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=os.environ.copy())
    assert out.stdout.split("\n")[:2] == ["child 30.0 False", "parent 3.0"], out.stdout + out.stderr[-3000:]


class _Rows(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.full((8,), float(i)), torch.tensor(i)


def test_dataloader_fork_workers_that_leave_the_device_alone():
    model = torch.nn.Linear(8, 3)
    dev = torch.nn.Linear(8, 3).to(TPU)
    dev.load_state_dict(model.state_dict())
    assert_close(dev(torch.ones(2, 8, device=TPU)), model(torch.ones(2, 8)))  # the parent started the device
    loader = torch.utils.data.DataLoader(_Rows(), batch_size=16, num_workers=2,
                                         multiprocessing_context="fork", timeout=60)
    seen = []
    with torch.no_grad():
        for epoch in range(2):  # workers are started again for each epoch
            for xb, ib in loader:
                assert_close(dev(xb.to(TPU)), model(xb))
                seen += ib.tolist()
    assert sorted(seen) == sorted(list(range(64)) * 2)
