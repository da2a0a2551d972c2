"""torch.tpu.amp: mixed-precision helpers shaped like torch.cuda.amp, bound to
the tpu device (thin wrappers over torch.amp, which is the API to prefer)."""
import torch

from . import _on_import

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]


def amp_definitely_not_available() -> bool:
    from . import _C
    return not _C._is_available()


class autocast(torch.amp.autocast):
    """torch.autocast("tpu", ...). dtype=None uses torch.get_autocast_dtype("tpu")."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        super().__init__("tpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(torch.amp.GradScaler):
    """torch.amp.GradScaler("tpu", ...)."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        super().__init__("tpu", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """torch.amp.custom_fwd(..., device_type="tpu")."""
    return torch.amp.custom_fwd(fwd, device_type="tpu", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """torch.amp.custom_bwd(..., device_type="tpu")."""
    return torch.amp.custom_bwd(bwd, device_type="tpu")


def _unscale_without_f64(grad_scaler):
    """GradScaler.unscale_ takes 1/scale in float64, which TPUs lack. There,
    the scale is read on the host for that one step (exact, and GradScaler
    syncs every step anyway); everything else stays on the device."""
    from . import _C

    orig = grad_scaler.GradScaler.unscale_
    if getattr(orig, "_tpu_no_f64", False):
        return

    def unscale_(self, optimizer):
        scale = getattr(self, "_scale", None)
        if scale is None or scale.device.type != "tpu" or _C._f64_supported():
            return orig(self, optimizer)
        self._scale = scale.cpu()
        try:
            return orig(self, optimizer)
        finally:
            self._scale = scale

    unscale_.__doc__ = orig.__doc__
    unscale_.__wrapped__ = orig
    unscale_._tpu_no_f64 = True
    grad_scaler.GradScaler.unscale_ = unscale_


_on_import.when_imported("torch.amp.grad_scaler", _unscale_without_f64, _on_import.TORCH_RELEASES)
