"""What the README promises about the environment variables and the command
line, each checked in a fresh process as a user would set it: results still
agree with the CPU, and the setting has the effect it claims."""
import json
import os
import subprocess
import sys

import pytest
import torch

import torch_pjrt
from conftest import PASS_MODE, TPU

pytestmark = pytest.mark.once("each test sets the variable it checks in a fresh process, modes included")



def run_py(code, timeout=300, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_PJRT_")}
    e.update(TORCH_PJRT_EAGER_MODE=PASS_MODE)
    e.update(env)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return r


def result(r):
    """The JSON object the child printed on its last line."""
    return json.loads(r.stdout.strip().splitlines()[-1])


IN_PLACE_LOOP = r"""
import json, torch, torch_pjrt
torch.manual_seed(0)
x = torch.randn(256)
t = x.to("tpu")
for i in range(20):
    t.mul_(0.5).add_(i)
    x.mul_(0.5).add_(i)
torch.tpu.synchronize()
print(json.dumps({"donated": torch.tpu.memory_stats()["num_donated_buffers"],
                  "equal": torch.allclose(t.cpu(), x, atol=1e-5, rtol=1e-5)}))
"""


def test_donate_off_keeps_every_buffer():
    on = result(run_py(IN_PLACE_LOOP))
    off = result(run_py(IN_PLACE_LOOP, TORCH_PJRT_DONATE="0"))
    assert on["equal"] and off["equal"]
    if PASS_MODE != "debug":  # debug mode never donates
        assert on["donated"] > 0
    assert off["donated"] == 0


COMPILE_TWICE = r"""
import json, os, torch, torch_pjrt
x = torch.arange(6.0).to("tpu")
y = (x * 3 + 1).cpu()
print(json.dumps({**torch_pjrt.cache_stats(), "ok": y.tolist() == [1.0, 4.0, 7.0, 10.0, 13.0, 16.0]}))
"""


MANY_PROGRAMS = r"""
import json, torch, torch_pjrt
def maps():
    return sum(1 for _ in open("/proc/self/maps"))
torch.tpu.synchronize()
ok, m0 = True, None
for n in range(1, 161):  # 160 shapes: each a new program
    x = torch.arange(float(n))
    ok &= torch.equal((x.to("tpu") * 2 + 1).cpu(), x * 2 + 1)
    if n == 40:
        m0 = maps()
grown = maps() - m0
x = torch.arange(1.0)  # the first shape again: evicted from memory, loaded from disk
ok &= torch.equal((x.to("tpu") * 2 + 1).cpu(), x * 2 + 1)
print(json.dumps({**torch_pjrt.cache_stats(), "ok": bool(ok), "maps_grown": grown}))
"""


def test_cache_entries_bound_the_programs_held_in_memory(tmp_path):
    # Every loaded XLA:CPU program holds memory mappings: an unbounded cache
    # runs a long process into the kernel's mapping limit.
    r = result(run_py(MANY_PROGRAMS, TORCH_PJRT_CACHE_ENTRIES="16", TORCH_PJRT_CACHE_DIR=str(tmp_path)))
    assert r["ok"]
    assert r["entries"] <= 16 and r["evictions"] > 100
    assert r["disk_hits"] >= 1
    assert r["maps_grown"] < 200, r  # 120 more programs compiled, mappings flat


def test_the_process_mappings_bound_the_programs_held_in_memory(tmp_path):
    # Large programs map more code each, so the entry count alone does not
    # keep a process under the kernel's cap: past a mapping budget the
    # older programs go too (a budget of 1 mapping: at every check).
    r = result(run_py(MANY_PROGRAMS, TORCH_PJRT_CACHE_MAPPINGS="1", TORCH_PJRT_CACHE_DIR=str(tmp_path)))
    assert r["ok"]
    assert r["entries"] <= 16 and r["evictions"] > 100  # the entry bound (1024) never came near
    assert r["disk_hits"] >= 1
    assert r["maps_grown"] < 200, r


def test_cache_dir_off_writes_nothing_and_reuses_nothing(tmp_path):
    home = tmp_path / "home"
    env = dict(TORCH_PJRT_CACHE_DIR="off", HOME=str(home), XDG_CACHE_HOME=str(home / "xdg"))
    first, second = result(run_py(COMPILE_TWICE, **env)), result(run_py(COMPILE_TWICE, **env))
    assert first["ok"] and second["ok"]
    assert second["misses"] > 0 and second["disk_hits"] == 0  # nothing came from disk
    written = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path) for f in fs]
    assert written == []
    # and the default location (XDG_CACHE_HOME) is used when it is on
    run_py(COMPILE_TWICE, HOME=str(home), XDG_CACHE_HOME=str(home / "xdg"))
    again = result(run_py(COMPILE_TWICE, HOME=str(home), XDG_CACHE_HOME=str(home / "xdg")))
    assert again["misses"] == 0 and again["disk_hits"] > 0
    assert os.listdir(home / "xdg" / "torch_pjrt")


TWO_DEVICES = r"""
import json, torch, torch_pjrt
torch.manual_seed(0)
a, b = torch.randn(4, 5), torch.randn(5, 3)
out = {"count": torch.tpu.device_count(), "accel": torch.accelerator.device_count()}
ta, tb = a.to("tpu:1"), b.to("tpu:1")
r = ta @ tb + 1
out["device"] = str(r.device)
out["equal"] = torch.allclose(r.cpu(), a @ b + 1, atol=1e-5, rtol=1e-5)
with torch.tpu.device(1):
    out["default_in_block"] = str(torch.ones(1, device="tpu").device)
out["moved"] = torch.equal(ta.to("tpu:0").cpu(), a)
try:
    ta + a.to("tpu:0")
    out["mixed"] = "no error"
except RuntimeError as e:
    out["mixed"] = str(e)
print(json.dumps(out))
"""


def test_two_cpu_devices():
    r = result(run_py(TWO_DEVICES, TORCH_PJRT_CPU_DEVICES="2"))
    assert r["count"] == 2 and r["accel"] == 2
    assert r["device"] == "tpu:1" and r["equal"] and r["moved"]
    assert r["default_in_block"] == "tpu:1"
    assert "same device" in r["mixed"] or "different devices" in r["mixed"], r["mixed"]


FUSED_BOUND = r"""
import json, torch, torch_pjrt
torch_pjrt.set_eager_mode("fused")
x = torch.zeros(8, device="tpu")
for _ in range(60):
    x += 1
value = x.cpu().tolist()
s = torch_pjrt.fused_stats()
print(json.dumps({"max": s["max_nodes"], "flushes": s["flushes"], "value": value}))
"""


def test_fused_max_nodes_bounds_the_pending_graph():
    r = result(run_py(FUSED_BOUND, TORCH_PJRT_FUSED_MAX_NODES="10"))
    assert r["max"] == 10
    assert r["flushes"] >= 5  # 60 updates cut about every 10 pending nodes (plus the read)
    assert r["value"] == [60.0] * 8
    default = result(run_py(FUSED_BOUND))
    assert default["max"] == 4000 and default["flushes"] == 1  # one program at the read
    assert default["value"] == [60.0] * 8


def test_eager_mode_variable_sets_the_initial_mode():
    for mode in ("debug", "strict", "fused"):
        r = run_py("import torch_pjrt; print(torch_pjrt.get_eager_mode())", TORCH_PJRT_EAGER_MODE=mode)
        assert r.stdout.split() == [mode]


def test_log_recompiles_names_what_changed():
    code = ("import torch, torch_pjrt\n"
            "for n in (5, 5, 7):\n"
            "    (torch.ones(n, device='tpu') * 2).cpu()\n")
    quiet = run_py(code, TORCH_PJRT_CACHE_DIR="off")
    assert "recompil" not in quiet.stderr.lower()
    r = run_py(code, TORCH_PJRT_CACHE_DIR="off", TORCH_PJRT_LOG_RECOMPILES="1")
    lines = [ln for ln in r.stderr.splitlines() if "torch_pjrt" in ln and "compil" in ln.lower()]
    assert lines, r.stderr
    # the n=7 program is new because of its shape: the log says where it differs
    assert any("7" in ln for ln in lines), lines


def test_dump_failed_prints_the_program():
    code = ("import torch, torch_pjrt\n"
            "x = torch.ones(4, device='tpu')\n"
            "try:\n    torch.ops.torch_pjrt._failing_op(x).cpu()\nexcept RuntimeError as e:\n    print('ERR', e)\n")
    plain = run_py(code)
    assert "ERR" in plain.stdout and "func.func" not in plain.stdout
    dumped = run_py(code, TORCH_PJRT_DUMP_FAILED="1")
    assert "ERR" in dumped.stdout and "func.func" in dumped.stdout


# ---- the autograd thread and the modes


def test_backward_follows_the_process_wide_mode():
    prev = torch_pjrt.get_eager_mode()
    w = torch.randn(8, 4, requires_grad=True)
    x = torch.randn(3, 8)
    (x @ w).tanh().sum().backward()
    for mode in ("fused", "debug"):
        tw = w.detach().to(TPU).requires_grad_()
        torch_pjrt.set_eager_mode(mode)
        try:
            loss = (x.to(TPU) @ tw).tanh().sum()
            before = torch_pjrt._C._mode_counts()
            loss.backward()  # runs on PyTorch's autograd thread for the device
            after = torch_pjrt._C._mode_counts()
        finally:
            torch_pjrt.set_eager_mode(prev)
        ran = {m: after[m] - before[m] for m in after}
        assert ran[mode] > 0 and sum(ran.values()) == ran[mode], ran
        torch.testing.assert_close(tw.grad.cpu(), w.grad, atol=1e-5, rtol=1e-5)


def test_thread_local_mode_does_not_reach_the_autograd_thread():
    # As documented: eager_mode() is per-thread; backward follows the
    # process-wide mode.
    process_mode = torch_pjrt.get_eager_mode()
    other = "fused" if process_mode != "fused" else "debug"
    tw = torch.randn(8, 4, device=TPU, requires_grad=True)
    with torch_pjrt.eager_mode(other):
        loss = (torch.randn(3, 8, device=TPU) @ tw).sum()
        seed = torch.ones_like(loss)  # made here, or backward() makes it on this thread
        before = torch_pjrt._C._mode_counts()
        loss.backward(seed)
        after = torch_pjrt._C._mode_counts()
    assert after[process_mode] > before[process_mode]
    assert after[other] == before[other]


# ---- device-side errors in debug mode


def test_debug_mode_raises_device_index_errors_at_the_call():
    x = torch.randn(4, 5, device=TPU)
    bad = torch.tensor([1, 9], device=TPU)
    with torch_pjrt.eager_mode("debug"):
        with pytest.raises(IndexError, match="index 9 is out of bounds for dimension 0 with size 4"):
            x[bad]  # no host read: debug mode checks at the call
        with pytest.raises(IndexError, match="index out of range in self"):
            torch.nn.functional.embedding(torch.tensor([10], device=TPU), x)
    torch.testing.assert_close(x[torch.tensor([3], device=TPU)].cpu(), x.cpu()[[3]])


def test_strict_sticky_error_names_the_op_and_input_types():
    with torch_pjrt.eager_mode("strict"):
        x = torch.randn(4, 3, device=TPU)
        torch.ops.torch_pjrt._failing_op(x)
        with pytest.raises(RuntimeError, match=r"compiling 'failing_op.*' on inputs \(tensor<12xf32>\)"):
            torch.tpu.synchronize()
        torch.testing.assert_close((x * 2).cpu(), x.cpu() * 2)


COMPILE_TIERS = r"""
import json, torch, torch_pjrt
from torch_pjrt import _platform
out = {"cpu": _platform.policy().platform is _platform.Platform.CPU}
for n in (1000, 10000, 60000):
    x = torch.randn(n)
    before = torch_pjrt.cache_stats()
    y = (x.to("tpu") * 3 - 1).exp().cpu()
    torch.testing.assert_close(y, (x * 3 - 1).exp())
    after = torch_pjrt.cache_stats()
    out[n] = [after[k] - before[k] for k in ("misses", "light_compiles", "quick_compiles")]
    assert after["compile_seconds"] >= after["light_compile_seconds"] + after["quick_compile_seconds"] - 1e-9
print(json.dumps(out))
"""


def test_small_programs_compile_in_lighter_tiers(tmp_path):
    # [misses, light, quick] per size. Default: light up to 16384 elements,
    # quick off; each bound is set apart, and 0 turns a tier off.
    got = result(run_py(COMPILE_TIERS, TORCH_PJRT_CACHE_DIR=str(tmp_path / "a")))
    if not got["cpu"]:
        pytest.skip("compile tiers are XLA:CPU's")
    assert got["1000"][0] > 0 and got["1000"][1:] == [got["1000"][0], 0], got
    assert got["10000"][0] > 0 and got["10000"][1:] == [got["10000"][0], 0], got
    assert got["60000"][0] > 0 and got["60000"][1:] == [0, 0], got
    both = result(run_py(COMPILE_TIERS, TORCH_PJRT_CACHE_DIR=str(tmp_path / "b"), TORCH_PJRT_QUICK_COMPILE_ELEMENTS="4096",
                         TORCH_PJRT_LIGHT_COMPILE_ELEMENTS="65536"))
    assert both["1000"][1:] == [0, both["1000"][0]], both
    assert both["10000"][1:] == [both["10000"][0], 0], both
    assert both["60000"][1:] == [both["60000"][0], 0], both
    off = result(run_py(COMPILE_TIERS, TORCH_PJRT_CACHE_DIR=str(tmp_path / "c"), TORCH_PJRT_LIGHT_COMPILE_ELEMENTS="0"))
    assert off["1000"][0] > 0 and off["1000"][1:] == [0, 0], off
    e = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_PJRT_")}
    r = subprocess.run([sys.executable, "-c", "import torch, torch_pjrt; torch.ones(2, device='tpu').cpu()"], env=dict(
        e, TORCH_PJRT_CACHE_DIR=str(tmp_path / "d"), TORCH_PJRT_QUICK_COMPILE_ELEMENTS="4k"), capture_output=True,
        text=True, timeout=300)
    assert r.returncode == 1 and "TORCH_PJRT_QUICK_COMPILE_ELEMENTS=4k: expected a count" in r.stderr, r.stderr[-2000:]


# ---- the command-line tools end to end


def test_bench_command_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "torch_pjrt", "bench", "--out", str(tmp_path), "--repeats", "1",
                        "--modes", "strict,fused", "--decode-tokens", "2", "--model", "tiny"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(tmp_path / "bench.json") as f:
        b = json.load(f)
    for key in ("fused_over_strict_train_step", "fused_decode_b64_over_torch_cpu", "warm_start_compiles",
                "strict_small_op_over_torch_cpu"):
        assert key in b["ratios"], sorted(b["ratios"])
    assert b["ratios"]["warm_start_compiles"] == 0
    assert all(v > 0 for k, v in b["ratios"].items() if k != "warm_start_compiles")
    assert os.path.getsize(tmp_path / "bench.png") > 0


def test_bench_only_decode_beside_a_chosen_baseline(tmp_path):
    # What scripts/device-check.sh runs: decoding alone, beside torch's
    # eager on the baseline device (cuda on a GPU machine; cpu here).
    baseline = "cuda" if torch.cuda.is_available() else "cpu"
    r = subprocess.run([sys.executable, "-m", "torch_pjrt", "bench", "--out", str(tmp_path), "--repeats", "1",
                        "--modes", "fused", "--decode-tokens", "2", "--model", "tiny", "--only-decode",
                        "--baseline", baseline], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(tmp_path / "bench.json") as f:
        b = json.load(f)
    assert b["baseline"] == baseline and set(b["decode"]) == {"b1", "b64"} and "train" not in b
    assert sorted(b["ratios"]) == [f"fused_decode_b1_over_torch_{baseline}", f"fused_decode_b64_over_torch_{baseline}"]
    assert all(v > 0 for v in b["ratios"].values())
    if not torch.cuda.is_available():
        r = subprocess.run([sys.executable, "-m", "torch_pjrt", "bench", "--only-decode", "--baseline", "cuda"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 2 and "--baseline cuda: this torch sees no CUDA device" in r.stderr


def test_bench_cold_command_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "torch_pjrt", "bench", "--cold", "--out", str(tmp_path), "--modes",
                        "strict", "--cold-tokens", "2,3", "--first-model", "tiny", "--first-tokens", "2", "--varied-requests", "2",
                        "--varied-tokens", "2"], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(tmp_path / "cold.json") as f:
        b = json.load(f)
    assert sorted(b["ratios"]) == ["cold_over_warm_generate", "cold_programs_3_over_2", "strict_cold_programs_3_over_2",
                                   "varied_prompt_over_repeated"]
    assert all(v > 0 for v in b["ratios"].values())
    # The second process of the first-call pair finds every program on disk.
    warm = b["first_call"]["warm"]
    assert warm["compiles"] == 0 and warm["disk_hits"] > 0, warm
    assert len(set(b["varied_prompts"]["lengths"])) == 2


def test_conformance_command_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "torch_pjrt", "conformance", "--ops", "add,softmax,sort",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(tmp_path / "conformance.json") as f:
        c = json.load(f)
    assert set(c["ops"]) >= {"add", "softmax", "sort"}
    assert c["forward_pass_rate"] == 1.0 and c["native_rate"] == 1.0, {k: v["status"] for k, v in c["ops"].items()}
    assert os.path.getsize(tmp_path / "conformance.html") > 0


def test_every_variable_is_declared_once_and_the_readme_table_is_generated_from_it():
    from pathlib import Path
    import re

    from torch_pjrt import _env
    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text()
    assert _env.markdown_table() in readme, "README's table differs from `python -m torch_pjrt env`"
    declared = set(_env._DECLARED)
    # Every variable any file names is declared...
    named = set()
    for d in ("csrc", "python", "scripts", "tests", "bench", ".ci"):
        for f in (root / d).rglob("*"):
            if f.is_file() and f.suffix in (".cc", ".h", ".py", ".sh", "") and "__pycache__" not in f.parts:
                named |= set(re.findall(r"TORCH_PJRT_[A-Z0-9_]*[A-Z0-9]", f.read_text(errors="ignore")))
    not_variables = {"TORCH_PJRT_EXE1", "TORCH_PJRT_NO_SUCH_THING"}  # the disk cache's magic; this test's probe
    assert not named - declared - not_variables, sorted(named - declared - not_variables)
    # ...and the package reads them only through the table.
    direct = re.compile(r'(getenv|environ\.get|environ\[)\(?\s*"TORCH_PJRT_')
    for f in list((root / "csrc").rglob("*.cc")) + list((root / "python").rglob("*.py")):
        if f.name not in ("env.cc", "_env.py"):
            assert not direct.search(f.read_text()), f"{f} reads a TORCH_PJRT_ variable directly"
    with pytest.raises(KeyError, match="not declared"):
        _env.get("TORCH_PJRT_NO_SUCH_THING")


def test_every_variable_the_sources_read_is_in_the_table():
    # Foreign ones too (XLA's, the system's, the build's): whatever the
    # package, its C++ core, setup.py or the scripts read from the
    # environment has its row in the one table.
    from pathlib import Path
    import re

    from torch_pjrt import _env
    root = Path(__file__).resolve().parents[2]
    name = r"([A-Z_][A-Z0-9_]*)"
    read = {}
    for f in list((root / "csrc").rglob("*.cc")) + list((root / "csrc").rglob("*.h")):
        text = f.read_text()
        found = set(re.findall(r'getenv\("' + name + '"', text))
        for names in re.findall(r"for \(const char\* \w+ : \{([^}]*)\}\)", text):  # getenv(var) in a loop
            found |= set(re.findall(r'"' + name + '"', names))
        read.update((n, f) for n in found)
    for f in list((root / "python").rglob("*.py")) + [root / "setup.py"]:
        text = f.read_text()
        found = set(re.findall(r'environ(?:\.get|\.setdefault|\.pop)?[\(\[]\s*"' + name + '"', text))
        found |= set(re.findall(r'_env\.(?:get|value|flag)\(\s*"' + name + '"', text))
        read.update((n, f) for n in found)
    for f in (root / "scripts").glob("*.sh"):
        # ${NAME:-default}: a variable the caller may set (the rest are the script's own)
        read.update((n, f) for n in re.findall(r"\$\{" + name + ":?-", f.read_text()))
    assert {"XLA_FLAGS", "NPROC", "HOME", "XDG_CACHE_HOME", "TORCH_PJRT_BUILD_DIR", "JOBS"} <= set(read), sorted(read)
    missing = {n: str(f.relative_to(root)) for n, f in read.items() if n not in _env._DECLARED}
    assert not missing, f"read but not in the environment table (_env.FOREIGN, csrc/engine/env.cc): {missing}"
