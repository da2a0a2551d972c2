// Everything the engine and the op families do differently by platform,
// decided in one table (policy_for) and read through platform_policy():
// nowhere else asks which plugin runs. Each field says in one line why it
// differs and which bench in the repository measures it; the Python layer
// reads the same policy (torch_pjrt._platform).
#pragma once

#include <optional>

#include "pjrt/platform.h"

namespace engine {

struct PlatformPolicy {
  pjrt::Platform platform = pjrt::Platform::Other;
  // float64 / complex128 held: TPUs have neither, and their dtypes raise a
  // clear TypeError instead of computing in 32 bits.
  bool f64 = true;
  // bfloat16 computed natively, not in float32 and rounded as XLA:CPU does.
  bool native_bf16 = false;
  // Buffers are host memory: host reads and writes touch them in place.
  bool host_memory = false;
  // Programs may call our native functions (engine::add_native_function):
  // XLA:CPU runs custom calls on the host; elsewhere ops keep their
  // StableHLO lowerings.
  bool host_functions = false;
  // Weights of many-row matmuls are read from a dense [in, out] copy, and
  // MoE experts from host panels: XLA:CPU's dot takes x @ W.T at about half
  // the speed of x @ W (`python -m torch_pjrt bench --moe`, and the bench
  // Llama's prefill); other plugins choose layouts themselves.
  bool weight_copies = false;
  // XNNPACK off unless XLA_FLAGS chooses: it repacks the weight at every
  // matmul, slower than XLA:CPU's own dots (`python -m torch_pjrt bench`:
  // fused training step and batch-64 decode).
  bool xnnpack_off = false;
  // Small programs compile lighter (Runtime's compile tiers): XLA:CPU
  // spends most of a small program's compile setting up its fusion
  // emitters (an MLIR context and pattern sets per fusion), and its classic
  // emitters build code as fast to run on a few thousand elements: 46 ->
  // 28 ms per program, same bits except a last one of erf (compile counts
  // and seconds: cache_stats(); `python -m torch_pjrt bench --cold`). The
  // lowest optimization level on top (opt-in) saves half again but runs
  // 3x slower past a few thousand elements and rounds tanh and rsqrt
  // differently.
  bool quick_small_compiles = false;
};

// The policy of a platform (a pure table: starts nothing).
const PlatformPolicy& policy_for(pjrt::Platform p);

// The running plugin's policy (starts the runtime on first call), or the
// override's. The override applies another platform's rules (e.g. Tpu: no
// float64) on any plugin, for tests; host functions stay off under it.
const PlatformPolicy& platform_policy();
void set_platform_override(std::optional<pjrt::Platform> p);
bool platform_overridden();

}  // namespace engine
