#!/usr/bin/env bash
# The check on a machine with an accelerator (an NVIDIA GPU with the XLA:GPU
# plugin, jax-cuda13-pjrt or xla-cuda13-pjrt; XLA:CPU anywhere else), in one
# go and without network: builds torch_pjrt against the machine's own torch,
# then runs the C++ core tests, the torch-facing part of the Python suite
# (device, eager modes, torch.compile, kernels, distributed on one device),
# the demo, and `python -m torch_pjrt bench --only-decode` beside torch's CUDA
# eager where CUDA exists (else beside its CPU eager). Each step runs under a
# timeout of its own and the next runs whatever it left; OUTDIR/report.json
# records the device, torch, the plugin the normal lookup chose (path and
# version), each step's seconds and pass/fail, the demo's tokens and the
# bench's ratios, beside each step's log. Exits non-zero if any step failed.
#   bash scripts/device-check.sh OUTDIR
# Knobs: PYTHON (default python3), JOBS (build jobs, default every core),
# DEVICE_CHECK_BUILD_DIR (default build/torch-MAJOR.MINOR),
# DEVICE_CHECK_BENCH="MODEL TOKENS REPEATS MODES" (default "bench-llama 16 3
# fused"; a small machine takes e.g. "tiny 4 3"), DEVICE_CHECK_TESTS (test
# files, default below), DEVICE_CHECK_TIMEOUT_<STEP> (seconds; the defaults
# keep the whole under 8 minutes on a 16-core machine), PJRT_INCLUDE_DIR
# (pjrt_c_api.h's folder, when no installed package ships it).
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/device-check.sh OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
PY=$(command -v "${PYTHON:-python3}")
root=$PWD
release=$("$PY" -c "import importlib.metadata as m; print('.'.join(m.version('torch').split('+')[0].split('.')[:2]))")
build=${DEVICE_CHECK_BUILD_DIR:-build/torch-$release}
case $build in /*) ;; *) build=$root/$build ;; esac
# The package as the build leaves it (python/ plus the extension), outside
# the tree's own python/ so a tree built for another torch is left alone.
stage=$build/python
read -r bench_model bench_tokens bench_repeats bench_modes <<<"${DEVICE_CHECK_BENCH:-bench-llama 16 3 fused}"
bench_modes=${bench_modes:-fused}
tests=${DEVICE_CHECK_TESTS:-test_device test_modes test_compile test_kernels_hub test_distributed}
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
# Nothing may reach for the network: Hugging Face and pip stay offline.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PIP_NO_INDEX=1
: >"$out/steps.tsv"
failed=0

# step NAME DEFAULT_TIMEOUT CMD...: runs CMD under its timeout, its output in
# OUTDIR/NAME.log; records NAME, exit status and seconds in steps.tsv.
step() {
  local name=$1 limit=$2
  shift 2
  local var=DEVICE_CHECK_TIMEOUT_${name^^}
  limit=${!var:-$limit}
  echo "== $name (timeout ${limit}s)"
  local t0=$SECONDS rc=0
  # timeout signals the step's whole process group (pytest's workers too).
  timeout -k 10 "$limit" bash -c '"$@"' step "$@" >"$out/$name.log" 2>&1 || rc=$?
  local secs=$((SECONDS - t0))
  printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$secs" "$limit" >>"$out/steps.tsv"
  if [ "$rc" = 0 ]; then
    echo "   ok, ${secs}s"
  else
    failed=1
    echo "   FAILED (exit status $rc$([ "$rc" = 124 ] && echo ", timed out")), ${secs}s; last lines of $name.log:"
    tail -n 15 "$out/$name.log" | sed 's/^/   | /'
  fi
  return 0
}

do_build() {
  local inc=${PJRT_INCLUDE_DIR:-}
  # pjrt_c_api.h ships in the xla-cpu-pjrt wheel (CMakeLists.txt finds it
  # there); without that wheel, any installed copy serves.
  if [ -z "$inc" ] && ! "$PY" -c "import xla_plugins.xla_cpu_pjrt" 2>/dev/null; then
    inc=$("$PY" - <<'EOF'
import glob, os, site, sys
for d in [*site.getsitepackages(), site.getusersitepackages(), *sys.path]:
    hits = glob.glob(os.path.join(d, "**", "pjrt_c_api.h"), recursive=True) if os.path.isdir(d) else []
    if hits:
        print(os.path.dirname(sorted(hits, key=len)[0]))
        break
EOF
)
    [ -n "$inc" ] || { echo "pjrt_c_api.h not found: install xla-cpu-pjrt or set PJRT_INCLUDE_DIR"; return 1; }
  fi
  case $inc in /* | "") ;; *) inc=$root/$inc ;; esac
  local gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  export CCACHE_BASEDIR=$root
  cmake -S . -B "$build" "${gen[@]}" -DPython3_EXECUTABLE="$PY" -DCMAKE_BUILD_TYPE=Release \
    ${inc:+-DPJRT_INCLUDE_DIR="$inc"} || return
  cmake --build "$build" -j "${JOBS:-$(nproc)}" || return
  rm -rf "$stage" && mkdir -p "$stage" && cp -r python/. "$stage/" || return
  find "$stage" -name __pycache__ -prune -exec rm -rf {} +
  cp "$build"/_C*.so "$build/_build_info.py" "$stage/torch_pjrt/" || return
  # Its metadata too, entry points included, as an install has them: torch's
  # autoload (`import torch` alone) and Dynamo's backend list find the
  # package through them.
  "$PY" - "$stage" <<'PYEOF' || return
import os, sys, tomllib
ns = {}
exec(open("python/torch_pjrt/_version.py").read(), ns)
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
info = os.path.join(sys.argv[1], f"torch_pjrt-{ns['__version__']}.dist-info")
os.makedirs(info)
with open(os.path.join(info, "METADATA"), "w") as f:
    f.write(f"Metadata-Version: 2.1\nName: torch_pjrt\nVersion: {ns['__version__']}\n")
with open(os.path.join(info, "entry_points.txt"), "w") as f:
    for group, points in project.get("entry-points", {}).items():
        f.write(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()) + "\n")
PYEOF
  PYTHONPATH=$stage "$PY" -c "import torch, torch_pjrt; print('built', torch_pjrt.__version__, 'against torch', torch.__version__)"
}

do_env() {
  PYTHONPATH=$stage "$PY" - "$out/env.json" <<'EOF'
import importlib.metadata as md, json, platform, subprocess, sys
import torch
import torch_pjrt
from torch_pjrt import _plugins
env = {"python": platform.python_version(), "torch": torch.__version__, "torch_pjrt": torch_pjrt.__version__,
       "cuda_available": torch.cuda.is_available(), "torch_cuda": torch.version.cuda}
if torch.cuda.is_available():
    env["cuda_device"] = torch.cuda.get_device_name(0)
try:
    env["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                                        "--format=csv,noheader"], capture_output=True, text=True,
                                       timeout=30).stdout.strip()
except (OSError, subprocess.SubprocessError):
    pass
choice = _plugins.resolve()
env["plugin"] = {"name": choice.name, "path": choice.path, "reason": choice.reason}
# The plugin packages installed, with their versions (the one in use is
# the one whose folder holds the path above).
env["plugin_packages"] = {}
for dist in ("jax-cuda13-pjrt", "xla-cuda13-pjrt", "jax-cuda12-pjrt", "xla-cpu-pjrt", "libtpu", "jax", "jaxlib"):
    try:
        env["plugin_packages"][dist] = md.version(dist)
    except md.PackageNotFoundError:
        pass
env["runtime"] = {k: (v if isinstance(v, (int, float, str, bool, type(None))) else str(v))
                  for k, v in torch_pjrt.runtime_info().items()}
env["device_0"] = str(torch.tpu.get_device_name(0)) if hasattr(torch.tpu, "get_device_name") else None
x = torch.arange(4.0, device="tpu")
assert (x * 2).sum().item() == 12.0
print(json.dumps(env, indent=2))
json.dump(env, open(sys.argv[1], "w"), indent=2)
EOF
}

do_cpp() {
  [ -x "$build/core_tests" ] || { echo "core_tests was not built (GoogleTest missing?)"; return 1; }
  local plugin cache rc=0
  plugin=$(PYTHONPATH=$stage "$PY" -c "import torch_pjrt._plugins as p; print(p.resolve().path)") || return
  # A fresh cache: the engine tests count compiles.
  cache=$(mktemp -d)
  TORCH_PJRT_CACHE_DIR=$cache TORCH_PJRT_PLUGIN_PATH=$plugin "$build/core_tests" --gtest_brief=1 || rc=$?
  rm -rf "$cache"
  return $rc
}

do_pytest() {
  local paths=() only=()
  for t in $tests; do paths+=("tests/python/$t.py"); done
  # Distributed on one device: the tests that put ranks as threads on
  # devices of their own need as many devices as ranks, which XLA:CPU makes
  # up (TORCH_PJRT_CPU_DEVICES) and a single GPU does not have.
  if ! "$PY" -c "import json, sys; e = json.load(open('$out/env.json'))['runtime']
sys.exit(e['platform'] != 'cpu' and int(e['device_count']) < 4)" 2>/dev/null; then
    only=(-k "not (device_transport or in_one_process or never_comes)")
  fi
  PYTHONPATH=$stage TORCH_PJRT_EAGER_MODE=strict "$PY" -m pytest -q -rs -p no:cacheprovider \
    --junitxml="$out/pytest.xml" "${only[@]}" "${paths[@]}"
}

do_demo() {
  PYTHONPATH=$stage "$PY" examples/demo.py
}

do_bench() {
  local baseline=cpu
  PYTHONPATH=$stage "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" && baseline=cuda
  PYTHONPATH=$stage "$PY" -m torch_pjrt bench --only-decode --baseline "$baseline" --model "$bench_model" \
    --decode-tokens "$bench_tokens" --repeats "$bench_repeats" --modes "$bench_modes" --out "$out/bench"
}

# The steps run in a shell of their own, under timeout.
export -f do_build do_env do_cpp do_pytest do_demo do_bench
export PY root build stage out tests bench_model bench_tokens bench_repeats bench_modes

echo "== torch $release ($PY), build folder $build, results in $out"
t_all=$SECONDS
# 480 s in all: the build of every file on 16 cores, the suite's subset
# (its multi-process distributed tests the most), and the bench's warm-up
# compiles.
step build 110 do_build
step env 30 do_env
step cpp 40 do_cpp
step pytest 170 do_pytest
step demo 40 do_demo
step bench 90 do_bench

"$PY" - "$out" "$((SECONDS - t_all))" <<'EOF'
import json, os, re, sys
import xml.etree.ElementTree as ET
out, total = sys.argv[1], int(sys.argv[2])


def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


steps = {}
for line in open(os.path.join(out, "steps.tsv")):
    name, rc, secs, limit = line.rstrip("\n").split("\t")
    steps[name] = {"ok": rc == "0", "exit_status": int(rc), "timed_out": rc in ("124", "137"),
                   "seconds": int(secs), "timeout_s": int(limit), "log": f"{name}.log"}
report = {"ok": all(s["ok"] for s in steps.values()), "total_seconds": total, "steps": steps}
env = load("env.json") or {}
report["device"] = env.get("cuda_device") or env.get("runtime", {}).get("platform")
report["torch"] = env.get("torch")
report["plugin"] = {**env.get("plugin", {}), "packages": env.get("plugin_packages"),
                    "runtime": env.get("runtime")}
report["env"] = env
try:
    suite = ET.parse(os.path.join(out, "pytest.xml")).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    report["pytest"] = {k: int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped")}
    report["pytest"]["failed"] = [f"{c.get('classname')}::{c.get('name')}" for c in suite.iter("testcase")
                                  if c.find("failure") is not None or c.find("error") is not None]
except (OSError, ET.ParseError, AttributeError):
    report["pytest"] = None
demo = {}
try:
    text = open(os.path.join(out, "demo.log")).read()
    for side in ("cpu", "tpu"):
        m = re.search(rf"^{side}: (\[[^\]]*\])", text, re.M)
        demo[f"{side}_tokens"] = json.loads(m.group(1)) if m else None
    m = re.search(r"^identical: (\w+)", text, re.M)
    demo["identical"] = m.group(1) == "True" if m else None
    demo["losses"] = [[float(a), float(b)] for a, b in re.findall(r"loss cpu (\S+)\s+tpu (\S+)", text)]
except OSError:
    pass
report["demo"] = demo
bench = load("bench/bench.json")
report["bench"] = bench and {"model": bench.get("model"), "baseline": bench.get("baseline"),
                             "ratios": bench.get("ratios"), "decode": bench.get("decode")}
with open(os.path.join(out, "report.json"), "w") as f:
    json.dump(report, f, indent=2)
print(f"== {'all steps passed' if report['ok'] else 'FAILED: ' + ', '.join(n for n, s in steps.items() if not s['ok'])}"
      f" in {total}s: {os.path.join(out, 'report.json')}")
for n, s in steps.items():
    print(f"   {n:<7} {'ok' if s['ok'] else 'FAILED':<7} {s['seconds']:>4}s")
EOF
exit $failed
