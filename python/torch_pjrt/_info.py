"""python -m torch_pjrt info: what a user reports when something is wrong.

Versions, the build record, the plugin and why it was chosen, the devices,
the eager mode, the compilation cache and the environment in force. Works
when the package failed to load too (it then says why, and exits 1), so it
imports nothing of the package that needs the extension beforehand."""
import argparse
import importlib.metadata
import json
import os
import platform
import sys

# Variables of other libraries that change what the device does.
_FOREIGN_VARS = ("XLA_FLAGS", "LIBTPU_INIT_ARGS", "TPU_", "PJRT_", "TF_CPP_", "NPROC", "TORCH_DEVICE_BACKEND_AUTOLOAD")


def _dist_version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _dir_size(path):
    files, size = 0, 0
    for root, _, names in os.walk(path):
        for n in names:
            try:
                size += os.path.getsize(os.path.join(root, n))
                files += 1
            except OSError:
                pass
    return files, size


def collect():
    """The report as a dict (also what --json prints)."""
    import _torch_pjrt_autoload as record

    import torch_pjrt

    package_dir = os.path.dirname(os.path.abspath(torch_pjrt.__file__))
    r = {"torch_pjrt": torch_pjrt.__version__, "package_dir": package_dir, "python": platform.python_version()}
    try:
        import torch
        r["torch"] = torch.__version__
    except Exception as e:  # noqa: BLE001
        r["torch"] = f"not importable: {e}"
    try:
        from torch_pjrt import _build_info
        r["built_for_torch"] = _build_info.torch_version
    except ImportError:
        r["built_for_torch"] = "unknown (no build record: a source tree built before it existed?)"
    r["plugins_installed"] = {k: v for k in ("xla-cpu-pjrt", "libtpu", "jax-cuda13-pjrt", "xla-cuda13-pjrt")
                              if (v := _dist_version(k))}
    r["loaded"] = record.error is None
    if record.error is not None:
        r["load_error"] = record.error
    env_names = set()
    try:
        from torch_pjrt import _env
        env_names = set(_env._CORE)
    except Exception:  # noqa: BLE001  (the extension did not load: show what is set)
        pass
    r["environment"] = {k: v for k, v in sorted(os.environ.items())
                        if k.startswith("TORCH_PJRT_") or k in env_names or k.startswith(_FOREIGN_VARS)}
    if record.error is not None:
        try:
            from torch_pjrt import _plugins
            c = _plugins.resolve()
            r["plugin"] = {"name": c.name, "path": c.path or "not installed", "chosen_because": c.reason}
        except Exception:  # noqa: BLE001
            pass
        return r
    c = torch_pjrt.plugin_choice
    r["plugin"] = {"name": c.name, "path": c.path, "chosen_because": c.reason, **torch_pjrt._plugin_attributes}
    try:
        info = torch_pjrt.runtime_info()
        r["plugin"].update(platform=info.get("platform"), platform_version=info.get("platform_version"))
        r["devices"] = info.get("device_count")
        if "xla_cpu_threads" in info:
            r["xla_cpu_threads"] = info["xla_cpu_threads"]
    except Exception as e:  # noqa: BLE001  (a plugin that loads but cannot make a client)
        r["devices"] = f"the plugin could not start: {e}"
    r["eager_mode"] = torch_pjrt.get_eager_mode()
    stats = torch_pjrt.cache_stats()
    cache = {"dir": stats.get("dir") or "off"}
    if stats.get("dir"):
        files, size = _dir_size(stats["dir"])
        cache.update(programs_on_disk=files, bytes_on_disk=size)
    r["compilation_cache"] = cache
    return r


def _text(r):
    lines = [f"torch_pjrt {r['torch_pjrt']}  ({r['package_dir']})",
             f"  built for torch {r['built_for_torch']}",
             f"torch {r['torch']}, Python {r['python']}"]
    if r["loaded"]:
        lines.append("status: loaded")
    else:
        lines.append(f"status: NOT LOADED: {r['load_error']}")
    p = r.get("plugin")
    if p:
        lines.append(f"plugin: {p['name']} ({p['chosen_because']})")
        for k, v in p.items():
            if k not in ("name", "chosen_because"):
                lines.append(f"  {k}: {v}")
    lines.append("plugins installed: " + (", ".join(f"{k} {v}" for k, v in r["plugins_installed"].items()) or "none"))
    for key, label in (("devices", "devices"), ("xla_cpu_threads", "XLA:CPU threads"), ("eager_mode", "eager mode")):
        if key in r:
            lines.append(f"{label}: {r[key]}")
    if "compilation_cache" in r:
        c = r["compilation_cache"]
        text = c["dir"]
        if "programs_on_disk" in c:
            text += f" ({c['programs_on_disk']} files, {c['bytes_on_disk'] / 2**20:.1f} MiB)"
        lines.append(f"compilation cache: {text}")
    lines.append("environment: " + ("none set" if not r["environment"] else ""))
    lines += [f"  {k}={v}" for k, v in r["environment"].items()]
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(prog="python -m torch_pjrt info", description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args(argv)
    r = collect()
    print(json.dumps(r, indent=2) if args.json else _text(r))
    return 0 if r["loaded"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
