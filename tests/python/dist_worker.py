"""One rank of a multi-process tpu_dist check (run by test_distributed.py):
`python dist_worker.py SCENARIO RANK WORLD STORE_FILE OUT_JSON`, or under
torchrun `dist_worker.py tp_plan MODEL_DIR OUT_JSON`. Each rank
binds tpu:0 of its own process, as on a TPU VM with one chip per process.
Every rank writes what it found to its own OUT_JSON (under torchrun: rank 0
to OUT_JSON, rank r to OUT_JSON.rank<r>), so the test checks each one.

`python dist_worker.py threads SCENARIO WORLD OUT_JSON` runs the same
scenario with the ranks as threads of one process, rank r on tpu:r
(TORCH_PJRT_CPU_DEVICES=WORLD): the group then shares one client and takes
the device transport."""
import datetime
import json
import os
import sys
import threading
import time

import torch
import torch.distributed as dist

import torch_pjrt

DTYPES = [torch.float32, torch.bfloat16, torch.int64]


def _data(shape, dtype, rank, salt):
    g = torch.Generator().manual_seed(1000 * salt + rank)
    if dtype == torch.int64:
        return torch.randint(-50, 50, shape, generator=g)
    return torch.randn(shape, generator=g).to(dtype)


def _same(tpu_result, cpu_result):
    return bool(torch.equal(tpu_result.cpu(), cpu_result))


def _ordered_sum(values):
    """The sum a replicated program computes over more than two members:
    in rank order, floating types accumulated in float32 and rounded once.
    gloo's ring sums in another order, so beyond two ranks (where a + b is
    the only order) its float sums differ in the last bits."""
    acc = values[0].double() if values[0].dtype == torch.int64 else values[0].float()
    for v in values[1:]:
        acc = acc + (v.double() if v.dtype == torch.int64 else v.float())
    return acc.to(values[0].dtype) if values[0].dtype != torch.int64 else acc.round().to(torch.int64)


def collectives(rank, world):
    gloo = dist.new_group(backend="gloo")
    failures, checked = [], 0
    ops = {"sum": dist.ReduceOp.SUM, "avg": dist.ReduceOp.AVG, "max": dist.ReduceOp.MAX,
           "min": dist.ReduceOp.MIN}

    def check(name, tpu_value, cpu_value):
        nonlocal checked
        checked += 1
        if not _same(tpu_value, cpu_value):
            failures.append(name)

    for salt, dtype in enumerate(DTYPES):
        x = _data((6, 5), dtype, rank, salt)
        for op_name, op in ops.items():
            if op_name == "avg" and dtype == torch.int64:
                continue
            summing = op_name in ("sum", "avg") and dtype != torch.int64 and world > 2
            ordered = _ordered_sum([_data((6, 5), dtype, r, salt) for r in range(world)])
            d, c = x.to("tpu"), x.clone()
            dist.all_reduce(d, op=op)
            if op_name == "avg":  # gloo has no AVG: the reference is its sum over world
                dist.all_reduce(c, op=dist.ReduceOp.SUM, group=gloo)
                c = (ordered if summing else c) / world
            else:
                dist.all_reduce(c, op=op, group=gloo)
                c = ordered if summing else c
            check(f"all_reduce {op_name} {dtype}", d, c)
            d, c = x.to("tpu"), x.clone()
            dist.reduce(d, dst=0, op=dist.ReduceOp.SUM if op_name == "avg" else op)
            dist.reduce(c, dst=0, op=dist.ReduceOp.SUM if op_name == "avg" else op, group=gloo)
            if rank == 0:
                check(f"reduce {op_name} {dtype}", d, ordered if summing else c)
        d, c = x.to("tpu"), x.clone()
        dist.broadcast(d, src=1)
        dist.broadcast(c, src=1, group=gloo)
        check(f"broadcast {dtype}", d, c)
        outs_d = [torch.empty_like(x, device="tpu") for _ in range(world)]
        outs_c = [torch.empty_like(x) for _ in range(world)]
        dist.all_gather(outs_d, x.to("tpu"))
        dist.all_gather(outs_c, x, group=gloo)
        check(f"all_gather {dtype}", torch.stack(outs_d), torch.stack(outs_c))
        big_d = torch.empty((world * 6, 5), dtype=dtype, device="tpu")
        big_c = torch.empty((world * 6, 5), dtype=dtype)
        dist.all_gather_into_tensor(big_d, x.to("tpu"))
        dist.all_gather_into_tensor(big_c, x, group=gloo)
        check(f"all_gather_into_tensor {dtype}", big_d, big_c)
        full = _data((world * 3, 5), dtype, rank, salt + 10)
        mine = _ordered_sum([_data((world * 3, 5), dtype, r, salt + 10) for r in range(world)]).chunk(world)[rank]
        floats = dtype != torch.int64 and world > 2
        for op_name in ("sum", "max") + (("avg",) if dtype != torch.int64 else ()):
            out_d = torch.empty((3, 5), dtype=dtype, device="tpu")
            out_c = torch.empty((3, 5), dtype=dtype)
            dist.reduce_scatter_tensor(out_d, full.to("tpu"), op=ops[op_name])
            if op_name == "avg":
                dist.reduce_scatter_tensor(out_c, full, op=dist.ReduceOp.SUM, group=gloo)
                out_c = (mine if floats else out_c) / world
            else:
                dist.reduce_scatter_tensor(out_c, full, op=ops[op_name], group=gloo)
                out_c = mine if floats and op_name == "sum" else out_c
            check(f"reduce_scatter_tensor {op_name} {dtype}", out_d, out_c)
        chunks = list(full.chunk(world))
        out_d = torch.empty((3, 5), dtype=dtype, device="tpu")
        out_c = torch.empty((3, 5), dtype=dtype)
        dist.reduce_scatter(out_d, [c.to("tpu") for c in chunks])
        dist.reduce_scatter(out_c, [c.clone() for c in chunks], group=gloo)
        check(f"reduce_scatter {dtype}", out_d, mine if floats else out_c)
        out_d, out_c = torch.empty((3, 5), dtype=dtype, device="tpu"), torch.empty((3, 5), dtype=dtype)
        dist.scatter(out_d, [c.to("tpu") for c in chunks] if rank == 0 else None, src=0)
        dist.scatter(out_c, [c.clone() for c in chunks] if rank == 0 else None, src=0, group=gloo)
        check(f"scatter {dtype}", out_d, out_c)
        g_d = [torch.empty_like(x, device="tpu") for _ in range(world)] if rank == 0 else None
        g_c = [torch.empty_like(x) for _ in range(world)] if rank == 0 else None
        dist.gather(x.to("tpu"), g_d, dst=0)
        dist.gather(x, g_c, dst=0, group=gloo)
        if rank == 0:
            check(f"gather {dtype}", torch.stack(g_d), torch.stack(g_c))
        a2a_d = torch.empty_like(full, device="tpu")
        a2a_c = torch.empty_like(full)
        dist.all_to_all_single(a2a_d, full.to("tpu"))
        dist.all_to_all_single(a2a_c, full, group=gloo)
        check(f"all_to_all_single {dtype}", a2a_d, a2a_c)
        # uneven splits: rank r sends r + 1 rows to each peer
        send = _data(((rank + 1) * world, 5), dtype, rank, salt + 20)
        in_splits = [rank + 1] * world
        out_splits = [r + 1 for r in range(world)]
        u_d = torch.empty((sum(out_splits), 5), dtype=dtype, device="tpu")
        u_c = torch.empty((sum(out_splits), 5), dtype=dtype)
        dist.all_to_all_single(u_d, send.to("tpu"), out_splits, in_splits)
        dist.all_to_all_single(u_c, send, out_splits, in_splits, group=gloo)
        check(f"all_to_all_single uneven {dtype}", u_d, u_c)
        if rank == 0:
            for peer in range(1, world):
                dist.send(x.to("tpu"), dst=peer)
        else:
            got = torch.empty_like(x, device="tpu")
            dist.recv(got, src=0)
            check(f"send/recv {dtype}", got, _data((6, 5), dtype, 0, salt))
    dist.barrier(device_ids=[0])
    # A tpu_dist group serves CPU tensors too (object collectives, launchers).
    c = torch.full((3,), float(rank + 1))
    dist.all_reduce(c)
    check("cpu tensor all_reduce", c, torch.full((3,), float(sum(range(1, world + 1)))))
    objs = [None] * world
    dist.all_gather_object(objs, {"rank": rank})
    if objs != [{"rank": r} for r in range(world)]:
        failures.append(f"all_gather_object {objs}")
    # functional collectives (what DTensor and compiled graphs use)
    import torch.distributed._functional_collectives as fc
    x = _data((4, 3), torch.float32, rank, 99)
    c = x.clone()
    dist.all_reduce(c, group=gloo)
    if world > 2:
        c = _ordered_sum([_data((4, 3), torch.float32, r, 99) for r in range(world)])
    check("functional all_reduce", fc.all_reduce(x.to("tpu"), "sum", dist.group.WORLD), c)
    cat = torch.empty((world * 4, 3))
    dist.all_gather_into_tensor(cat, x, group=gloo)
    check("functional all_gather_tensor", fc.all_gather_tensor(x.to("tpu"), 0, dist.group.WORLD), cat)
    return {"failures": failures, "checked": checked, "stats": torch_pjrt.distributed.stats()}


_seeding = threading.Lock()  # ranks as threads share the global generator


def _llama(seed=0):
    from transformers import LlamaConfig, LlamaForCausalLM
    with _seeding:
        torch.manual_seed(seed)
        cfg = LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                          num_key_value_heads=2, vocab_size=96, max_position_embeddings=32)
        return LlamaForCausalLM(cfg)


def _batches(world, steps=20):
    g = torch.Generator().manual_seed(7)
    return [torch.randint(0, 96, (2 * world, 12), generator=g) for _ in range(steps)]


def _train(model, batches, pick):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for ids in batches:
        ids = pick(ids).to("tpu")
        loss = model(ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.detach())
    return losses


def _global_losses(losses, world):
    out = []
    for loss in losses:
        t = loss.clone()
        dist.all_reduce(t)
        out.append(float(t.cpu()) / world)
    return out


def data_parallel(rank, world, wrap):
    """Each rank trains on its slice of the global batch; the reference is
    one model trained on the whole batch in this rank. Besides the global
    losses, this rank's parameters after training against the reference's
    (FSDP's gathered whole)."""
    batches = _batches(world)
    one = _llama().to("tpu")
    reference = [float(x.cpu()) for x in _train(one, batches, lambda b: b)]
    model = wrap(_llama().to("tpu"))
    mine = _train(model, batches, lambda b: b.chunk(world)[rank])
    params = []
    for p, q in zip(model.parameters(), one.parameters()):
        p = p.full_tensor() if hasattr(p, "full_tensor") else p
        params.append(float((p.detach().cpu() - q.detach().cpu()).abs().max()))
    return {"reference": reference, "parallel": _global_losses(mine, world), "param_max_diff": max(params),
            "stats": torch_pjrt.distributed.stats()}


def ddp(rank, world):
    from torch.nn.parallel import DistributedDataParallel as DDP
    return data_parallel(rank, world, lambda m: DDP(m))


def fsdp2(rank, world):
    from torch.distributed.fsdp import fully_shard

    def wrap(m):
        for layer in m.model.layers:
            fully_shard(layer)
        return fully_shard(m)
    return data_parallel(rank, world, wrap)


def dtensor(rank, world):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor
    mesh = init_device_mesh("tpu", (world,))
    results = {}
    for shape, dim in (((8, 6), 0), ((7, 5), 1), ((9, 4), 0)):
        full = _data(shape, torch.float32, 0, 5)  # the same on every rank
        d = distribute_tensor(full.to("tpu"), mesh, [Shard(dim)])
        back = d.redistribute(mesh, [Replicate()]).to_local()
        results[f"{shape} shard {dim}"] = _same(back, full) and d.to_local().device.type == "tpu"
        results[f"{shape} full_tensor"] = _same(d.full_tensor(), full)
    return {"round_trips": results}


def async_work(rank, world):
    """Collectives with async_op=True: rank 1 joins late, so rank 0's call
    must return before the exchange can end, and wait() brings the result."""
    out = {}
    x = torch.full((5,), float(rank + 1), device="tpu")
    if rank == 1:
        time.sleep(2.0)
    t0 = time.perf_counter()
    work = dist.all_reduce(x, async_op=True)
    out["call_seconds"] = time.perf_counter() - t0
    out["completed_at_return"] = work.is_completed()
    work.wait()
    out["completed_after_wait"] = work.is_completed()
    out["all_reduce"] = x.cpu().tolist()
    # The future completes with the results (what DDP's reducer chains on).
    y = torch.full((2, 3), float(rank), device="tpu")
    fut = dist.all_reduce(y, op=dist.ReduceOp.AVG, async_op=True).get_future()
    out["future_value"] = [t.cpu().tolist() for t in fut.wait()]
    # Several in flight at once, waited in reverse order.
    xs = [torch.full((3,), float(i + rank), device="tpu") for i in range(4)]
    works = [dist.all_reduce(t, async_op=True) for t in xs]
    for w in reversed(works):
        w.wait()
    out["in_flight"] = [t.cpu().tolist() for t in xs]
    out["stats"] = torch_pjrt.distributed.stats()
    return out


def peer_dies(rank, world):
    if rank == 1:
        os._exit(0)  # gone before the collective its peer waits in
    t0 = time.perf_counter()
    try:
        dist.all_reduce(torch.ones(4, device="tpu"))
        return {"raised": None, "seconds": time.perf_counter() - t0}
    except Exception as e:  # noqa: BLE001  (the test reads the message)
        return {"raised": f"{type(e).__name__}: {e}"[:500], "seconds": time.perf_counter() - t0}


def tp_plan(path, out, ep_size=1):
    """Under torchrun: transformers makes the process group (tpu_dist, its
    name for the device) and shards the model over it (and its experts,
    with ep_size > 1)."""
    from transformers import AutoModelForCausalLM
    from transformers.distributed import DistributedConfig
    ids = torch.randint(0, 128, (2, 9), generator=torch.Generator().manual_seed(3))
    config = DistributedConfig(tp_plan="auto", ep_size=ep_size) if ep_size > 1 else DistributedConfig(tp_plan="auto")
    model = AutoModelForCausalLM.from_pretrained(path, distributed_config=config)
    with torch.no_grad():
        logits = model(ids.to(model.device)).logits
    if hasattr(logits, "full_tensor"):
        logits = logits.full_tensor()
    sharded = type(model.lm_head.weight).__name__ == "DTensor"
    experts = getattr(model.model.layers[0].mlp, "experts", None)
    local = getattr(experts, "gate_up_proj", None) if experts is not None else None
    if local is not None and hasattr(local, "to_local"):
        local = local.to_local()
    experts_here = int(local.shape[0]) if local is not None else None
    rank = int(os.environ["RANK"])
    reference = AutoModelForCausalLM.from_pretrained(path)
    with torch.no_grad():
        expected = reference(ids).logits
    with open(out if rank == 0 else f"{out}.rank{rank}", "w") as f:
        json.dump({"max_diff": float((logits.cpu() - expected).abs().max()), "sharded": sharded,
                   "experts_here": experts_here,
                   "backend": dist.get_backend(), "device": str(model.device),
                   "stats": torch_pjrt.distributed.stats()}, f)
    dist.destroy_process_group()


def device_work(rank, world):
    """The Work of a device-transport collective: complete once its replica
    has finished, its future holding the results."""
    x = torch.full((1 << 16,), float(rank + 1), device="tpu")
    work = dist.all_reduce(x, async_op=True)
    work.wait()
    out = {"completed_after_wait": work.is_completed(), "success": work.is_success(),
           "all_reduce": x[:3].cpu().tolist()}
    y = torch.full((2, 3), float(rank), device="tpu")
    fut = dist.all_reduce(y, op=dist.ReduceOp.AVG, async_op=True).get_future()
    out["future_value"] = [t.cpu().tolist() for t in fut.wait()]
    chained = dist.all_reduce(torch.ones(4, device="tpu"), async_op=True).get_future().then(
        lambda f: f.value()[0] * 10)
    out["chained"] = chained.wait().cpu().tolist()
    out["stats"] = torch_pjrt.distributed.stats()
    return out


def member_missing(rank, world):
    """Rank 1 never joins the collective rank 0 waits in: rank 0 gets an
    error after the group's timeout, and the process goes on."""
    if rank == 1:
        return {}
    t0 = time.perf_counter()
    try:
        dist.all_reduce(torch.ones(4, device="tpu"))
        raised = None
    except Exception as e:  # noqa: BLE001  (the test reads the message)
        raised = f"{type(e).__name__}: {e}"[:500]
    return {"raised": raised, "seconds": time.perf_counter() - t0,
            "after": (torch.ones(3, device="tpu") * 2).cpu().tolist()}


def threads(scenario, world, out):
    """Every rank a thread of this process, on its own device, each with its
    own default group (c10d's thread-local world, as its multi-threaded
    tests use)."""
    import traceback
    from torch.testing._internal.distributed import multi_threaded_pg
    # torch 2.11's destroy_process_group reads the world's `comms` (torchcomms
    # communicators to finalize), which the thread-local world of its own
    # testing module does not have; later releases give it one. None here.
    if not hasattr(multi_threaded_pg.ThreadLocalWorld, "comms"):
        multi_threaded_pg.ThreadLocalWorld.comms = property(lambda self: [])
    multi_threaded_pg._install_threaded_pg()
    torch._C._distributed_c10d._set_thread_isolation_mode(True)
    store = dist.HashStore()
    timeout = datetime.timedelta(seconds=float(os.environ.get("DIST_TIMEOUT", "120")))
    results, errors = {}, []
    if scenario in ("ddp", "fsdp2"):
        # transformers resolves its names lazily, which two threads at once can race
        from transformers import LlamaConfig, LlamaForCausalLM  # noqa: F401

    def member(rank):
        try:
            torch.tpu.set_device(rank)
            dist.init_process_group("tpu_dist", store=store, rank=rank, world_size=world, timeout=timeout)
            results[rank] = globals()[scenario](rank, world)
            dist.destroy_process_group()
        except BaseException:  # noqa: BLE001  (reported to the test)
            errors.append(traceback.format_exc()[-3000:])

    members = [threading.Thread(target=member, args=(r,)) for r in range(world)]
    for m in members:
        m.start()
    for m in members:
        m.join()
    with open(out, "w") as f:
        json.dump({**results.get(0, {}), "ranks": [results.get(r) for r in range(world)], "errors": errors,
                   "devices": torch.tpu.device_count()}, f)


def main():
    if sys.argv[1] == "tp_plan":
        return tp_plan(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    if sys.argv[1] == "threads":
        return threads(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    scenario, rank, world, store, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    timeout = datetime.timedelta(seconds=float(os.environ.get("DIST_TIMEOUT", "120")))
    dist.init_process_group("tpu_dist" if scenario != "default_backend" else None, rank=rank, world_size=world,
                            init_method=f"file://{store}", timeout=timeout)
    if scenario == "default_backend":
        t = torch.ones(3, device="tpu") * (rank + 1)
        dist.all_reduce(t)  # as with CUDA, the accelerator's backend alone
        result = {"backend": dist.get_backend_config(), "tpu": t.cpu().tolist(),
                  "stats": torch_pjrt.distributed.stats()}
    else:
        result = globals()[scenario](rank, world)
    with open(out, "w") as f:
        json.dump(result, f)
    if scenario != "peer_dies":
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
