"""pytest plugin for one device's run of a PyTorch test file (pytorch_tests.py).

Loaded as a top-level module (`-p _pytorch_tests_plugin`, its folder on
PYTHONPATH) so that the CPU run never imports torch_pjrt: the CPU baseline is
plain PyTorch. The driver passes a JSON control file (--pytorch-tests-control):
  device    "cpu" or "tpu"; for tpu, torch_pjrt is imported here, before any
            test module, because instantiate_device_type_tests only adds the
            PrivateUse1 variant if the device exists when
            common_device_type is first imported;
  progress  a file this plugin appends to: "selected\\tID" per test to run,
            "start\\tID", "reason\\tID\\tTEXT" (a failure's or a skip's),
            "end\\tID\\tSTATUS", "finished" (the driver reads it to find
            a crash's or a hang's test and to restart after it);
  skip      test ids already settled by an earlier process of this run;
  only      if not null, the ids to run (the tpu run: the CPU's passes);
  sample    if not null, keep this many tests chosen by a hash of their id.
  match     if not null, keep only the tests whose id this regex searches.
"""
import json
import os
import re
import zlib

_control = None
_progress = None
_status = {}


def _write(line):
    _progress.write(line + "\n")
    _progress.flush()
    os.fsync(_progress.fileno())


def _define_removed_names():
    # Names the 2023 test files import that later torch releases removed;
    # defined identically for both devices.
    import torch
    from torch.testing._internal import common_cuda, common_utils
    if not hasattr(common_utils, "skipIfMps"):
        common_utils.skipIfMps = lambda fn: fn
    if not hasattr(common_cuda, "tf32_is_not_fp32"):
        common_cuda.tf32_is_not_fp32 = lambda: False
    if not hasattr(torch._C, "has_mkldnn"):
        torch._C.has_mkldnn = torch.backends.mkldnn.is_available()
    from torch.testing._internal import common_nn
    if not hasattr(common_nn, "new_module_tests"):
        common_nn.new_module_tests = common_nn.get_new_module_tests()
    from torch.testing._internal import common_methods_invocations as cmi
    if not hasattr(cmi, "binary_ufuncs_and_refs"):
        from torch.testing._internal.opinfo.core import BinaryUfuncInfo
        cmi.binary_ufuncs_and_refs = tuple(op for op in cmi.op_db + cmi.python_ref_db
                                           if isinstance(op, BinaryUfuncInfo))


def pytest_addoption(parser):
    parser.addoption("--pytorch-tests-control", help="the driver's JSON control file")


def pytest_configure(config):
    global _control, _progress
    with open(config.getoption("pytorch_tests_control")) as f:
        _control = json.load(f)
    _progress = open(_control["progress"], "a")
    if _control["device"] == "tpu":
        import torch_pjrt  # noqa: F401
    _define_removed_names()


def pytest_collectreport(report):
    if report.failed:
        _write("collecterror\t" + report.nodeid)


def pytest_collection_modifyitems(session, config, items):
    skip = set(_control["skip"])
    only = set(_control["only"]) if _control["only"] is not None else None
    keep = [it for it in items if it.nodeid not in skip and (only is None or it.nodeid in only)]
    if _control.get("match"):
        pattern = re.compile(_control["match"])
        keep = [it for it in keep if pattern.search(it.nodeid)]
    n = _control["sample"]
    if n is not None and only is None:
        # The whole file's ids are hashed (not just those left) so that a
        # restarted process keeps the same sample.
        chosen = set(sorted((it.nodeid for it in items), key=lambda s: zlib.crc32(s.encode()))[:n])
        keep = [it for it in keep if it.nodeid in chosen]
    kept = set(keep)
    dropped = [it for it in items if it not in kept]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep
    for it in keep:
        _write("selected\t" + it.nodeid)


def pytest_runtest_logstart(nodeid, location):
    _status[nodeid] = None
    _write("start\t" + nodeid)


def pytest_runtest_logreport(report):
    xfail = hasattr(report, "wasxfail")
    if report.failed:
        status = "failed" if report.when == "call" else "error"
    elif report.skipped:
        status = "xfailed" if xfail else "skipped"
    elif report.when == "call":
        status = "xpassed" if xfail else "passed"
    else:
        return
    # The first failure, skip or pass decides; a teardown error after a pass
    # still fails it.
    if _status.get(report.nodeid) in (None, "passed"):
        _status[report.nodeid] = status
        if status in ("failed", "error", "skipped"):
            _write("reason\t" + report.nodeid + "\t" + _reason(report))


def _reason(report):
    # One line: a skip's reason, or a failure's first `E` line (the exception).
    if report.skipped and isinstance(report.longrepr, tuple):
        text = str(report.longrepr[2])
    else:
        lines = [ln[1:].strip() for ln in report.longreprtext.splitlines() if ln.startswith("E ")]
        lines = [ln for ln in lines if ln] or report.longreprtext.strip().splitlines()[-1:] or [""]
        text = lines[0]
    return " ".join(text.split())[:300]


def pytest_runtest_logfinish(nodeid, location):
    _write("end\t" + nodeid + "\t" + (_status.get(nodeid) or "error"))


def pytest_sessionfinish(session, exitstatus):
    _write("finished")
