"""torch.tpu's reading of device arguments: the device count, the current
device and a device argument's index. Both the device module and the
streams read devices through here."""
import torch

from . import _C


def device_count() -> int:
    return int(_C._device_count())


def current_device() -> int:
    return torch.accelerator.current_device_index() if _accel() else int(_C._current_device())


def _accel():
    acc = getattr(torch, "accelerator", None)
    return acc is not None and acc.is_available() and acc.current_accelerator().type == "tpu"


def index(device) -> int:
    """The index of a device argument (None, an int, a string or a
    torch.device of type tpu); None and an index-less tpu mean the current
    device."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    d = torch.device(device)
    if d.type != "tpu":
        raise ValueError(f"expected a tpu device, got {d}")
    return current_device() if d.index is None else d.index
