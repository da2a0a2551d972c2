#include "engine/runtime.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "engine/env.h"
#include "engine/key.h"
#include "engine/platform.h"
#include "engine/timeline.h"

namespace engine {

namespace {
std::mutex g_init_mu;
Config g_cfg;
Runtime* g_runtime = nullptr;

std::vector<NativeFunction>& native_functions_added() {
  static std::vector<NativeFunction> list;
  return list;
}
}  // namespace

int add_native_function(const NativeFunction& f) {
  native_functions_added().push_back(f);
  return 0;
}

const std::vector<NativeFunction>& native_function_list() { return native_functions_added(); }

// Finds, loads and checks the plugin (its file, GetPjrtApi, the API
// version, PJRT_Plugin_Initialize): a few milliseconds, no client and no
// device touched, so configure() does it at import and a missing or
// incompatible plugin is reported there, not at the first tensor.
std::shared_ptr<pjrt::Api> open_plugin(const Config& cfg) {
  if (cfg.plugin_path.empty()) {
    throw pjrt::Error("no PJRT plugin found for '" + cfg.plugin_name + "'" +
                      (cfg.missing_hint.empty() ? "" : ": " + cfg.missing_hint));
  }
  {
    std::ifstream f(cfg.plugin_path);
    if (!f.good())
      throw pjrt::Error("PJRT plugin file '" + cfg.plugin_path + "' does not exist" +
                        (cfg.missing_hint.empty() ? "" : ": " + cfg.missing_hint));
  }
  // XLA logs informational lines to stderr by default; keep warnings.
  setenv("TF_CPP_MIN_LOG_LEVEL", "1", /*overwrite=*/0);
  // PlatformPolicy::xnnpack_off (measured: a small Llama's fused training
  // step 51.1 -> 48.4 ms, batch-64 decoding 5535 -> 5734 tokens/s, a
  // batch-64 Qwen3-MoE compiled decode step 49 -> 44 ms). A choice the
  // user's XLA_FLAGS makes stands. Set before the plugin loads, which may
  // read its flags then.
  if (policy_for(pjrt::platform_named(cfg.plugin_name)).xnnpack_off) {
    const char* flags = std::getenv("XLA_FLAGS");
    std::string f = flags ? flags : "";
    if (f.find("xla_cpu_use_xnnpack") == std::string::npos)
      setenv("XLA_FLAGS", (f + (f.empty() ? "" : " ") + "--xla_cpu_use_xnnpack=false").c_str(), /*overwrite=*/1);
  }
  return std::make_shared<pjrt::Api>(cfg.plugin_path);
}

void Runtime::configure(const Config& cfg) {
  std::lock_guard<std::mutex> g(g_init_mu);
  if (g_runtime) throw pjrt::Error("the PJRT runtime is already running; configure it before first use");
  Config next = cfg;
  if (!next.api) next.api = open_plugin(next);
  // The multi-process settings have their own call (made later than the
  // plugin's, by the distributed layer) and survive this one.
  next.node_id = g_cfg.node_id;
  next.num_nodes = g_cfg.num_nodes;
  next.kv_store = g_cfg.kv_store;
  g_cfg = next;
}

void Runtime::configure_multi_process(int64_t node_id, int64_t num_nodes, std::shared_ptr<pjrt::KeyValueStore> store) {
  std::lock_guard<std::mutex> g(g_init_mu);
  if (g_runtime)
    throw pjrt::Error(
        "the PJRT runtime is already running; make this process a node of a multi-process "
        "client before the device's first use");
  if (node_id < 0 || num_nodes <= 0 || node_id >= num_nodes)
    throw pjrt::Error("node_id must be in [0, num_nodes) (got node_id " + std::to_string(node_id) + ", num_nodes " +
                          std::to_string(num_nodes) + ")",
                      PJRT_Error_Code_INVALID_ARGUMENT);
  g_cfg.node_id = node_id;
  g_cfg.num_nodes = num_nodes;
  g_cfg.kv_store = std::move(store);
}

void check_not_forked() {
  if (pjrt::in_forked_child())
    throw pjrt::Error(
        "Cannot re-initialize tpu in forked subprocess: the parent process started the PJRT runtime before "
        "forking, and the plugin's threads and device state stay in the parent. To use tpu with "
        "multiprocessing, you must use the 'spawn' or 'forkserver' start method");
}

bool Runtime::initialized() { return g_runtime != nullptr; }

int Runtime::known_device_count() { return g_runtime ? static_cast<int>(g_runtime->client().device_count()) : 0; }

Runtime& Runtime::get() {
  check_not_forked();
  if (g_runtime) return *g_runtime;
  std::lock_guard<std::mutex> g(g_init_mu);
  if (!g_runtime) g_runtime = new Runtime();  // lives for the process: buffers outlive statics
  return *g_runtime;
}

namespace {

size_t cache_capacity() { return static_cast<size_t>(env::positive("TORCH_PJRT_CACHE_ENTRIES")); }

// The process's memory mappings, and how many the cache lets them reach.
// XLA:CPU maps each loaded program's code in several regions (10 to 60
// measured), the kernel caps a process's mappings (vm.max_map_count), and
// the compiler aborts the process when a mapping is refused: a count of
// programs alone does not bound them, as large fused programs map more.
size_t mapping_count() {
  std::ifstream f("/proc/self/maps");
  return static_cast<size_t>(std::count(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>(), '\n'));
}

size_t mapping_budget() {
  size_t limit = 65530;
  std::ifstream f("/proc/sys/vm/max_map_count");
  f >> limit;
  return static_cast<size_t>(env::positive("TORCH_PJRT_CACHE_MAPPINGS", static_cast<int64_t>(limit / 2)));
}

}  // namespace

Runtime::Runtime() : cfg_(g_cfg), capacity_(cache_capacity()), mapping_budget_(mapping_budget()) {
  if (!cfg_.api) cfg_.api = open_plugin(cfg_);
  pjrt::ClientOptions opts;
  opts.cpu_device_count = cfg_.cpu_device_count;
  opts.node_id = cfg_.node_id;
  opts.num_nodes = cfg_.num_nodes;
  opts.kv_store = cfg_.kv_store;
  client_ = std::make_unique<pjrt::Client>(cfg_.api, opts);
  // A plugin without handler registration leaves the ops on their
  // StableHLO lowerings.
  if (policy_for(client_->kind()).host_functions) {
    try {
      for (const NativeFunction& f : native_function_list())
        pjrt::register_ffi_handler(client_->api(), f.name, "Host", f.handler);
      native_functions_ = true;
    } catch (const pjrt::Error&) {
      native_functions_ = false;
    }
  }
  // Executables are only valid for the same platform, plugin build and
  // compiler: all of that goes into the cache's identity.
  std::string identity = "platform=" + client_->platform() + ";version=" + client_->platform_version() +
                         ";pjrt=" + std::to_string(client_->api().major()) + "." +
                         std::to_string(client_->api().minor()) +
                         ";devices=" + std::to_string(client_->device_count()) + ";keys=" + std::to_string(kKeyFormat);
  for (const auto& [k, v] : client_->api().attributes()) identity += ";" + k + "=" + v;
  // Compiler flags read by the plugins change the programs they build.
  for (const char* var : {"XLA_FLAGS", "LIBTPU_INIT_ARGS"})
    if (const char* v = std::getenv(var)) identity += std::string(";") + var + "=" + v;
  // So do the compile tiers, chosen by program size under bounds; an
  // option the user's XLA_FLAGS set stands for every program.
  if (const char* f = std::getenv("XLA_FLAGS")) {
    user_flags_.emitters = std::strstr(f, "xla_cpu_use_fusion_emitters") != nullptr;
    user_flags_.opt_level = std::strstr(f, "xla_backend_optimization_level") != nullptr;
  }
  if (policy_for(client_->kind()).quick_small_compiles) {
    light_bound_ = env::count("TORCH_PJRT_LIGHT_COMPILE_ELEMENTS");
    quick_bound_ = env::count("TORCH_PJRT_QUICK_COMPILE_ELEMENTS");
  }
  identity += ";light_compile=" + std::to_string(light_bound_) + ";quick_compile=" + std::to_string(quick_bound_);
  struct stat st;
  if (stat(cfg_.plugin_path.c_str(), &st) == 0)
    identity += ";plugin_size=" + std::to_string(st.st_size) + ";plugin_mtime=" + std::to_string(st.st_mtime);
  // Our own build too: a changed lowering keeps its op key, so programs
  // cached by an older build of torch_pjrt must not be reused.
  Dl_info self;
  if (dladdr(reinterpret_cast<void*>(&default_cache_dir), &self) && self.dli_fname && stat(self.dli_fname, &st) == 0)
    identity += ";build_size=" + std::to_string(st.st_size) + ";build_mtime=" + std::to_string(st.st_mtime);
  disk_ = std::make_unique<DiskCache>(default_cache_dir(), identity);
  log_recompiles_ = env::flag("TORCH_PJRT_LOG_RECOMPILES");
}

const std::string& Runtime::cache_dir() const { return disk_->dir(); }

// Names the first op-graph segment where a new key differs from the most
// similar cached key: what made this program new.
void Runtime::log_recompile(const std::string& key, int64_t size_class) {
  auto segments = [](const std::string& k) {
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t i = 0; i <= k.size(); ++i)
      if (i == k.size() || k[i] == '|') {
        out.push_back(k.substr(start, i - start));
        start = i + 1;
      }
    return out;
  };
  auto mine = segments(key);
  size_t best = 0;
  std::vector<std::string> nearest;
  for (const auto& [k, _] : cache_) {
    auto other = segments(k);
    size_t same = 0;
    while (same < mine.size() && same < other.size() && mine[same] == other[same]) ++same;
    if (same >= best) {
      best = same;
      nearest = std::move(other);
    }
  }
  std::string msg = "torch_pjrt: compiling a new program (" + std::to_string(mine.size() - 1) + " ops): ";
  if (nearest.empty()) {
    msg += "nothing cached yet";
  } else if (best == 0) {
    // The first input whose type differs, with its position: a long list's
    // difference may lie far from its start.
    size_t at = 0, from = 0;
    const std::string &a = mine[0], &b = nearest[0];
    while (at < a.size() && at < b.size() && a[at] == b[at]) {
      if (a[at] == ';') from = at + 1;
      ++at;
    }
    const size_t input = static_cast<size_t>(std::count(a.begin(), a.begin() + from, ';'));
    auto type_at = [&](const std::string& s) { return s.substr(from, s.find(';', from) - from); };
    msg += "input types differ from every cached program: input " + std::to_string(input) + " is " + type_at(a) +
           " vs " + type_at(b) + " (" + a.substr(0, 120) + " vs " + b.substr(0, 120) + ")";
  } else if (best < mine.size()) {
    msg += "op " + std::to_string(best) + " differs: " + mine[best].substr(0, 200) + " vs " +
           (best < nearest.size() ? nearest[best].substr(0, 200) : std::string("(none)"));
  } else {
    msg += "a longer program than the nearest cached one";
  }
  // A program over padded content serves every length of its class: the
  // class compiled now, not a length.
  if (size_class > 0) msg += " [a new program for size class " + std::to_string(size_class) + "]";
  std::fprintf(stderr, "%s\n", msg.c_str());
}

pjrt::ExecutablePtr Runtime::cached(const std::string& key) {
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      ++stats_.hits;
      lru_.splice(lru_.end(), lru_, it->second.lru);
      return it->second.exe;
    }
  }
  if (auto bytes = disk_->load(key)) {
    try {
      timeline::Scoped span(timeline::Kind::Load, "load a program from the disk cache");
      pjrt::ExecutablePtr exe = client_->deserialize(*bytes);
      std::lock_guard<std::mutex> g(mu_);
      ++stats_.disk_hits;
      remember(key, exe);
      return exe;
    } catch (const pjrt::Error&) {
      // Not loadable by this plugin after all: the caller compiles.
    }
  }
  return nullptr;
}

pjrt::ExecutablePtr Runtime::executable(const std::string& key, const std::function<std::string()>& build,
                                        const std::function<std::string()>& what, const std::vector<int>& replicas) {
  if (pjrt::ExecutablePtr exe = cached(key)) return exe;
  return compile(key, build, what, replicas);
}

int64_t largest_array(const std::string& text) {
  int64_t largest = -1;
  for (size_t at = text.find("tensor<"); at != std::string::npos; at = text.find("tensor<", at)) {
    at += 7;
    int64_t n = 1, dim = 0;
    bool digits = false;
    for (; at < text.size(); ++at) {
      const char c = text[at];
      if (c >= '0' && c <= '9') {
        dim = dim * 10 + (c - '0');
        digits = true;
      } else if (c == 'x' && digits) {
        n *= dim;
        dim = 0;
        digits = false;
      } else if (c == '?') {
        digits = false;
      } else if (c != 'x') {
        break;
      }
    }
    largest = std::max(largest, n);
  }
  return largest;
}

// The text is scanned only when a tier is on. The tiers nest: a quick
// program is also light.
Runtime::Tier Runtime::tier_of(const std::string& text) const {
  if (light_bound_ <= 0 && quick_bound_ <= 0) return Tier::Full;
  const int64_t largest = largest_array(text);
  if (largest < 0) return Tier::Full;
  if (largest <= quick_bound_) return Tier::Quick;
  return largest <= light_bound_ ? Tier::Light : Tier::Full;
}

pjrt::ExecutablePtr Runtime::compile(const std::string& key, const std::function<std::string()>& build,
                                     const std::function<std::string()>& what, const std::vector<int>& replicas,
                                     int64_t size_class) {
  if (log_recompiles_) {
    std::lock_guard<std::mutex> g(mu_);
    log_recompile(key, size_class);
  }
  std::string text = build();
  const Tier tier = tier_of(text);
  // XLA:CPU's debug options (xla/debug_options_flags): its classic
  // emitters skip the per-fusion MLIR contexts and pattern sets that are
  // most of a small program's compile.
  std::vector<pjrt::OptionOverride> overrides;
  if (tier != Tier::Full && !user_flags_.emitters) overrides.push_back({"xla_cpu_use_fusion_emitters", false});
  if (tier == Tier::Quick && !user_flags_.opt_level)
    overrides.push_back({"xla_backend_optimization_level", int64_t{0}});
  const int64_t begun = timeline::on() ? timeline::now_ns() : 0;
  auto t0 = std::chrono::steady_clock::now();
  pjrt::ExecutablePtr exe;
  try {
    exe = client_->compile(text, replicas, overrides);
  } catch (const pjrt::Error& e) {
    throw pjrt::Error(
        "compiling " + what() + " failed: " + e.what() + (env::flag("TORCH_PJRT_DUMP_FAILED") ? "\n" + text : ""),
        e.code());
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (begun && timeline::on())
    timeline::record(
        {timeline::Kind::Compile, "compile", what(), begun, timeline::now_ns(), 0, timeline::correlation(), 0});
  try {
    disk_->store(key, exe->serialize());
  } catch (const pjrt::Error&) {
    // Plugins may not support serialization: the memory cache still works.
  }
  std::lock_guard<std::mutex> g(mu_);
  ++stats_.misses;
  stats_.compile_seconds += secs;
  if (tier == Tier::Light) {
    ++stats_.light_compiles;
    stats_.light_compile_seconds += secs;
  } else if (tier == Tier::Quick) {
    ++stats_.quick_compiles;
    stats_.quick_compile_seconds += secs;
  }
  if (size_class > 0) {
    ++stats_.class_compiles[size_class];
    stats_.class_compile_seconds[size_class] += secs;
  }
  remember(key, exe);
  return exe;
}

void Runtime::remember(const std::string& key, pjrt::ExecutablePtr exe) {
  if (cache_.count(key)) return;  // another thread got there first
  // Programs still in use (a compiled graph's) stay loaded through their
  // own reference; the cache only lets go of its own.
  auto evict_oldest = [this] {
    cache_.erase(lru_.front());
    lru_.pop_front();
    ++stats_.evictions;
  };
  while (cache_.size() >= capacity_ && !lru_.empty()) evict_oldest();
  // Every few programs, the process's mappings: past the budget the older
  // half of the cache goes (counting them reads /proc, so not every time).
  if (++remembered_ % 8 == 0 && mapping_count() > mapping_budget_)
    for (size_t n = cache_.size() / 2; n > 0; --n) evict_oldest();
  lru_.push_back(key);
  cache_.emplace(key, Cached{std::move(exe), std::prev(lru_.end())});
  stats_.entries = static_cast<int64_t>(cache_.size());
}

CacheStats Runtime::cache_stats() {
  std::lock_guard<std::mutex> g(mu_);
  stats_.corrupt_entries = disk_->corrupt_entries();
  return stats_;
}

void Runtime::reset_cache_stats() {
  std::lock_guard<std::mutex> g(mu_);
  int64_t entries = stats_.entries;
  stats_ = CacheStats{};
  stats_.entries = entries;
}

shlo::DType from_pjrt(PJRT_Buffer_Type t) {
  using D = shlo::DType;
  switch (t) {
    case PJRT_Buffer_Type_PRED:
      return D::PRED;
    case PJRT_Buffer_Type_S8:
      return D::S8;
    case PJRT_Buffer_Type_S16:
      return D::S16;
    case PJRT_Buffer_Type_S32:
      return D::S32;
    case PJRT_Buffer_Type_S64:
      return D::S64;
    case PJRT_Buffer_Type_U8:
      return D::U8;
    case PJRT_Buffer_Type_U16:
      return D::U16;
    case PJRT_Buffer_Type_U32:
      return D::U32;
    case PJRT_Buffer_Type_U64:
      return D::U64;
    case PJRT_Buffer_Type_F16:
      return D::F16;
    case PJRT_Buffer_Type_BF16:
      return D::BF16;
    case PJRT_Buffer_Type_F32:
      return D::F32;
    case PJRT_Buffer_Type_F64:
      return D::F64;
    case PJRT_Buffer_Type_C64:
      return D::C64;
    case PJRT_Buffer_Type_C128:
      return D::C128;
    default:
      throw pjrt::Error("unsupported PJRT buffer type " + std::to_string(static_cast<int>(t)));
  }
}

PJRT_Buffer_Type to_pjrt(shlo::DType t) {
  using D = shlo::DType;
  switch (t) {
    case D::PRED:
      return PJRT_Buffer_Type_PRED;
    case D::S8:
      return PJRT_Buffer_Type_S8;
    case D::S16:
      return PJRT_Buffer_Type_S16;
    case D::S32:
      return PJRT_Buffer_Type_S32;
    case D::S64:
      return PJRT_Buffer_Type_S64;
    case D::U8:
      return PJRT_Buffer_Type_U8;
    case D::U16:
      return PJRT_Buffer_Type_U16;
    case D::U32:
      return PJRT_Buffer_Type_U32;
    case D::U64:
      return PJRT_Buffer_Type_U64;
    case D::F16:
      return PJRT_Buffer_Type_F16;
    case D::BF16:
      return PJRT_Buffer_Type_BF16;
    case D::F32:
      return PJRT_Buffer_Type_F32;
    case D::F64:
      return PJRT_Buffer_Type_F64;
    case D::C64:
      return PJRT_Buffer_Type_C64;
    case D::C128:
      return PJRT_Buffer_Type_C128;
  }
  return PJRT_Buffer_Type_INVALID;
}

}  // namespace engine
