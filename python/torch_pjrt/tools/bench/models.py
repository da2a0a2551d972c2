"""The Llama-style models the eager and compiled benchmarks run, built
from their configs (no download)."""
import torch

MODELS = {
    # the command line checked end to end in the test suite
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2,
                 num_key_value_heads=1, vocab_size=256, max_position_embeddings=128),
    # fast enough for a 2-core machine
    "small": dict(hidden_size=256, intermediate_size=704, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, vocab_size=4096, max_position_embeddings=512),
    # the "Bench Llama" of PERFORMANCE.md (44.6 M parameters)
    "bench-llama": dict(hidden_size=512, intermediate_size=1408, num_hidden_layers=4, num_attention_heads=8,
                        num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048),
}


def model(cfg):
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(**cfg, pad_token_id=0))
