"""The conformance run's worker side: which OpInfo cases there are (dtypes,
tolerances, the OpInfo's own skips, seeded samples, device placements), how
one case is run on the CPU and on the tpu and compared, and the worker loop
that reports each case as a JSON line. It runs in a subprocess of the driver
(conformance.py), so a crash or hang here is charged to one op.
"""
import json
import os
import time
import unittest
import zlib

from .. import _env

DTYPES = ["float32", "bfloat16", "float16", "int64", "int32", "bool"]
# (atol, rtol) used when the OpInfo states none: different summation orders
# and transcendental approximations than the CPU kernels.
DEFAULT_TOL = {"float32": (1e-5, 1e-5), "float64": (1e-7, 1e-7), "bfloat16": (1e-2, 1.6e-2),
               "float16": (1e-3, 1e-3), "complex64": (1e-5, 1e-5), "complex128": (1e-7, 1e-7)}
MAX_SAMPLES = 8
# The quick run keeps the ops whose id hashes to 0 modulo this: a spread-out
# subset that stays the same when PyTorch adds or reorders OpInfos.
QUICK_EVERY = 6
# Test hook: {op id: "hang" | "crash" | "die_before_start"} makes a worker
# misbehave at that op, to show the driver survives it.
FAULTS_ENV = "TORCH_PJRT_CONFORMANCE_FAULTS"


def _ops():
    from torch.testing._internal.common_methods_invocations import op_db
    return op_db


def _op_id(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def _skip_reason(op, dtype):
    """The OpInfo's own skip / expected failure for CPU-vs-device comparison."""
    for info in list(op.decorators or []) + list(op.skips or []):
        if not hasattr(info, "test_name"):  # a bare decorator applies to every test
            q = getattr(info, "__qualname__", "")
            if q == "onlyCUDA":
                return "OpInfo runs only on CUDA"
            if q == "onlyCPU":
                return "OpInfo runs only on the CPU"
            continue
        if info.test_name not in (None, "test_compare_cpu"):
            continue
        if info.cls_name not in (None, "TestCommon"):
            continue
        if info.dtypes is not None and dtype not in info.dtypes:
            continue
        if info.active_if is False:
            continue
        for d in info.decorators:
            q = getattr(d, "__qualname__", "")
            if d is unittest.expectedFailure:
                return "OpInfo marks test_compare_cpu as an expected failure"
            if q.startswith("skip"):
                return "OpInfo skips test_compare_cpu"
    return None


def _override(op, dtype):
    """(atol, rtol) the OpInfo's tolerance / precision overrides give dtype, (0, 0) if none."""
    from torch.testing._internal.common_device_type import precisionOverride, toleranceOverride
    atol = rtol = 0.0
    decorators = []
    for info in op.decorators or []:
        if not hasattr(info, "test_name"):
            decorators.append(info)
        elif info.test_name in (None, "test_compare_cpu") and info.cls_name in (None, "TestCommon"):
            decorators.extend(info.decorators)
    for d in decorators:
        if isinstance(d, toleranceOverride) and dtype in d.d:
            atol, rtol = max(atol, d.d[dtype].atol), max(rtol, d.d[dtype].rtol)
        elif isinstance(d, precisionOverride) and dtype in d.d:
            atol = max(atol, d.d[dtype])
    return atol, rtol


def _tolerance(override, out_dtype):
    """Tolerance for one output: the default for the OUTPUT's dtype (an int64
    sample of cos gives float32 results), loosened by the OpInfo's override
    for the sample dtype."""
    atol, rtol = DEFAULT_TOL.get(str(out_dtype).replace("torch.", ""), (0.0, 0.0))
    return max(atol, override[0]), max(rtol, override[1])


def _assert_close(actual, expected, override, min_tol=(0.0, 0.0)):
    import torch
    a_leaves, e_leaves = [], []
    _leaves(actual, a_leaves)
    _leaves(expected, e_leaves)
    if len(a_leaves) != len(e_leaves):
        raise AssertionError(f"output structure differs: {len(a_leaves)} vs {len(e_leaves)} leaves")
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        if isinstance(e, torch.Tensor):
            atol, rtol = _tolerance(override, e.dtype)
        elif isinstance(e, float):
            atol, rtol = _tolerance(override, torch.float32)
        elif isinstance(e, (bool, int, complex)) or e is None:
            atol, rtol = override
        else:  # strings, dtypes, other objects: equality
            if a != e:
                raise AssertionError(f"output {i}: {a!r} != {e!r}")
            continue
        atol, rtol = max(atol, min_tol[0]), max(rtol, min_tol[1])
        try:
            torch.testing.assert_close(a, e, atol=atol, rtol=rtol, equal_nan=True, check_device=False)
        except AssertionError as err:
            raise AssertionError(f"output {i}: {err}" if len(e_leaves) > 1 else str(err)) from None


def _leaves(x, out):
    import torch
    if isinstance(x, torch.Tensor) or x is None or isinstance(x, (bool, int, float, complex, str, torch.dtype)):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _leaves(v, out)
    elif isinstance(x, dict):
        for k in sorted(x, key=str):
            _leaves(x[k], out)
    else:
        out.append(x)


def _tree_map(fn, x):
    import torch
    if isinstance(x, torch.Tensor):
        return fn(x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_tree_map(fn, v) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_tree_map(fn, v) for v in x)
    if isinstance(x, dict):
        return {k: _tree_map(fn, v) for k, v in x.items()}
    return x


def _tensors(x):
    out = []
    _tree_map(lambda t: out.append(t), x)
    return out


def _samples(op, device, dtype, requires_grad, n, seed):
    """The first n samples of the OpInfo, generated from a fixed seed (the same
    inputs every run). Calls the sample function directly: op.sample_inputs()
    wraps it in a tracker that inspects the call stack and reseeds for every
    sample, which cost most of a run's time."""
    import itertools
    import torch
    torch.manual_seed(seed)
    return list(itertools.islice(op.sample_inputs_func(op, device, dtype, requires_grad), n))


def _placements(op, dtype, requires_grad, n, seed):
    """For each of the first n samples, the device kind of each tensor leaf
    when the OpInfo generates its samples for a device: "meta" for tensors
    made on the device, "cpu" for those the sample function pins to the CPU
    (tensor_split's index tensors). Samples are generated on the meta device,
    which holds no data; None where that fails or differs in structure."""
    import torch
    try:
        with torch.random.fork_rng():
            metas = _samples(op, "meta", dtype, requires_grad, n, seed)
    except Exception:  # noqa: BLE001
        return [None] * n
    out = []
    for m in metas:
        kinds = []
        m.transform(lambda t: kinds.append((t.device.type, tuple(t.shape))) if isinstance(t, torch.Tensor) else t)
        out.append(kinds)
    return out + [None] * (n - len(out))


def _run_case(op, sample, dtype, dtname, grad, placement=None):
    import torch
    import torch_pjrt
    override = _override(op, dtype)
    cpu_sample = sample.transform(
        lambda t: t.detach().clone().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t)
    shapes = []
    sample.transform(lambda t: shapes.append(tuple(t.shape)) if isinstance(t, torch.Tensor) else t)
    if placement is None or [s for _, s in placement] != shapes:
        placement = [("meta", s) for s in shapes]
    where = iter(placement)

    def to_device(t):
        if not isinstance(t, torch.Tensor):
            return t
        kind = next(where)[0]
        moved = t.detach().to("tpu") if kind != "cpu" else t.detach().clone()
        return moved.requires_grad_(t.requires_grad)

    tpu_sample = sample.transform(to_device)
    try:
        expected = op(cpu_sample.input, *cpu_sample.args, **cpu_sample.kwargs)
    except Exception as e:  # noqa: BLE001
        # No reference value to compare against; the tpu must refuse the sample alike.
        try:
            op(tpu_sample.input, *tpu_sample.args, **tpu_sample.kwargs)
        except Exception:  # noqa: BLE001
            raise _Skip(f"the CPU reference raises ({type(e).__name__}); the tpu raises too") from None
        raise AssertionError(f"the CPU reference raises {type(e).__name__}: {str(e)[:200]}; the tpu does not")
    torch_pjrt.reset_fallback_stats()
    actual = op(tpu_sample.input, *tpu_sample.args, **tpu_sample.kwargs)
    actual_cpu = _tree_map(lambda t: t.detach().cpu(), actual)
    fallback = sorted(torch_pjrt.fallback_stats())
    expected_d = _tree_map(lambda t: t.detach(), expected)
    try:
        _assert_close(actual_cpu, expected_d, override)
    except AssertionError:
        # Among equal keys PyTorch leaves the index order open (unstable
        # sort, topk, kthvalue): any index selecting the same values is
        # right, whichever one the CPU kernel happened to pick.
        try:
            explained = _ties_explain(op, cpu_sample, actual_cpu, expected_d, override)
        except Exception:  # noqa: BLE001 - the original mismatch is what to report
            explained = False
        if not explained:
            raise
    if not grad:
        return fallback
    outs_c = [t for t in _tensors(expected) if t.requires_grad and t.grad_fn is not None]
    outs_t = [t for t in _tensors(actual) if t.requires_grad and t.grad_fn is not None]
    ins_c = [t for t in _tensors([cpu_sample.input, cpu_sample.args, cpu_sample.kwargs]) if t.requires_grad]
    ins_t = [t for t in _tensors([tpu_sample.input, tpu_sample.args, tpu_sample.kwargs]) if t.requires_grad]
    if not outs_c or not ins_c:
        raise _Skip("no differentiable output")
    gos = [torch.randn_like(t) for t in outs_c]
    gc = torch.autograd.grad(outs_c, ins_c, gos, allow_unused=True)
    torch_pjrt.reset_fallback_stats()
    # Each grad_output on its output's device (an op like `to` may return a CPU tensor).
    gt = torch.autograd.grad(outs_t, ins_t, [g.to(t.device) for g, t in zip(gos, outs_t)], allow_unused=True)
    gt = [None if g is None else g.cpu() for g in gt]
    fb = sorted(torch_pjrt.fallback_stats())
    _assert_close(gt, list(gc), override, min_tol=(1e-4, 1e-4))
    return fb


class _Skip(Exception):
    pass


# op name -> (position of `dim` among the positional args after the input,
# its default); the output's index tensor picks from the input along dim.
_TIE_OPS = {"sort": (0, -1), "argsort": (0, -1), "topk": (1, -1), "kthvalue": (1, -1)}


def _ties_explain(op, sample, actual, expected, override):
    """True when actual differs from expected only in which of several equal
    input elements its indices pick, for ops that leave that open."""
    import torch
    name = op.name
    if name not in _TIE_OPS or not isinstance(sample.input, torch.Tensor):
        return False
    if name in ("sort", "argsort") and (sample.kwargs.get("stable") or
                                        (name == "sort" and len(sample.args) > 2 and sample.args[2])):
        return False  # a stable sort fixes the order
    pos, default = _TIE_OPS[name]
    dim = sample.args[pos] if len(sample.args) > pos else sample.kwargs.get("dim", default)
    x = sample.input.detach()
    if x.dim() == 0:
        return False
    a_leaves, e_leaves = [], []
    _leaves(actual, a_leaves)
    _leaves(expected, e_leaves)
    if len(a_leaves) != len(e_leaves):
        return False
    index_leaf = 0 if name == "argsort" else 1  # the others return (values, indices)
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        if not isinstance(e, torch.Tensor) or not isinstance(a, torch.Tensor) or a.shape != e.shape:
            return False
        if i != index_leaf:  # values: compared as usual
            _assert_close(a, e, override)
            continue
        keep = e.dim() == x.dim()
        ai, ei = (a, e) if keep else (a.unsqueeze(dim), e.unsqueeze(dim))
        if ai.numel() and (ai.min() < 0 or ai.max() >= x.size(dim)):
            return False
        if not torch.equal(x.gather(dim, ai), x.gather(dim, ei)):
            return False
    return True


def _worker(op_ids, quick, grads):
    """Runs op_ids in the given order, printing one JSON line per event:
    {"start": op} before an op, one record per case, {"end": op} after it,
    {"done": true} at the end. The driver relies on the order to know which
    op a worker that dies before printing anything was about to run."""
    faults = json.loads(_env.get(FAULTS_ENV) or "{}")
    if op_ids and faults.get(op_ids[0]) == "die_before_start":
        os._exit(3)  # as a worker whose startup fails would; checked before loading the OpInfos
    import torch
    import torch_pjrt  # noqa: F401
    by_id = {_op_id(op): op for op in _ops()}
    for oid in op_ids:
        op = by_id.get(oid)
        if op is None:
            continue
        fault = faults.get(oid)
        if fault == "die_before_start":
            os._exit(3)
        print(json.dumps({"start": oid}), flush=True)
        if fault == "hang":
            while True:
                time.sleep(3600)
        if fault == "crash":
            os._exit(5)
        _run_op(op, oid, quick, grads)
        print(json.dumps({"end": oid}), flush=True)
    # Each op's fallbacks are in its records; the process's own exit report
    # (TORCH_PJRT_EXIT_REPORT) has nothing more to say about them.
    torch_pjrt.reset_fallback_stats()
    print(json.dumps({"done": True}), flush=True)


def _run_op(op, oid, quick, grads):
    import torch
    import torch_pjrt
    supported = op.supported_dtypes("cpu")
    for dtname in DTYPES:
        dtype = getattr(torch, dtname)
        if dtype not in supported:
            continue
        kinds = ["forward"] + (["gradient"] if grads and dtname == "float32" and op.supports_autograd else [])
        for kind in kinds:
            reason = _skip_reason(op, dtype)
            n = 1 if quick else MAX_SAMPLES
            seed = _seed(oid, dtname, kind)
            try:
                samples = _samples(op, "cpu", dtype, kind == "gradient", n, seed)
            except Exception as e:  # noqa: BLE001
                samples, reason = [], f"sample generation failed on the CPU: {e}"
            placements = _placements(op, dtype, kind == "gradient", len(samples), seed) if samples else []
            for i, s in enumerate(samples):
                rec = {"op": oid, "dtype": dtname, "kind": kind, "sample": i, "seed": seed}
                if reason:
                    rec.update(status="skip", reason=reason)
                else:
                    t0 = time.perf_counter()
                    # What the case draws itself (grad_outputs, random ops)
                    # depends on its own seed only, not on the cases before it.
                    torch.manual_seed(seed + 1 + i)
                    try:
                        fb = _run_case(op, s, dtype, dtname, kind == "gradient", placements[i])
                        rec.update(status="pass", fallback=fb)
                    except _Skip as e:
                        rec.update(status="skip", reason=str(e))
                    except AssertionError as e:
                        rec.update(status="mismatch", message=str(e)[:400],
                                   fallback=sorted(torch_pjrt.fallback_stats()))
                    except Exception as e:  # noqa: BLE001
                        rec.update(status="error", message=f"{type(e).__name__}: {str(e)[:400]}",
                                   fallback=sorted(torch_pjrt.fallback_stats()))
                    rec["seconds"] = round(time.perf_counter() - t0, 3)
                print(json.dumps(rec), flush=True)


def _seed(oid, dtname, kind):
    """The seed a case's samples are generated from: fixed per (op, dtype,
    kind), so every run, quick or full, sees the same inputs."""
    return zlib.crc32(f"{oid} {dtname} {kind}".encode())


