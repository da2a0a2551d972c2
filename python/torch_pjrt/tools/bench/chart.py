"""The bench's figures, drawn from the results it writes (matplotlib, when
installed; without it nothing is drawn and the functions return False)."""


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def overview(result, path):
    """bench.png: the eager benchmarks' speeds relative to PyTorch CPU eager."""
    plt = _pyplot()
    if plt is None:
        return False
    labels, values = [], []
    for k, v in result["ops"].items():
        labels.append(f"{k} latency")
        values.append(v["torch_cpu_us"] / v["tpu_strict_us"])
    tr = result["train"]
    for mode in result["modes"]:
        labels.append(f"train {mode}")
        values.append(tr["torch_cpu_s"] / tr[f"tpu_{mode}_s"])
    # Decoding beside torch's CUDA eager (--baseline cuda) is another scale:
    # its ratios are in bench.json only.
    for b, d in result["decode"].items() if result.get("baseline", "cpu") == "cpu" else ():
        for mode in result["modes"]:
            labels.append(f"decode {b} {mode}")
            values.append(d[f"tpu_{mode}_tokens_per_s"] / d["torch_cpu_tokens_per_s"])
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(labels) + 1.2))
    ax.barh(labels, values, color=["#4a8" if v >= 1 else "#c66" for v in values])
    ax.axvline(1.0, color="k", lw=1)
    ax.set_xlabel("speed relative to PyTorch CPU eager (higher is better)")
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True


def moe(res, path, sides):
    """moe.png: ms per generated token of each side (moe.py's SIDES) and
    the roofline, per cache and batch."""
    plt = _pyplot()
    if plt is None:
        return False
    rows = list(res["rows"])
    fig, ax = plt.subplots(figsize=(9, 0.5 * len(rows) * len(sides) / 2 + 1.5))
    width = 0.8 / (len(sides) + 1)
    for i, name in enumerate(list(sides) + ["roofline"]):
        key = "roofline_ms" if name == "roofline" else f"{name}_ms_per_token"
        ax.barh([j + i * width for j in range(len(rows))], [res["rows"][r][key] or 0 for r in rows], width,
                label=name)
    ax.set_yticks([j + 0.4 for j in range(len(rows))], rows)
    ax.set_xscale("log")
    ax.set_xlabel("ms per generated token (lower is better)")
    ax.legend(fontsize=8)
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True
