// Process-wide engine state: which plugin, its client, the compilation cache
// and the counters users see through torch_pjrt.cache_stats().
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/disk_cache.h"
#include "pjrt/ffi.h"
#include "pjrt/runtime.h"
#include "shlo/builder.h"

namespace engine {

struct CacheStats {
  int64_t hits = 0;       // found in memory
  int64_t disk_hits = 0;  // loaded from the disk cache
  int64_t misses = 0;     // compiled
  // Of those, small programs compiled lighter (Runtime::tier_of): with
  // XLA:CPU's classic emitters, and the smallest also at the lowest
  // optimization level; each with its seconds.
  int64_t light_compiles = 0;
  int64_t quick_compiles = 0;
  double compile_seconds = 0;
  double light_compile_seconds = 0;
  double quick_compile_seconds = 0;
  // Compiles of programs over content padded to a size class (the
  // largest class the program reads or writes), and their seconds, by class.
  std::map<int64_t, int64_t> class_compiles;
  std::map<int64_t, double> class_compile_seconds;
  int64_t entries = 0;
  int64_t evictions = 0;  // dropped from memory at the capacity bound
  int64_t corrupt_entries = 0;
};

struct Config {
  std::string plugin_path;   // resolved by the Python layer
  std::string plugin_name;   // cpu | tpu | cuda | path
  std::string missing_hint;  // how to install a missing plugin
  int64_t cpu_device_count = 1;
  // One client over several processes (pjrt::ClientOptions has the why);
  // unset unless configure_multi_process() was called.
  int64_t node_id = -1;
  int64_t num_nodes = -1;
  std::shared_ptr<pjrt::KeyValueStore> kv_store;
  // The loaded plugin; configure() loads it (open_plugin) when unset.
  std::shared_ptr<pjrt::Api> api;
};

// Loads and checks cfg's plugin without making a client; throws pjrt::Error
// naming what is missing and how to install it.
std::shared_ptr<pjrt::Api> open_plugin(const Config& cfg);

// Native functions programs call on the host (custom calls XLA:CPU runs):
// an op whose lowering emits one adds it here once (a static registration
// beside the lowering), and a client of the CPU plugin registers them all
// before its first compile. `calls` counts the function's calls (tests and
// runtime_info read it). add_native_function returns a dummy for the
// static initializer.
struct NativeFunction {
  const char* name;
  pjrt::ffi::Handler* handler;
  int64_t (*calls)();
};
int add_native_function(const NativeFunction& f);
const std::vector<NativeFunction>& native_function_list();

// In a child forked after this process loaded the plugin
// (pjrt::in_forked_child), throws the error that using the device there
// gets, at once instead of a wait for the parent's threads; else nothing.
void check_not_forked();

class Runtime {
 public:
  // Sets which plugin to use and loads it (a missing or incompatible one
  // throws here); the client is made on first use. After that, an error.
  static void configure(const Config& cfg);
  // Makes the client, once created, node node_id of num_nodes, exchanging
  // topology through store. Same rule: before first use.
  static void configure_multi_process(int64_t node_id, int64_t num_nodes, std::shared_ptr<pjrt::KeyValueStore> store);
  static Runtime& get();  // creates the client on first use; check_not_forked() first
  static bool initialized();
  // The client's device count, read without calling the plugin (0 before
  // the client exists): what a forked child can still be told.
  static int known_device_count();

  pjrt::Client& client() { return *client_; }
  const Config& config() const { return cfg_; }
  // Whether programs may call the native functions (add_native_function):
  // the plugin is XLA:CPU and took them.
  bool native_functions() const { return native_functions_; }

  // The program for a key if memory or the disk cache has it, else null.
  pjrt::ExecutablePtr cached(const std::string& key);
  // Compiled program for a graph key; builds the module text only on a miss.
  // replicas: for a replicated program, its devices (pjrt::Client::compile);
  // the key must name them.
  pjrt::ExecutablePtr executable(const std::string& key, const std::function<std::string()>& build,
                                 const std::function<std::string()>& what, const std::vector<int>& replicas = {});
  // Compiles (and stores in both caches) a key that cached() did not find.
  // size_class: the largest size class of content the program reads or
  // writes padded (Node::size_class), 0 for none: counted per class.
  pjrt::ExecutablePtr compile(const std::string& key, const std::function<std::string()>& build,
                              const std::function<std::string()>& what, const std::vector<int>& replicas = {},
                              int64_t size_class = 0);
  CacheStats cache_stats();
  const std::string& cache_dir() const;
  void reset_cache_stats();

 private:
  Runtime();
  Config cfg_;
  std::unique_ptr<pjrt::Client> client_;
  std::mutex mu_;
  // The in-memory cache, least recently used first. It is bounded: every
  // loaded executable holds JIT-mapped code (several memory mappings on
  // XLA:CPU), and a long process that compiled without limit would exhaust
  // the kernel's mapping limit and abort inside the compiler. An evicted
  // program comes back from the disk cache.
  struct Cached {
    pjrt::ExecutablePtr exe;
    std::list<std::string>::iterator lru;
  };
  std::unordered_map<std::string, Cached> cache_;
  std::list<std::string> lru_;
  size_t capacity_;
  size_t mapping_budget_;  // see mapping_budget() in runtime.cc
  size_t remembered_ = 0;
  void remember(const std::string& key, pjrt::ExecutablePtr exe);  // under mu_
  std::unique_ptr<DiskCache> disk_;
  bool log_recompiles_ = false;
  // Compile tiers by the largest array a program holds, on platforms whose
  // policy has quick_small_compiles: light (classic emitters) up to
  // light_bound_ elements, quick (light, at the lowest optimization level
  // too) up to quick_bound_; 0 turns a tier off.
  enum class Tier { Full, Light, Quick };
  int64_t light_bound_ = 0;
  int64_t quick_bound_ = 0;
  struct {
    bool emitters = false, opt_level = false;
  } user_flags_;  // set by XLA_FLAGS: not overridden per program
  Tier tier_of(const std::string& text) const;
  bool native_functions_ = false;
  void log_recompile(const std::string& key, int64_t size_class);
  CacheStats stats_;
};

// The element count of the largest array a program's StableHLO text names
// (its parameters, results and every value between), which its run time
// scales with; dynamic dimensions count as 1; -1 for no array found
// (bytecode, which is not read).
int64_t largest_array(const std::string& text);

shlo::DType from_pjrt(PJRT_Buffer_Type t);
PJRT_Buffer_Type to_pjrt(shlo::DType t);

}  // namespace engine
