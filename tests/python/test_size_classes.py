"""Size classes: tensors grown by appending (a KV cache, an attention mask,
generated ids) are stored padded to their length's size class, so the
programs that grow and read them serve every length of a class. Every value
here is compared with PyTorch on the CPU, and the program counts show that
lengths of one class share programs while the user sees no padding."""
import pytest
import torch
import torch.nn.functional as F

import torch_pjrt
from conftest import TPU, assert_close

C = torch_pjrt._C


def misses():
    torch.tpu.synchronize()
    return torch_pjrt.cache_stats()["misses"]


@pytest.fixture
def classes():
    """Classes on with the default smallest class, restored after."""
    before = C._size_class(1)
    C._set_smallest_size_class(64)
    yield
    C._set_smallest_size_class(before)


def test_size_class_policy(classes):
    assert [C._size_class(n) for n in (1, 63, 64, 65, 128, 129, 1000)] == [64, 64, 64, 128, 128, 256, 1024]
    # Padding costs at most the content or 1 MiB: wide rows get smaller classes,
    # never smaller than the length.
    row = 64 << 10
    assert [C._size_class(n, row) for n in (1, 5, 16, 17, 40)] == [16, 16, 32, 32, 64]
    C._set_smallest_size_class(0)
    assert C._size_class(10) == 0


def _grow(dev, start, steps, shape_of, dim, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    def rand(shape):
        if dtype.is_floating_point:
            return torch.randn(shape, generator=g).to(dtype)
        return torch.randint(-9, 9, shape, generator=g).to(dtype)
    x = rand(shape_of(start)).to(dev)
    seen = []
    for _ in range(steps):
        x = torch.cat([x, rand(shape_of(1)).to(dev)], dim)
        seen.append(x)
    return seen


@pytest.mark.parametrize("dim,shape_of", [
    (1, lambda n: (1, n)),                 # a mask / generated ids: padded at the end
    (2, lambda n: (1, 3, n, 4)),           # a KV cache: padded inside each head's rows
    (0, lambda n: (n, 5)),
])
def test_appending_cat_equals_the_cpus_and_shares_programs(classes, dim, shape_of):
    cpu = _grow("cpu", 5, 40, shape_of, dim)
    tpu = _grow(TPU, 5, 40, shape_of, dim)
    for a, b in zip(tpu, cpu):
        assert a.shape == b.shape and a.stride() == b.stride() and a.is_contiguous()
        assert_close(a, b)
    # Lengths 66..80 are one class: after a first append step (its program,
    # or in fused mode a step's program), later steps compile nothing.
    x = torch.cat([tpu[-1], torch.randn(shape_of(20)).to(TPU)], dim)
    misses()

    def step(x):
        x = torch.cat([x, torch.randn(shape_of(1)).to(TPU)], dim)
        x = torch.cat([x, torch.randn(shape_of(1)).to(TPU)], dim)
        misses()
        return x
    x = step(x)
    before = misses()
    for _ in range(5):
        x = step(x)
    assert misses() == before


def test_cache_stats_count_compiles_per_class(classes):
    torch_pjrt.reset_cache_stats()
    x = torch.randn(1, 5).to(TPU)
    for _ in range(100):  # lengths 6..105: classes 64 and 128
        x = torch.cat([x, torch.randn(1, 1).to(TPU)], 1)
        x.sum()
    torch.tpu.synchronize()
    st = torch_pjrt.cache_stats()
    assert st["size_class_compiles"] and set(st["size_class_compiles"]) <= {64, 128}
    assert sum(st["size_class_compiles"].values()) <= 8
    assert all(v >= 0 for v in st["size_class_compile_seconds"].values())


def test_views_writes_and_host_copies_of_a_padded_tensor(classes):
    cpu = _grow("cpu", 3, 20, lambda n: (1, n), 1)[-1].clone()
    tpu = _grow(TPU, 3, 20, lambda n: (1, n), 1)[-1]
    for f in [lambda t: t[:, -1:], lambda t: t[:, 5], lambda t: t[0, 2:9:3], lambda t: t.t(), lambda t: t[0],
              lambda t: t.view(torch.int32), lambda t: t.reshape(23, 1) * 2, lambda t: t.flip(1)]:
        assert_close(f(tpu), f(cpu))
    assert tpu.tolist() == cpu.tolist()
    assert tpu[0, 4].item() == cpu[0, 4].item()
    # In-place writes through views and on the whole tensor.
    for f in [lambda t: t[:, 2].fill_(7), lambda t: t.add_(1), lambda t: t[0, ::2].mul_(-1)]:
        f(tpu), f(cpu)
        assert_close(tpu, cpu)
    # Appending after in-place writes.
    assert_close(torch.cat([tpu, tpu[:, :1]], 1), torch.cat([cpu, cpu[:, :1]], 1))


def test_views_of_a_padded_kv_cache(classes):
    cpu = _grow("cpu", 4, 9, lambda n: (2, 3, n, 4), 2)[-1]
    tpu = _grow(TPU, 4, 9, lambda n: (2, 3, n, 4), 2)[-1]
    for f in [lambda t: t[:, :, -1], lambda t: t[1], lambda t: t.transpose(1, 2), lambda t: t[..., 1:3],
              lambda t: t.flatten(), lambda t: t.permute(3, 2, 1, 0).contiguous()]:
        assert_close(f(tpu), f(cpu))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_whole_reductions_of_a_padded_tensor(classes, dtype):
    def grow(dev):
        x = torch.tensor([[1, 0, 2]], dtype=dtype).to(dev) if dtype != torch.float32 else torch.randn(
            1, 3, generator=torch.Generator().manual_seed(3)).to(dev)
        for i in range(30):
            x = torch.cat([x, x[:, i:i + 1]], 1)
        return x
    cpu, tpu = grow("cpu"), grow(TPU)
    fns = [torch.sum, torch.all, torch.any, lambda t: t.sum(dim=(0, 1), keepdim=True)]
    if dtype != torch.bool:
        fns += [torch.amax, torch.amin, lambda t: torch.prod(t.clamp(-1, 1))]
    for f in fns:
        assert_close(f(tpu), f(cpu))


def test_reductions_keep_nan_and_the_padding_is_never_read(classes):
    cpu = torch.full((1, 2), 3.0)
    tpu = cpu.to(TPU)
    for i in range(20):
        piece = torch.tensor([[float("nan") if i == 7 else -float(i)]])
        cpu, tpu = torch.cat([cpu, piece], 1), torch.cat([tpu, piece.to(TPU)], 1)
    for f in [torch.sum, torch.amax, torch.amin, torch.prod]:
        assert_close(f(tpu), f(cpu))
    # Padding holds zeros: a product or an all() that read it would be 0 / False.
    ones = torch.ones(1, 3, dtype=torch.bool, device=TPU)
    for _ in range(5):
        ones = torch.cat([ones, torch.ones(1, 1, dtype=torch.bool, device=TPU)], 1)
    assert bool(ones.all()) and int(ones.sum()) == 8


def test_copies_keep_the_class(classes):
    cpu = _grow("cpu", 2, 12, lambda n: (1, n), 1, dtype=torch.int64)
    tpu = _grow(TPU, 2, 12, lambda n: (1, n), 1, dtype=torch.int64)
    for a, b in zip(tpu, cpu):
        assert_close(a.to(torch.bool), b.to(torch.bool))
        assert_close(a.float().clone(), b.float().clone())
    before = misses()
    for a in tpu[3:]:
        a.to(torch.bool).sum()
    assert misses() - before <= 0


def test_attention_over_a_padded_kv_cache(classes):
    g = torch.Generator().manual_seed(5)
    k0, v0 = torch.randn(1, 2, 6, 8, generator=g), torch.randn(1, 2, 6, 8, generator=g)
    kt, vt = k0.to(TPU), v0.to(TPU)
    kc, vc = k0, v0
    for step in range(70):  # crosses the class boundary at 64
        k1, v1 = torch.randn(1, 2, 1, 8, generator=g), torch.randn(1, 2, 1, 8, generator=g)
        kc, vc = torch.cat([kc, k1], 2), torch.cat([vc, v1], 2)
        kt, vt = torch.cat([kt, k1.to(TPU)], 2), torch.cat([vt, v1.to(TPU)], 2)
        if step % 9 == 0 or step > 60:
            q = torch.randn(1, 4, 1, 8, generator=g)
            ref = F.scaled_dot_product_attention(q, kc, vc, enable_gqa=True)
            got = F.scaled_dot_product_attention(q.to(TPU), kt, vt, enable_gqa=True)
            assert_close(got, ref)
    # One more step inside the class compiles nothing.
    q = torch.randn(1, 4, 1, 8, generator=g).to(TPU)
    piece = torch.randn(1, 2, 1, 8, generator=g).to(TPU)
    misses()
    kt, vt = torch.cat([kt, piece], 2), torch.cat([vt, piece], 2)
    F.scaled_dot_product_attention(q, kt, vt, enable_gqa=True).sum().item()
    before = misses()
    kt, vt = torch.cat([kt, piece], 2), torch.cat([vt, piece], 2)
    F.scaled_dot_product_attention(q, kt, vt, enable_gqa=True).sum().item()
    assert misses() == before


def test_autograd_through_a_padded_tensor(classes):
    def run(dev):
        g = torch.Generator().manual_seed(2)
        w = torch.randn(1, 4, generator=g).to(dev).requires_grad_()
        x = w * 2
        for _ in range(6):
            x = torch.cat([x, torch.randn(1, 1, generator=g).to(dev)], 1)
        (x.sin() * torch.arange(10.0).to(dev)).sum().backward()
        return x.detach(), w.grad
    assert_close(run(TPU), run("cpu"))


def test_index_bounds_and_compiled_graphs_read_the_logical_values(classes):
    idx_c = torch.tensor([[0, 1]])
    idx_t = idx_c.to(TPU)
    for i in range(6):
        idx_c = torch.cat([idx_c, torch.tensor([[i % 3]])], 1)
        idx_t = torch.cat([idx_t, torch.tensor([[i % 3]]).to(TPU)], 1)
    src = torch.randn(3, 4)
    assert_close(src.to(TPU)[idx_t], src[idx_c])
    bad = torch.cat([idx_t, torch.tensor([[3]]).to(TPU)], 1)
    with pytest.raises(IndexError):
        src.to(TPU)[bad]
        torch.tpu.synchronize()
    f = torch.compile(lambda t: (t * 3).cumsum(1), backend="tpu")
    assert_close(f(idx_t), (idx_c * 3).cumsum(1))


def test_resizing_a_padded_storage(classes):
    cpu = _grow("cpu", 2, 10, lambda n: (1, n), 1)[-1].clone()
    tpu = _grow(TPU, 2, 10, lambda n: (1, n), 1)[-1]
    cpu.resize_(20), tpu.resize_(20)
    assert_close(tpu[:12], cpu[:12])


def test_classes_off_give_the_same_values(classes):
    on = [t.cpu() for t in _grow(TPU, 3, 8, lambda n: (2, n, 3), 1)]
    C._set_smallest_size_class(0)
    off = _grow(TPU, 3, 8, lambda n: (2, n, 3), 1)
    assert_close(off, on, atol=0, rtol=0)


def test_generate_compiles_one_program_set_per_class(classes):
    """A tiny Llama's generate(): tokens equal to the CPU's, and the decode
    steps of one class compile nothing new after the first."""
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, vocab_size=97, max_position_embeddings=256, pad_token_id=0)
    m = LlamaForCausalLM(cfg).eval()
    prompt = torch.randint(1, 97, (1, 5))

    def gen(model, p, n):
        with torch.no_grad():
            return model.generate(p, attention_mask=torch.ones_like(p), max_new_tokens=n, min_new_tokens=n,
                                  do_sample=False).cpu()

    ref = gen(m, prompt, 70)
    mt = m.to(TPU)
    assert torch.equal(gen(mt, prompt.to(TPU), 70), ref)
    # (A second call's prefill reads the weights' dense copies the first
    # made: programs of their own.)
    gen(mt, prompt.to(TPU), 70)
    # Fewer tokens, every length in classes already seen, ending in the
    # same class: nothing new, in every mode.
    before = misses()
    assert torch.equal(gen(mt, prompt.to(TPU), 66), ref[:, :71])
    assert misses() == before
