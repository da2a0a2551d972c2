"""Hugging Face accelerate, behind transformers' Trainer, Accelerator and
`device_map="auto"`, finds the device through `torch.accelerator` (1.16 and
later: PartialState's default device is tpu with no help). Two of its
choices still come from fixed lists a PrivateUse1 device cannot join, with
no hook for one, so torch_pjrt changes them when accelerate loads (guarded,
see _on_import.py):

- Under a launcher (torchrun, accelerate launch), PartialState's choice of
  distributed mode gives tpu the multi-process one, on tpu_dist (see
  _patch_launch).
- get_max_memory, which device_map="auto" plans with, lists each tpu
  device's free memory under its index (as it lists CUDA's) when tpu is the
  current accelerator, so models land on the device and only what does not
  fit goes to the CPU. A device that shares the host's memory (XLA:CPU)
  gets no separate CPU budget, as accelerate does for integrated GPUs.
  accelerate's own answer for tpu lists only the current device, and a CPU
  budget beside it even where the device's memory is the host's.
Everything else stays accelerate's."""
import functools

from ._on_import import when_imported

# The releases these patches were written and tested against (pyproject.toml's
# `hf` extra states the same range).
WRITTEN_FOR = "accelerate>=1.16,<1.17"


def _patch_launch(state):
    """Under torchrun / accelerate launch, accelerate picks its distributed
    mode from the same fixed list: tpu joins the one it treats as a
    multi-process device (MULTI_GPU), with the tpu_dist backend, one device
    per process (this process's current one) and DDP wrapping the model with
    no device ids (each process sees its own device as its current one)."""
    cls = state.PartialState
    prepare, set_device, multi_process = cls._prepare_backend, cls.set_device, state.DistributedType.MULTI_GPU
    if getattr(prepare, "_torch_pjrt", False):
        return
    import os

    def _tpu_launch(cpu):
        import torch
        return not cpu and int(os.environ.get("LOCAL_RANK", -1)) != -1 and torch.tpu.is_available() and \
            os.environ.get("ACCELERATE_TORCH_DEVICE") in (None, "tpu")

    @functools.wraps(prepare)
    def _prepare_backend(self, cpu=False, sagemaker_dp=False, backend=None):
        found, kind = prepare(self, cpu, sagemaker_dp, backend)
        if kind == state.DistributedType.NO and _tpu_launch(cpu):
            os.environ.setdefault("ACCELERATE_BYPASS_DEVICE_MAP", "true")
            return backend or "tpu_dist", multi_process
        return found, kind

    @functools.wraps(set_device)
    def _set_device(self):
        if self.device is None and self.backend == "tpu_dist":
            import torch
            self.device = torch.device("tpu", torch.tpu.current_device())
            return
        return set_device(self)

    _prepare_backend._torch_pjrt = True
    cls._prepare_backend = _prepare_backend
    cls.set_device = _set_device


def _tpu_is_the_accelerator():
    import torch
    acc = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else None
    return acc is not None and acc.type == "tpu"


def _with_tpu_memory(original, convert_size, logger):
    @functools.wraps(original)
    def get_max_memory(max_memory=None):
        if not _tpu_is_the_accelerator():
            return original(max_memory)
        import torch
        n = torch.tpu.device_count()
        if max_memory is None:
            found = {}
            integrated = False
            for i in range(n):
                found[i] = torch.tpu.mem_get_info(i)[0]
                integrated |= torch.tpu.get_device_properties(i).is_integrated
            others = {k: v for k, v in original(None).items() if not isinstance(k, int)}
            if integrated:
                others.pop("cpu", None)
            return {**found, **others}
        given = {k: convert_size(v) if isinstance(v, str) else v for k, v in max_memory.items()}
        for k in given:
            if isinstance(k, int) and not 0 <= k < n:
                logger.warning(f"Device {k} is not available, available devices are {list(range(n))}")
            elif not isinstance(k, int) and k not in ("mps", "cpu", "disk"):
                raise ValueError(f"Device {k} is not recognized, available devices are integers(for GPU/XPU), "
                                 "'mps', 'cpu' and 'disk'")
        order = sorted(k for k in given if isinstance(k, int)) + [k for k in ("mps", "cpu", "disk") if k in given]
        return {k: given[k] for k in order}

    get_max_memory._torch_pjrt = True
    return get_max_memory


def _patch_modeling(modeling):
    """get_max_memory lists each tpu device's free memory."""
    import sys
    original = modeling.get_max_memory
    if getattr(original, "_torch_pjrt", False):
        return
    patched = _with_tpu_memory(original, modeling.convert_file_size_to_int, modeling.logger)
    modeling.get_max_memory = patched
    # Modules that imported the name before this ran hold the original.
    for name, attr in (("accelerate.utils", "get_max_memory"),
                       ("transformers.integrations.accelerate", "accelerate_max_memory")):
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, attr, None) is original:
            setattr(mod, attr, patched)


def install():
    when_imported("accelerate.state", _patch_launch, WRITTEN_FOR)
    when_imported("accelerate.utils.modeling", _patch_modeling, WRITTEN_FOR)
