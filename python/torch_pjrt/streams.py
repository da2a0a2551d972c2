"""torch.tpu.Stream and torch.tpu.Event, shaped like torch.cuda's, on the
device guard's streams and events (csrc/engine/event.h says what they mean
here: an event marks everything issued before it; the device runs work in
launch order, so every stream is ordered with every other and waiting across
streams is free)."""
import contextlib

import torch

from . import _devices


def _device(device):
    return torch.device("tpu", _devices.index(device))


class Stream(torch.Stream):
    """A tpu stream: `torch.tpu.Stream(device=None, priority=0)`; a context
    manager that makes itself current, like torch.cuda.Stream."""

    def __new__(cls, device=None, priority=0, **kwargs):
        if kwargs.get("stream_id") is not None:  # wrapping an existing stream
            return super().__new__(cls, **kwargs)
        return super().__new__(cls, device=_device(device), priority=priority)

    def wait_event(self, event):
        event.wait(self)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __repr__(self):
        return f"<torch.tpu.Stream device={self.device} stream_id={self.stream_id}>"


class Event:
    """A tpu event: `torch.tpu.Event(enable_timing=False, blocking=False,
    interprocess=False)`, like torch.cuda.Event. It holds a torch.Event of
    the tpu device (whose methods accept only their own type) and passes
    it where PyTorch's own APIs expect one."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise RuntimeError("tpu events cannot be shared between processes")
        self._event = torch.Event(device="tpu", enable_timing=enable_timing, blocking=blocking)

    @staticmethod
    def _of(event):
        return event._event if isinstance(event, Event) else event

    def record(self, stream=None):
        self._event.record(current_stream() if stream is None else stream)

    def wait(self, stream=None):
        self._event.wait(current_stream() if stream is None else stream)

    def query(self) -> bool:
        return self._event.query()

    def synchronize(self) -> None:
        self._event.synchronize()

    def elapsed_time(self, end_event) -> float:
        """Milliseconds from this event to end_event (both with timing)."""
        return self._event.elapsed_time(self._of(end_event))

    @property
    def device(self):
        return self._event.device

    @property
    def event_id(self):
        return self._event.event_id

    def __repr__(self):
        return f"<torch.tpu.Event {'recorded' if self.event_id else 'unrecorded'}>"


def _wrap(s):
    return Stream(stream_id=s.stream_id, device_index=s.device_index, device_type=s.device_type)


def current_stream(device=None) -> Stream:
    return _wrap(torch.accelerator.current_stream(_device(device)))


def default_stream(device=None) -> Stream:
    d = _device(device)
    s = torch.accelerator.current_stream(d)
    return Stream(stream_id=0, device_index=d.index, device_type=s.device_type)


def set_stream(stream) -> None:
    if stream is not None:
        torch.accelerator.set_stream(stream)


@contextlib.contextmanager
def stream(s=None):
    """Makes s the current stream of its device inside the block (None: no change)."""
    if s is None:
        yield
        return
    before = torch.accelerator.current_stream(s.device)
    torch.accelerator.set_stream(s)
    try:
        yield s
    finally:
        torch.accelerator.set_stream(before)
