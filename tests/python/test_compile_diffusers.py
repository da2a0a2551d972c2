"""A tiny seeded StableDiffusionPipeline built from configs (nothing
downloaded) with its UNet compiled by the tpu backend."""
import pytest
import torch

import torch_pjrt.compiler
from conftest import TPU

diffusers = pytest.importorskip("diffusers")
transformers = pytest.importorskip("transformers")


def _pipe():
    from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel
    torch.manual_seed(0)
    unet = UNet2DConditionModel(
        block_out_channels=(32, 64), layers_per_block=1, sample_size=16, in_channels=4, out_channels=4,
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32, attention_head_dim=8, norm_num_groups=8)
    vae = AutoencoderKL(
        block_out_channels=[32, 64], in_channels=3, out_channels=3, down_block_types=["DownEncoderBlock2D"] * 2,
        up_block_types=["UpDecoderBlock2D"] * 2, latent_channels=4, norm_num_groups=8)
    text = CLIPTextModel(CLIPTextConfig(hidden_size=32, intermediate_size=37, num_attention_heads=4,
                                        num_hidden_layers=2, vocab_size=1000))
    sched = DDIMScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", clip_sample=False,
                          set_alpha_to_one=False)
    return StableDiffusionPipeline(vae=vae, text_encoder=text, tokenizer=None, unet=unet, scheduler=sched,
                                   safety_checker=None, feature_extractor=None, requires_safety_checker=False)


def _image(pipe, device):
    torch.manual_seed(1)
    embeds, negative = torch.randn(1, 8, 32).to(device), torch.randn(1, 8, 32).to(device)
    return pipe(prompt_embeds=embeds, negative_prompt_embeds=negative, num_inference_steps=4,
                guidance_scale=5.0, height=32, width=32, output_type="pt",
                generator=torch.Generator().manual_seed(0)).images.cpu()


# Measured: the tpu's image differs from the CPU's by up to ~1e-6, eager or
# compiled (pixels in [0, 1], after 4 UNet steps and the VAE decoder).
TOL = 2e-5


def test_compiled_unet_matches_the_cpu_and_is_traced_once_for_all_steps():
    torch._dynamo.reset()
    cpu = _pipe()
    cpu.set_progress_bar_config(disable=True)
    want = _image(cpu, "cpu")
    pipe = _pipe().to(TPU)
    pipe.set_progress_bar_config(disable=True)
    eager = _image(pipe, TPU)
    torch.testing.assert_close(eager, want, rtol=0, atol=TOL)
    pipe.unet = torch.compile(pipe.unet, backend="tpu")
    programs = torch_pjrt.compiler.stats["programs"]
    got = _image(pipe, TPU)
    torch.testing.assert_close(got, want, rtol=0, atol=TOL)
    # Each step's timestep is a view of the scheduler's timesteps at another
    # offset; it is passed by value, so one program serves every step.
    assert torch_pjrt.compiler.stats["programs"] - programs == 1
    got = _image(pipe, TPU)  # a second image traces nothing new
    torch.testing.assert_close(got, want, rtol=0, atol=TOL)
    assert torch_pjrt.compiler.stats["programs"] - programs == 1
