"""The conformance run's report side: the summary of a run's cases
(conformance.json), its HTML page, and the baseline a quick run is gated
against (write, load, compare, gate). Kept apart from the driver so the
gate's rules can be read and tested without the worker machinery.
"""
import html
import json
import os

from .. import _env
from .conformance_cases import DEFAULT_TOL

def _environment():
    """What the outcomes depend on besides the code: PyTorch (its OpInfos),
    the plugin, the eager mode the workers inherit."""
    import torch
    import torch_pjrt
    return {"torch": torch.__version__, "platform": torch_pjrt.plugin_choice.name,
            "eager_mode": _env.value("TORCH_PJRT_EAGER_MODE")}


def summarize(cases, quick, seconds):
    fwd = [c for c in cases if c["kind"] == "forward" and c["status"] != "skip"]
    grad = [c for c in cases if c["kind"] == "gradient" and c["status"] != "skip"]
    native = [c for c in fwd if not c.get("fallback")]
    per_op = {}
    for c in cases:
        o = per_op.setdefault(c["op"], {"pass": 0, "mismatch": 0, "error": 0, "skip": 0, "native": 0,
                                         "fallback_ops": set(), "first_failure": None})
        o[c["status"]] += 1
        if c["status"] != "skip" and not c.get("fallback"):
            o["native"] += 1
        o["fallback_ops"].update(c.get("fallback", []))
        if c["status"] in ("mismatch", "error") and not o["first_failure"]:
            o["first_failure"] = f"[{c['dtype']} {c['kind']}] {c.get('message', '')}"
    for o in per_op.values():
        o["fallback_ops"] = sorted(o["fallback_ops"])
        o["status"] = "fail" if o["mismatch"] or o["error"] else ("pass" if o["pass"] else "skip")

    def rate(a, b):
        return round(len(a) / len(b), 4) if b else 0.0

    return {
        "forward_pass_rate": rate([c for c in fwd if c["status"] == "pass"], fwd),
        "native_rate": rate(native, fwd),
        "gradient_pass_rate": rate([c for c in grad if c["status"] == "pass"], grad),
        "cases": len(cases),
        "forward_cases": len(fwd),
        "gradient_cases": len(grad),
        "skipped_cases": sum(1 for c in cases if c["status"] == "skip"),
        "quick": quick,
        "seconds": round(seconds, 1),
        "tolerances": {"default_atol_rtol": DEFAULT_TOL, "gradients_min": [1e-4, 1e-4],
                       "note": "the OpInfo's own test_compare_cpu tolerance overrides win when looser"},
        "ops": per_op,
        "case_list": cases,
    }


# ------------------------------------------------------------- baseline gate

def outcome_map(cases):
    """{"op dtype kind": outcome} over a run's cases, the samples of one key
    folded together: "fail" if any sample fails, else "pass" if any passes,
    else "skip"; a case that ran says "native" or "fallback" (any CPU
    fallback in any sample)."""
    by_key = {}
    for c in cases:
        by_key.setdefault(f"{c['op']} {c['dtype']} {c['kind']}", []).append(c)
    out = {}
    for key, cs in by_key.items():
        ran = [c for c in cs if c["status"] != "skip"]
        if not ran:
            out[key] = "skip"
            continue
        if any(c.get("crash") for c in ran):  # the worker died or hung: nothing to say about fallback
            out[key] = "fail crash"
            continue
        outcome = "fail" if any(c["status"] in ("mismatch", "error") for c in ran) else "pass"
        out[key] = outcome + (" fallback" if any(c.get("fallback") for c in ran) else " native")
    return out


def write_baseline(path, report, base=None, ops=None):
    """The run's outcome map as a baseline file, one case per line so a
    change to it reads as a plain diff. For a run of some ops only, base
    (a baseline's cases) supplies the cases of every other op."""
    cases = outcome_map(report["case_list"])
    if base is not None and ops is not None:
        ops = set(ops)
        cases = dict({k: v for k, v in base.items() if k.split(" ")[0] not in ops}, **cases)
    head = {"about": "torch_pjrt conformance baseline: outcome of each (op, dtype, kind) in the quick run; "
                     "regenerate with python -m torch_pjrt conformance --quick --write-baseline PATH",
            "torch": report.get("torch"), "platform": report.get("platform"),
            "quick": report["quick"], "ops": len({k.split(" ")[0] for k in cases})}
    lines = [f"  {json.dumps(k)}: {json.dumps(head[k])}," for k in head]
    lines.append('  "cases": {')
    lines.append(",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(cases.items())))
    lines.append("  }")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("{\n" + "\n".join(lines) + "\n}\n")


def load_baseline(path):
    with open(path) as f:
        return json.load(f)


def compare(baseline, current, ops=None):
    """Compares two outcome maps. Returns {"regressions": [...],
    "improvements": [...], "other": [...]}, each a list of
    {"case", "was", "now", "why"} (None where a map lacks the case).
    Regressions: a case that fails and did not, a case that moved from
    native to the CPU fallback, a case that passed and no longer runs.
    Improvements: fail -> pass, fallback -> native, a case that passes and
    did not run. ops restricts the comparison to those ops (a partial run)."""
    if ops is not None:
        ops = set(ops)
        baseline = {k: v for k, v in baseline.items() if k.split(" ")[0] in ops}
    diff = {"regressions": [], "improvements": [], "other": []}
    for key in sorted(set(baseline) | set(current)):
        was, now = baseline.get(key), current.get(key)
        if was == now:
            continue
        w_out, w_where = (was or "missing").partition(" ")[::2]
        n_out, n_where = (now or "missing").partition(" ")[::2]
        entry = {"case": key, "was": was, "now": now}
        bad, good = [], []
        if n_out == "fail" and w_out != "fail":
            bad.append("new failure")
        if w_out == "pass" and n_out in ("skip", "missing"):
            bad.append("no longer runs")
        if w_where == "native" and n_where == "fallback":
            bad.append("moved to the CPU fallback")
        if n_out == "pass" and w_out != "pass":
            good.append("now passes")
        if w_where == "fallback" and n_where == "native":
            good.append("now native")
        if bad:
            diff["regressions"].append(dict(entry, why=", ".join(bad)))
        if good:
            diff["improvements"].append(dict(entry, why=", ".join(good)))
        if not bad and not good:
            diff["other"].append(dict(entry, why="changed"))
    return diff


def gate(report, baseline_path, out, ops=None):
    """Compares a run with the baseline at baseline_path; writes
    baseline_diff.json and the run's own map as conformance_baseline.json to
    out (copy it over the baseline to raise it). Returns (ok, text, diff):
    ok is False on any regression, text lists the changes for a person."""
    baseline = load_baseline(baseline_path)
    current = outcome_map(report["case_list"])
    diff = compare(baseline["cases"], current, ops)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "baseline_diff.json"), "w") as f:
        json.dump(dict(diff, baseline=os.path.abspath(baseline_path)), f, indent=1)
    write_baseline(os.path.join(out, "conformance_baseline.json"), report, baseline["cases"], ops)
    messages = {}
    for c in report["case_list"]:
        if c["status"] in ("mismatch", "error"):
            messages.setdefault(f"{c['op']} {c['dtype']} {c['kind']}", c.get("message", ""))
    text = []
    if diff["regressions"]:
        text.append(f"{len(diff['regressions'])} regression(s) against {baseline_path}:")
        for e in diff["regressions"]:
            detail = f" -- {' '.join(messages[e['case']].split())[:300]}" if e["case"] in messages else ""
            text.append(f"  {_change(e)}{detail}")
    if diff["improvements"]:
        raise_it = f"cp {os.path.join(out, 'conformance_baseline.json')} {baseline_path}"
        text.append(f"{len(diff['improvements'])} improvement(s) over {baseline_path} (" +
                    (f"raise it: {raise_it}" if not diff["regressions"] else "raise it once the regressions are fixed")
                    + "):")
        text += [f"  {_change(e)}" for e in diff["improvements"]]
    if diff["other"]:
        text.append(f"{len(diff['other'])} other change(s):")
        text += [f"  {_change(e)}" for e in diff["other"]]
    if diff["regressions"] and baseline.get("torch") and report.get("torch") not in (None, baseline["torch"]):
        text.append(f"note: the baseline was recorded with torch {baseline['torch']}, this run used "
                    f"{report['torch']}")
    text.append(f"details in {os.path.join(out, 'baseline_diff.json')}")
    return not diff["regressions"], "\n".join(text), diff


def _change(e):
    return f"{e['case']}: {e['was'] or 'not run'} -> {e['now'] or 'not run'} ({e['why']})"


def to_html(r):
    rows = []
    for name, o in sorted(r["ops"].items()):
        rows.append(
            f"<tr class='{o['status']}'><td>{html.escape(name)}</td><td>{o['status']}</td><td>{o['pass']}</td>"
            f"<td>{o['mismatch']}</td><td>{o['error']}</td><td>{o['skip']}</td><td>{o['native']}</td>"
            f"<td>{html.escape(', '.join(o['fallback_ops']))}</td>"
            f"<td>{html.escape(o['first_failure'] or '')}</td></tr>")
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>torch_pjrt conformance</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;font-size:13px}}
td,th{{border:1px solid #ccc;padding:3px 6px;vertical-align:top}}th{{cursor:pointer;background:#eee}}
tr.fail td:nth-child(2){{background:#fcc}}tr.pass td:nth-child(2){{background:#cfc}}
td:last-child{{max-width:40em;font-family:monospace;font-size:11px}}</style></head><body>
<h1>torch_pjrt conformance {'(quick)' if r['quick'] else ''}</h1>
<p>Forward pass rate <b>{r['forward_pass_rate']:.2%}</b> of {r['forward_cases']} cases;
native (no CPU fallback) <b>{r['native_rate']:.2%}</b>; gradient pass rate
<b>{r['gradient_pass_rate']:.2%}</b> of {r['gradient_cases']}; {r['skipped_cases']} skipped; {r['seconds']} s.</p>
<p>Click a column header to sort.</p>
<table id="t"><thead><tr><th>op</th><th>status</th><th>pass</th><th>mismatch</th><th>error</th><th>skip</th>
<th>native</th><th>fallback ops</th><th>first failure</th></tr></thead><tbody>{''.join(rows)}</tbody></table>
<script>
document.querySelectorAll('th').forEach((th, i) => th.onclick = () => {{
  const tb = document.querySelector('#t tbody'); const rows = [...tb.rows];
  const num = rows.every(r => !isNaN(parseFloat(r.cells[i].textContent)) || r.cells[i].textContent === '');
  const dir = th.dataset.dir = th.dataset.dir === 'asc' ? 'desc' : 'asc';
  rows.sort((a, b) => {{ const x = a.cells[i].textContent, y = b.cells[i].textContent;
    const c = num ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
    return dir === 'asc' ? c : -c; }});
  rows.forEach(r => tb.appendChild(r)); }});
</script></body></html>"""

