// The PJRT runtime: loads a plugin, owns its client, and wraps every PJRT
// object (error, event, buffer, executable) in RAII types. No torch here.
// Defined by job: runtime.cc (plugin, errors, events), buffer.cc,
// executable.cc and client.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "pjrt/kv_store.h"
#include "pjrt/platform.h"
#include "pjrt_c_api.h"

namespace pjrt {

// Any failure reported by the plugin or by our own checks of it.
class Error : public std::runtime_error {
 public:
  Error(std::string msg, PJRT_Error_Code code = PJRT_Error_Code_UNKNOWN)
      : std::runtime_error(std::move(msg)), code_(code) {}
  PJRT_Error_Code code() const { return code_; }
  bool out_of_memory() const { return code_ == PJRT_Error_Code_RESOURCE_EXHAUSTED; }

 private:
  PJRT_Error_Code code_;
};

class Api;

// A completion signal for asynchronous plugin work.
class Event {
 public:
  Event(const Api* api, PJRT_Event* ev) : api_(api), ev_(ev) {}
  Event(Event&& o) noexcept : api_(o.api_), ev_(o.ev_) { o.ev_ = nullptr; }
  Event(const Event&) = delete;
  ~Event();
  // Blocks until done; throws the plugin's error if the work failed.
  void await(const std::string& context) const;
  bool ready() const;
  // Calls fn on a plugin thread once the work is done (failed or not: a
  // failure is reported by await()); at once if it already is.
  void on_ready(std::function<void()> fn) const;

 private:
  const Api* api_;
  PJRT_Event* ev_;
};

// The most devices whose memory is counted apart (live_bytes(device)).
constexpr int kMaxDevices = 64;

// An immutable array on one device. Shared: storages, the graph and
// in-flight executions may all hold it. The last holder's release returns
// at once: a donated buffer's handle, whose destroy may wait for the program
// consuming it to start, is destroyed on a background thread
// (flush_releases).
class Buffer {
 public:
  // bytes: its size on the device, counted in live_bytes() while it lives;
  // device: the index of the client's device holding it.
  Buffer(const Api* api, PJRT_Buffer* b, int64_t bytes, int device = 0);
  Buffer(const Buffer&) = delete;
  ~Buffer();
  PJRT_Buffer* get() const { return buf_; }
  PJRT_Buffer_Type element_type() const;
  std::vector<int64_t> dims() const;
  size_t on_device_bytes() const;
  int device() const { return device_; }
  // Copies the whole buffer into dst (dense, row-major); blocks until done.
  void to_host(void* dst, size_t nbytes) const;
  // The same for a buffer whose memory the host can read (Api::host_memory,
  // dense row-major layout): once its producer is done, copied here. False,
  // with dst untouched, when it is not such a buffer.
  bool read_in_place(void* dst, size_t nbytes) const;
  // Waits for the buffer's producer; throws its error if it failed.
  void await_ready(const std::string& context) const;
  // A program is about to consume this buffer (donation): it stops counting
  // in live_bytes() now, or counts again if the launch failed.
  void set_donated(bool donated);

 private:
  const Api* api_;
  PJRT_Buffer* buf_;
  int64_t bytes_;
  int device_;
  bool donated_ = false;
};
using BufferPtr = std::shared_ptr<Buffer>;

// Where and how a program is launched.
struct Launch {
  // The device to run on, for a portable program (Client::compile); null:
  // where it was compiled (device 0).
  PJRT_Device* on = nullptr;
  int device = 0;  // on's index, recorded in the output buffers
};

// A compiled, loaded program.
class Executable {
 public:
  Executable(const Api* api, PJRT_LoadedExecutable* e);
  Executable(const Executable&) = delete;
  ~Executable();
  size_t num_outputs() const { return num_outputs_; }
  // Launches asynchronously; outputs are ready when their events fire.
  // Inputs listed in `donate` may be consumed by the program.
  // done (if given) receives an event that fires when the program finishes,
  // even if every output has been dropped by then.
  std::vector<BufferPtr> execute(const std::vector<PJRT_Buffer*>& args, const std::vector<int64_t>& non_donatable = {},
                                 bool all_donatable = false, std::unique_ptr<Event>* done = nullptr,
                                 const Launch& at = {}) const;
  // Runs every replica of a replicated program in one launch: args[i] are
  // replica i's inputs, devices[i] its device index (as compiled); returns
  // each replica's outputs and, in done, its completion event.
  std::vector<std::vector<BufferPtr>> execute_replicas(const std::vector<std::vector<PJRT_Buffer*>>& args,
                                                       const std::vector<int>& devices,
                                                       std::vector<std::unique_ptr<Event>>* done) const;
  // Platform-specific bytes that deserialize() turns back into this program.
  std::string serialize() const;

 private:
  const Api* api_;
  PJRT_LoadedExecutable* exe_;
  PJRT_Executable* unloaded_ = nullptr;
  size_t num_outputs_ = 0;
  std::vector<int64_t> out_bytes_;
};
using ExecutablePtr = std::shared_ptr<Executable>;

struct MemoryStats {
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = -1;  // -1: the plugin does not report it
  int64_t bytes_limit = -1;
};

// A loaded plugin (dlopen'ed shared library exporting GetPjrtApi).
class Api {
 public:
  // Loads and initializes the plugin; throws Error with an actionable message.
  explicit Api(const std::string& path);
  const PJRT_Api* raw() const { return api_; }
  int major() const { return api_->pjrt_api_version.major_version; }
  int minor() const { return api_->pjrt_api_version.minor_version; }
  const std::string& path() const { return path_; }
  // Plugin attributes such as xla_version, stablehlo_current_version.
  const std::map<std::string, std::string>& attributes() const { return attrs_; }
  // Turns a PJRT_Error into an exception (and frees it); no-op on nullptr.
  void check(PJRT_Error* err, const std::string& context) const;
  // Frees err; true when there was none (for calls whose failure only
  // means "take the general path").
  bool ok(PJRT_Error* err) const;
  // Whether the device memory of this plugin's client is this process's own
  // memory (XLA:CPU), so a computed buffer can be read in place.
  bool host_memory() const { return host_memory_; }
  void set_host_memory(bool on) { host_memory_ = on; }

 private:
  std::string path_;
  const PJRT_Api* api_ = nullptr;
  std::map<std::string, std::string> attrs_;
  bool host_memory_ = false;
};

struct ClientOptions {
  int64_t cpu_device_count = 1;  // only the XLA:CPU plugin reads this
  // One client over several processes (hosts): this process's index and
  // how many there are, passed as the create options node_id / num_nodes
  // the GPU plugin reads, and the store the plugins exchange their
  // topology through. Sent only when set (node_id >= 0, num_nodes > 0,
  // kv_store non-null): a single-process client never sees them, and
  // libtpu on TPU VMs finds its slice without them.
  int64_t node_id = -1;
  int64_t num_nodes = -1;
  std::shared_ptr<KeyValueStore> kv_store;
  bool multi_process() const { return node_id >= 0 || num_nodes > 0 || kv_store != nullptr; }
};

// The create options PJRT_Client_Create receives for opts; with
// cpu_device_count false, all but that one (for plugins that reject it).
// Names point to static strings: valid as long as the vector.
std::vector<PJRT_NamedValue> client_create_options(const ClientOptions& opts, bool cpu_device_count = true);

// One compiler option set for one compile (Client::compile): an integer
// or a boolean, by the option's name.
struct OptionOverride {
  std::string name;
  std::variant<int64_t, bool> value;
};

// The client of one plugin: devices, transfers and compilation.
class Client {
 public:
  Client(std::shared_ptr<Api> api, const ClientOptions& opts);
  Client(const Client&) = delete;
  ~Client();
  const Api& api() const { return *api_; }
  const std::string& platform() const { return platform_; }  // as the plugin names it
  Platform kind() const { return kind_; }
  const std::string& platform_version() const { return platform_version_; }
  size_t device_count() const { return devices_.size(); }
  PJRT_Device* device(int i) const { return devices_.at(i); }

  // Uploads a dense row-major host array; the host memory may be reused as
  // soon as this returns.
  BufferPtr from_host(const void* data, PJRT_Buffer_Type type, const std::vector<int64_t>& dims, int device = 0) const;
  // A copy of b on another device of this client (asynchronous: the copy
  // is ready when its producer and the transfer are).
  BufferPtr copy_to_device(const Buffer& b, int device) const;
  // Compiles StableHLO (MLIR text or bytecode) for one device. With more
  // than one device the program is portable: one compile serves every
  // device, chosen at each launch (Launch::on). With replicas (device
  // indices, in replica order) it is one replicated program over them, for
  // collectives: replica i runs on replicas[i]. overrides set compiler
  // options (XLA's debug options, by name) for this program only, on top
  // of the plugin's own.
  ExecutablePtr compile(const std::string& mlir, const std::vector<int>& replicas = {},
                        const std::vector<OptionOverride>& overrides = {}) const;
  ExecutablePtr deserialize(const std::string& bytes) const;
  MemoryStats memory_stats(int device = 0) const;

 private:
  std::shared_ptr<Api> api_;
  std::shared_ptr<KeyValueStore> kv_store_;  // the plugin may call it while the client lives
  PJRT_Client* client_ = nullptr;
  std::vector<PJRT_Device*> devices_;
  std::vector<int64_t> device_ids_;  // the plugin's global id of each
  std::string platform_;
  Platform kind_ = Platform::Other;
  std::string platform_version_;
};

// Bytes held by live buffers of every client in this process, and the peak:
// of one device, or of all of them (device -1).
int64_t live_bytes(int device = -1);
int64_t peak_bytes(int device = -1);
void reset_peak_bytes(int device = -1);

// Waits until every buffer released so far has been destroyed.
void flush_releases();

// Whether this process was forked from one that had made a client. The
// plugin's threads and the device state stay in the parent: a call into
// the plugin here would wait forever, and the parent's buffers are the
// parent's to destroy. A parent that only loaded the plugin (at import)
// leaves its child free to make its own client.
bool in_forked_child();

// Size in bytes of one element of a PJRT buffer type (0 if unsupported).
size_t element_size(PJRT_Buffer_Type t);

}  // namespace pjrt
