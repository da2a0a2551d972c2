"""torch_pjrt demo: a tiny Llama-style model (random weights, built from a
config, nothing downloaded) generates text greedily on the `tpu` device and
trains a few steps, each printed beside the same run on the CPU."""
import copy
import time

import torch
import torch_pjrt
from transformers import LlamaConfig, LlamaForCausalLM


def main():
    info = torch_pjrt.runtime_info()
    print(f"tpu device: {info['platform']} via PJRT {info['pjrt_api_version']} "
          f"({info['device_count']} device(s), plugin {info['plugin_path']})")
    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, vocab_size=512,
                         max_position_embeddings=256, pad_token_id=0)
    cpu_model = LlamaForCausalLM(config).eval()
    tpu_model = copy.deepcopy(cpu_model).to("tpu")
    prompt = torch.randint(1, config.vocab_size, (1, 8))

    print("\n== greedy generation, 20 new tokens")
    t0 = time.perf_counter()
    cpu_out = cpu_model.generate(prompt, max_new_tokens=20, do_sample=False)
    t1 = time.perf_counter()
    tpu_out = tpu_model.generate(prompt.to("tpu"), max_new_tokens=20, do_sample=False)
    t2 = time.perf_counter()
    print(f"cpu: {cpu_out[0, 8:].tolist()}  ({t1 - t0:.2f}s)")
    print(f"tpu: {tpu_out[0, 8:].cpu().tolist()}  ({t2 - t1:.2f}s, compiles included)")
    print("identical:", torch.equal(cpu_out, tpu_out.cpu()))

    print("\n== training: 5 AdamW steps, batch 4, sequence 32")
    cpu_model.train()
    tpu_model.train()
    opt_c = torch.optim.AdamW(cpu_model.parameters(), lr=1e-3)
    opt_t = torch.optim.AdamW(tpu_model.parameters(), lr=1e-3)
    for step in range(5):
        ids = torch.randint(1, config.vocab_size, (4, 32))
        loss_c = cpu_model(ids, labels=ids).loss
        loss_c.backward()
        opt_c.step()
        opt_c.zero_grad()
        loss_t = tpu_model(ids.to("tpu"), labels=ids.to("tpu")).loss
        loss_t.backward()
        opt_t.step()
        opt_t.zero_grad()
        print(f"step {step}: loss cpu {loss_c.item():.6f}   tpu {loss_t.item():.6f}")

    print("\n== one more tpu step under torch.profiler: the ops with the most device time")
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        loss_t = tpu_model(ids.to("tpu"), labels=ids.to("tpu")).loss
        loss_t.backward()
        opt_t.step()
        opt_t.zero_grad()
        loss_t.item()
    print(prof.key_averages().table(sort_by="device_time_total", row_limit=6))

    stats = torch_pjrt.cache_stats()
    print(f"\ncompiled programs: {stats['misses']} ({stats['compile_seconds']:.1f}s), cache hits: {stats['hits']}")
    fb = torch_pjrt.fallback_stats()
    print("ops that ran on the CPU fallback:", fb if fb else "none")


if __name__ == "__main__":
    main()
