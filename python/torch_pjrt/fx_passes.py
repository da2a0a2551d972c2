"""Rewrites of the ATen graphs the tpu backend compiles (compiler.py runs
them before tracing), each shaped by the models it serves; the graphs
compute the same values after them:

- weights_in_dot_layout: on XLA:CPU, inference weights that feed matmuls
  of many rows, and the MoE kernel's expert tensors, are read from copies
  in the layout its dot is fastest with (see _dot_layout.py);
- sdpa_reads_kv_heads: attention reads grouped-query keys and values
  without transformers' `repeat_kv` copy.
"""
import torch

from . import _dot_layout


def weights_in_dot_layout(gm):
    """Serves each inference-graph weight that only feeds matmuls of many
    rows as x @ W.T, and the MoE kernel's expert tensors, from an [in, out]
    copy: a new graph input, filled at each call from the copy made for that
    weight. The graph computes the
    same values; only which buffer the matmul reads changes. Returns the
    positions of the weights whose copies the caller appends, in order,
    each with the function making its copy."""
    mm_rhs = {torch.ops.aten.mm.default: 1, torch.ops.aten.addmm.default: 2}

    def is_transpose(n):  # of a 2-D value
        return n.target is torch.ops.aten.t.default or (
            n.target is torch.ops.aten.permute.default and [d % 2 for d in n.args[1]] == [1, 0])

    def many_row_rhs(t, u):
        k = mm_rhs.get(u.target)
        return k is not None and len(u.args) > k and u.args[k] is t and \
            u.args[k - 1].meta["val"].shape[0] >= _dot_layout.MIN_ROWS

    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    static, last, copies, makers = _static_inputs(), placeholders[-1], {}, {}
    for i, ph in enumerate(placeholders):
        v = ph.meta.get("val")
        if i not in static or not isinstance(v, torch.Tensor) or v.dim() != 2 or v.device.type != "tpu":
            continue
        for t in list(ph.users):
            if not is_transpose(t) or not t.users or not all(many_row_rhs(t, u) for u in t.users):
                continue
            if i not in copies:
                with gm.graph.inserting_after(last):
                    last = copies[i] = gm.graph.placeholder(f"{ph.name}_in_out")
                last.meta["val"] = v.new_empty((v.shape[1], v.shape[0]))
            t.replace_all_uses_with(copies[i])
            gm.graph.erase_node(t)
    # The MoE kernel's expert tensors, [experts, out, in], read as [experts,
    # in, out] (the op's in_out form) when both are static inputs; f32 ones
    # whose output features fill whole panels in the native grouped kernel's
    # panel form (4-D), where programs can call it.
    moe = torch.ops.torch_pjrt.moe_experts.default
    for u in list(gm.graph.nodes):
        if u.target is not moe or len(u.args) > 6 and u.args[6] or u.kwargs.get("in_out"):
            continue
        pos = [placeholders.index(w) if w in placeholders else None for w in u.args[3:5]]
        if any(p is None or p not in static for p in pos):
            continue
        vals = [placeholders[p].meta["val"] for p in pos]
        panels = _dot_layout.native_functions() and all(
            v.dtype == torch.float32 and v.shape[1] % _dot_layout.HOST_PANEL == 0 for v in vals)
        for p, v in zip(pos, vals):
            if p not in copies:
                with gm.graph.inserting_after(last):
                    last = copies[p] = gm.graph.placeholder(f"{placeholders[p].name}_{'panels' if panels else 'in_out'}")
                e, n, k = v.shape
                if panels:
                    last.meta["val"] = v.new_empty((e, n // _dot_layout.HOST_PANEL, k, _dot_layout.HOST_PANEL))
                    makers[p] = _dot_layout.host_panels
                else:
                    last.meta["val"] = v.new_empty((e, k, n))
        u.args = (*u.args[:3], copies[pos[0]], copies[pos[1]], u.args[5], True)
    if copies:
        gm.graph.lint()
        gm.recompile()
    return [(p, makers.get(p, _dot_layout.in_out)) for p in copies]


def sdpa_reads_kv_heads(gm) -> int:
    """Lets attention read grouped-query keys and values as they are stored.

    transformers repeats each key/value head for its group of query heads
    (`repeat_kv`: unsqueeze, expand, clone, reshape) before SDPA whenever it
    compiles, and XLA then writes that copy of the whole KV cache in every
    layer and step: [batch, query heads, cache length, head dim] twice,
    which grows with the cache and, for a static cache, keeps its update
    from being done in place. The tpu SDPA takes fewer key/value heads than
    query heads as they are (each serves its group), so the repeat is
    dropped from its inputs: the same values, computed without the copy.
    Returns the number of attention calls rewritten."""
    aten = torch.ops.aten
    sdpa = aten._scaled_dot_product_fused_attention_overrideable.default

    def static_shape(n):
        v = n.meta.get("val") if isinstance(n, torch.fx.Node) else None
        return list(v.shape) if isinstance(v, torch.Tensor) and all(isinstance(d, int) for d in v.shape) else None

    def unrepeated(n):
        """(x, chain) when n is x[:, :, None].expand(B, H, G, L, D) made
        contiguous and reshaped to [B, H * G, L, D]."""
        if not isinstance(n, torch.fx.Node) or n.target not in (aten._unsafe_view.default, aten.view.default,
                                                                 aten.reshape.default):
            return None
        chain = [n]
        e = n.args[0]
        if isinstance(e, torch.fx.Node) and e.target is aten.clone.default:
            chain.append(e)
            e = e.args[0]
        if not isinstance(e, torch.fx.Node) or e.target is not aten.expand.default:
            return None
        u = e.args[0]
        if not isinstance(u, torch.fx.Node) or u.target is not aten.unsqueeze.default or u.args[1] != 2:
            return None
        x = u.args[0]
        xs, es, ns = static_shape(x), static_shape(e), static_shape(n)
        if xs is None or es is None or ns is None or len(xs) != 4:
            return None
        b, h, length, d = xs
        if es != [b, h, es[2], length, d] or ns != [b, h * es[2], length, d]:
            return None
        return x, chain + [e, u]

    rewritten = 0
    for node in list(gm.graph.nodes):
        if node.target is not sdpa or len(node.args) < 3:
            continue
        k, v = unrepeated(node.args[1]), unrepeated(node.args[2])
        if k is None or v is None:
            continue
        node.args = (node.args[0], k[0], v[0], *node.args[3:])
        for dead in k[1] + v[1]:
            if not dead.users:
                gm.graph.erase_node(dead)
        rewritten += 1
    if rewritten:
        gm.graph.lint()
        gm.recompile()
    return rewritten


def _static_inputs():
    """Positions of the graph inputs AOTAutograd knows as parameters or
    buffers (the same tensors at every call)."""
    try:
        from torch._guards import TracingContext
        ctx = TracingContext.try_get()
        meta = ctx.fw_metadata if ctx is not None else None
        return set(meta.static_input_indices) if meta is not None else set()
    except Exception:  # noqa: BLE001  (no tracing context: nothing is known static)
        return set()
