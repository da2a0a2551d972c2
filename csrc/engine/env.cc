// The environment table (see env.h).
#include "engine/env.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace engine::env {

const std::vector<Var>& all() {
  static const std::vector<Var> vars{
      {"TORCH_PJRT_PLUGIN", "tpu where libtpu finds chips, cuda where NVIDIA GPUs and an XLA:GPU plugin are, else cpu",
       "`cpu`, `tpu`, `cuda`, or a path to a PJRT plugin `.so`"},
      {"TORCH_PJRT_PLUGIN_PATH", "unset",
       "the plugin `.so` the C++ tests and benchmarks load (Python resolves "
       "`TORCH_PJRT_PLUGIN` instead)"},
      {"TORCH_PJRT_CPU_DEVICES", "1", "number of XLA:CPU devices"},
      {"TORCH_PJRT_EAGER_MODE", "strict", "initial eager mode (`strict`, `fused`, `debug`)"},
      {"TORCH_PJRT_FUSED_MAX_NODES", "4000", "pending ops after which fused mode flushes"},
      {"TORCH_PJRT_DONATE", "1", "`0` keeps every input buffer (no in-place reuse by programs)"},
      {"TORCH_PJRT_CACHE_DIR", "~/.cache/torch_pjrt", "persistent compilation cache directory (`off` disables)"},
      {"TORCH_PJRT_CACHE_ENTRIES", "1024",
       "programs kept loaded in memory (least recently used evicted; an evicted one reloads from the disk cache)"},
      {"TORCH_PJRT_CACHE_MAPPINGS", "half of vm.max_map_count",
       "the process's memory mappings past which loaded programs are evicted too (each maps its code in several)"},
      {"TORCH_PJRT_LIGHT_COMPILE_ELEMENTS", "16384",
       "XLA:CPU: programs whose largest array has at most this many elements compile with XLA:CPU's classic "
       "code emitters, about 40 % faster than its fusion emitters and as fast to run at that size (0: off; "
       "`--xla_cpu_use_fusion_emitters` in XLA_FLAGS stands for every program)"},
      {"TORCH_PJRT_QUICK_COMPILE_ELEMENTS", "0",
       "XLA:CPU: programs whose largest array has at most this many elements (1024 is a good choice) also compile "
       "at XLA's lowest optimization level, together about 3x faster than the default; they run slower past a "
       "few thousand elements, and some functions (tanh, rsqrt) may differ from the CPU's in a last bit (0: off)"},
      {"TORCH_PJRT_SIZE_CLASSES", "256",
       "the smallest size class: a tensor grown by appending (a KV cache, an attention mask, generated ids) is "
       "stored padded to the next power of two at least this (less where the padding would cost more than the "
       "tensor and over 1 MiB), so the programs that read and grow it serve every length of a class (0: off, "
       "every length compiles its own)"},
      {"TORCH_PJRT_LOG_RECOMPILES", "0", "log, for each compile, what differed from the nearest cached program"},
      {"TORCH_PJRT_DUMP_FAILED", "0", "print the StableHLO of a program that fails to compile"},
      {"TORCH_PJRT_EXIT_REPORT", "unset",
       "a folder: each process writes `<pid>.json` there at exit (CPU-fallback ops, ops per eager mode); the "
       "test suite checks its subprocesses this way"},
      {"TORCH_PJRT_TEST_SEED", "random", "tests: replay a run's random inputs (a failure prints its seed)"},
      {"TORCH_PJRT_TEST_REQUIRE", "unset", "tests: packages whose absence fails the run instead of skipping"},
      {"TORCH_PJRT_TEST_INSTALLED", "unset",
       "tests: the suite checks an installed torch_pjrt (a wheel), and fails if it imported the source tree's"},
      {"TORCH_PJRT_TEST_TORCH", "2.14.1",
       "tests: other torch releases `scripts/test.sh` builds and tests against after its passes (empty: none)"},
      {"TORCH_PJRT_TEST_MODES", "strict fused debug", "tests: the eager modes `scripts/test.sh` runs"},
      {"TORCH_PJRT_CONFORMANCE_OUT", "unset", "tests: where the conformance tests leave their reports"},
      {"TORCH_PJRT_CONFORMANCE_FAULTS", "unset",
       "tests: faults the conformance runner injects into its workers (JSON), to test its recovery"},
  };
  return vars;
}

namespace {

const Var& declared(const char* name) {
  for (const Var& v : all())
    if (std::strcmp(v.name, name) == 0) return v;
  throw std::logic_error(std::string("environment variable ") + name + " is not declared in engine/env.cc");
}

int64_t positive_of(const char* text) {
  const long long n = text ? std::atoll(text) : 0;
  return n > 0 ? n : 0;
}

}  // namespace

const char* get(const char* name) {
  (void)declared(name);
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

const char* value(const char* name) {
  const char* set = get(name);
  return set ? set : declared(name).fallback;
}

int64_t positive(const char* name) {
  if (int64_t n = positive_of(get(name))) return n;
  if (int64_t n = positive_of(declared(name).fallback)) return n;
  throw std::logic_error(std::string("environment variable ") + name + " has no numeric default in engine/env.cc");
}

int64_t positive(const char* name, int64_t computed) {
  int64_t n = positive_of(get(name));
  return n ? n : computed;
}

int64_t count(const char* name) {
  const char* text = value(name);
  char* end = nullptr;
  const long long n = std::strtoll(text, &end, 10);
  if (end == text || *end || n < 0)
    throw std::invalid_argument(std::string(name) + "=" + text + ": expected a count (0 or more)");
  return n;
}

bool flag(const char* name) {
  const char* set = get(name);
  if (set) return std::strcmp(set, "0") != 0;
  return std::strcmp(declared(name).fallback, "1") == 0;
}

}  // namespace engine::env
