"""torch.distributed on tpu: the c10d backend "tpu_dist" (csrc/aten/
distributed.cc), registered for device "tpu" under that name (the one
transformers uses for the device) and as "tpu". `init_process_group()`
without a backend, `init_process_group("tpu_dist")` or
`"cpu:gloo,tpu:tpu_dist"` then serve DDP, FSDP2, DTensor and functional
collectives on tpu tensors.

Each member binds one device (the one current when the group is made).
A group whose members all share this process's PJRT client, each on its own
device (ranks as threads, one per device), runs its collectives on the
device transport: one replicated program per collective. Other groups use
the host transport: copied to the host, run by a gloo group on the same
store, copied back. `stats()` counts collectives per transport."""
import itertools
import os
import socket

import torch

from . import _C

_group_tags = itertools.count(1)


def _device_group(store, rank, size):
    """(devices in rank order, tag) when every member of the group is in
    this process on a device of its own, else ([], 0). Each member says
    where it is through the group's store; the first member numbers the
    group, so every member derives the same meeting ids."""
    where = f"{socket.gethostname()}/{os.getpid()}"
    store.set(f"tpu_dist/member/{rank}", f"{where}/{torch.tpu.current_device()}")
    if rank == 0:
        store.set("tpu_dist/tag", str(next(_group_tags) % 2048))
    members = [store.get(f"tpu_dist/member/{r}").decode().rsplit("/", 1) for r in range(size)]
    devices = [int(d) for _, d in members]
    if size < 2 or any(w != where for w, _ in members) or len(set(devices)) != size:
        return [], 0
    return devices, int(store.get("tpu_dist/tag"))


def _create_backend(store, rank, size, timeout):
    import torch.distributed as dist
    torch.tpu.init()  # DeviceMesh leaves an initialized device as it is
    host = dist.ProcessGroupGloo(dist.PrefixStore("tpu_dist/host/", store), rank, size, timeout)
    devices, tag = _device_group(store, rank, size)
    return _C.TpuDistBackend(host, rank, size, torch.tpu.current_device(), devices, tag, timeout)


def stats() -> dict:
    """Collectives of tpu tensors run so far per transport, the bytes the
    host transport moved between device and host, and the collectives of
    CPU tensors a tpu_dist group handed to gloo as they are."""
    if not hasattr(_C, "_dist_stats"):
        return {"host_collectives": 0, "host_bytes": 0, "device_collectives": 0, "cpu_collectives": 0}
    return dict(_C._dist_stats())


def install():
    import torch.distributed as dist
    if not dist.is_available() or "tpu_dist" in dist.Backend.backend_list:
        return
    _C._init_distributed(_C)
    for name in ("tpu_dist", "tpu"):  # the first is the device's default
        # CPU tensors too (they go to the gloo group as they are): a group
        # made with the device's default backend still serves the object
        # collectives and CPU tensors that launchers and libraries send.
        dist.Backend.register_backend(name, _create_backend, devices=["tpu", "cpu"])


def configure_client(store, node_id: int, num_nodes: int):
    """Makes this process node `node_id` of `num_nodes` of one PJRT client
    spanning every process of the job, for plugins that form such a client
    from the create options node_id / num_nodes and a key-value store (the
    GPU plugin). Call it before the device's first use; libtpu on TPU VMs
    finds its slice itself and needs none of this.

    store: a c10d store every process reaches (the one the process group is
    made from serves); the plugin's keys are kept under "torch_pjrt/pjrt/".
    The plugin reads it from its own threads while the client is created,
    so it must be one of c10d's C++ stores (TCPStore, FileStore, HashStore),
    not a Python subclass."""
    import torch.distributed as dist
    install()
    _C._configure_multi_process(dist.PrefixStore("torch_pjrt/pjrt/", store), int(node_id), int(num_nodes))
