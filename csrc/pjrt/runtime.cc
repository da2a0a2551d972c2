#include "pjrt/runtime.h"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace pjrt {

namespace {

// Every PJRT args struct starts with struct_size and extension_start; this
// zero-fills the rest so fields added by newer headers read as "unset".
template <typename T>
T args(size_t size) {
  T a;
  std::memset(&a, 0, sizeof(T));
  a.struct_size = size;
  return a;
}
#define PJRT_ARGS(T) args<T>(T##_STRUCT_SIZE)

std::string error_text(const PJRT_Api* api, PJRT_Error* err, PJRT_Error_Code* code) {
  auto m = PJRT_ARGS(PJRT_Error_Message_Args);
  m.error = err;
  api->PJRT_Error_Message(&m);
  std::string text(m.message, m.message_size);
  auto c = PJRT_ARGS(PJRT_Error_GetCode_Args);
  c.error = err;
  *code = api->PJRT_Error_GetCode(&c) == nullptr ? c.code : PJRT_Error_Code_UNKNOWN;
  auto d = PJRT_ARGS(PJRT_Error_Destroy_Args);
  d.error = err;
  api->PJRT_Error_Destroy(&d);
  return text;
}

std::string named_value_text(const PJRT_NamedValue& v) {
  switch (v.type) {
    case PJRT_NamedValue_kString:
      return std::string(v.string_value, v.value_size);
    case PJRT_NamedValue_kInt64:
      return std::to_string(v.int64_value);
    case PJRT_NamedValue_kFloat:
      return std::to_string(v.float_value);
    case PJRT_NamedValue_kBool:
      return v.bool_value ? "true" : "false";
    case PJRT_NamedValue_kInt64List: {
      std::string s;
      for (size_t i = 0; i < v.value_size; ++i) s += (i ? "." : "") + std::to_string(v.int64_array_value[i]);
      return s;
    }
  }
  return "";
}

// CompileOptionsProto { executable_build_options { num_replicas: 1
// num_partitions: 1 } }. An empty proto makes some plugins assume 0 replicas.
const char kCompileOptions[] = {0x1a, 0x04, 0x20, 0x01, 0x28, 0x01};
// The same plus compile_portable_executable (field 4): true, so one program
// runs on any device, chosen at launch.
const char kPortableCompileOptions[] = {0x1a, 0x04, 0x20, 0x01, 0x28, 0x01, 0x20, 0x01};

void put_varint(std::string& s, uint64_t v) {
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
}
void put_field(std::string& s, int field, const std::string& bytes) {  // length-delimited
  put_varint(s, static_cast<uint64_t>(field) << 3 | 2);
  put_varint(s, bytes.size());
  s += bytes;
}
void put_field(std::string& s, int field, uint64_t v) {  // varint
  put_varint(s, static_cast<uint64_t>(field) << 3);
  put_varint(s, v);
}

// CompileOptionsProto { executable_build_options (3) { num_replicas (4),
// num_partitions (5), device_assignment (9) { replica_count (1),
// computation_count (2), computation_devices (3) { replica_device_ids (1) } } } }
std::string replicated_options(const std::vector<int64_t>& ids) {
  std::string packed, computation, assignment, build, options;
  for (int64_t id : ids) put_varint(packed, static_cast<uint64_t>(id));
  put_field(computation, 1, packed);
  put_field(assignment, 1, ids.size());
  put_field(assignment, 2, 1);
  put_field(assignment, 3, computation);
  put_field(build, 4, ids.size());
  put_field(build, 5, 1);
  put_field(build, 9, assignment);
  put_field(options, 3, build);
  return options;
}

}  // namespace

// ---------------------------------------------------------------- Api

namespace {
std::atomic<bool> g_forked_child{false};
// Set once a client exists: the plugin's threads start with it. A child
// forked before that (the plugin only loaded, as at import) makes its own
// client and works, as CUDA's children of a parent that never used it do.
std::atomic<bool> g_client_made{false};
}  // namespace

bool in_forked_child() { return g_forked_child.load(std::memory_order_relaxed); }

Api::Api(const std::string& path) : path_(path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw Error("cannot load PJRT plugin '" + path + "': " + dlerror());
  // Once a client exists, a child forked from this process cannot use the
  // plugin (its threads are not forked with the process): the child only
  // sets the flag every entry point checks.
  static std::once_flag watching;
  std::call_once(watching, [] {
    pthread_atfork(nullptr, nullptr, [] {
      if (g_client_made.load(std::memory_order_relaxed)) g_forked_child.store(true, std::memory_order_relaxed);
    });
  });
  auto get = reinterpret_cast<const PJRT_Api* (*)()>(dlsym(h, "GetPjrtApi"));
  if (!get) throw Error("'" + path + "' is not a PJRT plugin (no GetPjrtApi symbol)");
  api_ = get();
  if (!api_) throw Error("PJRT plugin '" + path + "' returned no API table");
  if (api_->pjrt_api_version.major_version != PJRT_API_MAJOR)
    throw Error("PJRT plugin '" + path + "' has API version " + std::to_string(major()) + "." +
                std::to_string(minor()) + " but torch_pjrt was built for " + std::to_string(PJRT_API_MAJOR) + "." +
                std::to_string(PJRT_API_MINOR));
  // Older minors have a shorter table; we only call functions every 0.x
  // plugin we support has, and the struct size tells us the table is sane.
  if (api_->struct_size < offsetof(PJRT_Api, PJRT_Executable_DeserializeAndLoad) + sizeof(void*))
    throw Error("PJRT plugin '" + path + "' API table is too old (struct_size " + std::to_string(api_->struct_size) +
                ")");
  auto init = PJRT_ARGS(PJRT_Plugin_Initialize_Args);
  check(api_->PJRT_Plugin_Initialize(&init), "initializing PJRT plugin " + path);
  auto attrs = PJRT_ARGS(PJRT_Plugin_Attributes_Args);
  if (api_->PJRT_Plugin_Attributes && !api_->PJRT_Plugin_Attributes(&attrs)) {
    for (size_t i = 0; i < attrs.num_attributes; ++i) {
      const PJRT_NamedValue& v = attrs.attributes[i];
      attrs_[std::string(v.name, v.name_size)] = named_value_text(v);
    }
  }
}

void Api::check(PJRT_Error* err, const std::string& context) const {
  if (!err) return;
  PJRT_Error_Code code;
  std::string text = error_text(api_, err, &code);
  throw Error(context + ": " + text, code);
}

bool Api::ok(PJRT_Error* err) const {
  if (!err) return true;
  PJRT_Error_Code code;
  error_text(api_, err, &code);
  return false;
}

// ---------------------------------------------------------------- Event

Event::~Event() {
  if (!ev_) return;
  auto d = PJRT_ARGS(PJRT_Event_Destroy_Args);
  d.event = ev_;
  api_->raw()->PJRT_Event_Destroy(&d);
}

void Event::await(const std::string& context) const {
  if (!ev_) return;
  auto a = PJRT_ARGS(PJRT_Event_Await_Args);
  a.event = ev_;
  api_->check(api_->raw()->PJRT_Event_Await(&a), context);
}

bool Event::ready() const {
  if (!ev_) return true;
  auto a = PJRT_ARGS(PJRT_Event_IsReady_Args);
  a.event = ev_;
  api_->check(api_->raw()->PJRT_Event_IsReady(&a), "PJRT_Event_IsReady");
  return a.is_ready;
}

void Event::on_ready(std::function<void()> fn) const {
  if (!ev_) return fn();
  struct Pending {
    const PJRT_Api* api;
    std::function<void()> fn;
  };
  auto* held = new Pending{api_->raw(), std::move(fn)};
  auto a = PJRT_ARGS(PJRT_Event_OnReady_Args);
  a.event = ev_;
  a.user_arg = held;
  a.callback = [](PJRT_Error* err, void* arg) {
    std::unique_ptr<Pending> p(static_cast<Pending*>(arg));
    p->fn();
    if (err) {  // ours to free; await() is where a failure is reported
      auto d = PJRT_ARGS(PJRT_Error_Destroy_Args);
      d.error = err;
      p->api->PJRT_Error_Destroy(&d);
    }
  };
  PJRT_Error* err = api_->raw()->PJRT_Event_OnReady(&a);
  if (err) {
    delete held;
    api_->check(err, "PJRT_Event_OnReady");
  }
}

// ---------------------------------------------------------------- Buffer

namespace {
// Index kMaxDevices: every device together.
std::atomic<int64_t> g_live[kMaxDevices + 1], g_peak[kMaxDevices + 1];
int slot(int device) { return device < 0 || device >= kMaxDevices ? kMaxDevices : device; }
void add(int i, int64_t delta) {
  int64_t now = g_live[i].fetch_add(delta) + delta;
  int64_t peak = g_peak[i].load();
  while (now > peak && !g_peak[i].compare_exchange_weak(peak, now)) {
  }
}
void count(int device, int64_t delta) {
  add(kMaxDevices, delta);
  if (slot(device) != kMaxDevices) add(slot(device), delta);
}
}  // namespace
int64_t live_bytes(int device) { return g_live[slot(device)].load(); }
int64_t peak_bytes(int device) { return g_peak[slot(device)].load(); }
void reset_peak_bytes(int device) {
  if (device >= 0) {
    g_peak[slot(device)].store(g_live[slot(device)].load());
    return;
  }
  for (int i = 0; i <= kMaxDevices; ++i) g_peak[i].store(g_live[i].load());
}

Buffer::Buffer(const Api* api, PJRT_Buffer* b, int64_t bytes, int device)
    : api_(api), buf_(b), bytes_(bytes), device_(device) {
  count(device_, bytes);
}

namespace {

void destroy(const PJRT_Api* api, PJRT_Buffer* b) {
  // A forked child's copies of the parent's buffers are the parent's to
  // destroy, and the plugin's threads a destroy may wait on stayed there.
  if (in_forked_child()) return;
  auto d = PJRT_ARGS(PJRT_Buffer_Destroy_Args);
  d.buffer = b;
  if (PJRT_Error* e = api->PJRT_Buffer_Destroy(&d)) {
    PJRT_Error_Code c;
    error_text(api, e, &c);  // nothing sensible to do in a destructor
  }
}

// Destroying the handle of a buffer donated to a program that has not yet
// started blocks: XLA:CPU waits for that program to start. A decode loop's
// host froze that way for most of a step, freeing the previous step's graph
// while the engine held its launch lock, so the next step was planned and
// launched only once the device had gone idle. Donated buffers are
// therefore destroyed on this one thread, in the order they were released;
// others (which do not wait) where released, as a wake of this thread costs
// more than their destroy (strict mode's add of one element took 12 us
// instead of 3.4 with every buffer sent here). From the process's exit on,
// all are destroyed where released.
class Releaser {
 public:
  static Releaser& get() {
    static Releaser* r = new Releaser();  // lives for the process, as the buffers do
    return *r;
  }

  void release(const PJRT_Api* api, PJRT_Buffer* b) {
    // A forked child has no releasing thread (see destroy()).
    if (in_forked_child()) return;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!exiting_) {
        queue_.emplace_back(api, b);
        wake_.notify_one();
        return;
      }
    }
    destroy(api, b);
  }

  void flush() {
    if (in_forked_child()) return;
    std::unique_lock<std::mutex> l(mu_);
    done_.wait(l, [&] { return queue_.empty() && idle_; });
  }

 private:
  // Made when the first buffer is released, so after the plugin's own
  // statics: its exit handler runs before they are torn down.
  Releaser() {
    std::atexit([] { get().at_exit(); });
    std::thread([this] { loop(); }).detach();
  }

  void at_exit() {
    flush();
    std::lock_guard<std::mutex> l(mu_);
    exiting_ = true;
  }

  void loop() {
    pthread_setname_np(pthread_self(), "tpu-release");
    std::vector<std::pair<const PJRT_Api*, PJRT_Buffer*>> batch;
    for (;;) {
      {
        std::unique_lock<std::mutex> l(mu_);
        idle_ = true;
        done_.notify_all();
        wake_.wait(l, [&] { return !queue_.empty(); });
        idle_ = false;
        batch.swap(queue_);
      }
      for (const auto& [api, b] : batch) destroy(api, b);
      batch.clear();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<std::pair<const PJRT_Api*, PJRT_Buffer*>> queue_;
  bool idle_ = false;  // the thread waits for work, none queued
  bool exiting_ = false;
};

}  // namespace

void flush_releases() { Releaser::get().flush(); }

Buffer::~Buffer() {
  if (!donated_) {
    count(device_, -bytes_);
    destroy(api_->raw(), buf_);
    return;
  }
  Releaser::get().release(api_->raw(), buf_);
}

void Buffer::set_donated(bool donated) {
  if (donated == donated_) return;
  donated_ = donated;
  count(device_, donated ? -bytes_ : bytes_);
}

PJRT_Buffer_Type Buffer::element_type() const {
  auto a = PJRT_ARGS(PJRT_Buffer_ElementType_Args);
  a.buffer = buf_;
  api_->check(api_->raw()->PJRT_Buffer_ElementType(&a), "PJRT_Buffer_ElementType");
  return a.type;
}

std::vector<int64_t> Buffer::dims() const {
  auto a = PJRT_ARGS(PJRT_Buffer_Dimensions_Args);
  a.buffer = buf_;
  api_->check(api_->raw()->PJRT_Buffer_Dimensions(&a), "PJRT_Buffer_Dimensions");
  return std::vector<int64_t>(a.dims, a.dims + a.num_dims);
}

size_t Buffer::on_device_bytes() const {
  auto a = PJRT_ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args);
  a.buffer = buf_;
  api_->check(api_->raw()->PJRT_Buffer_OnDeviceSizeInBytes(&a), "PJRT_Buffer_OnDeviceSizeInBytes");
  return a.on_device_size_in_bytes;
}

void Buffer::to_host(void* dst, size_t nbytes) const {
  if (read_in_place(dst, nbytes)) return;
  auto a = PJRT_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  a.src = buf_;
  a.dst = dst;
  a.dst_size = nbytes;
  api_->check(api_->raw()->PJRT_Buffer_ToHostBuffer(&a), "copying a device buffer to the host");
  Event(api_, a.event).await("copying a device buffer to the host");
}

// XLA:CPU queues its own device-to-host copy on the client's worker threads,
// behind any program running or queued there: with one worker (NPROC=1)
// reading a small value waited for the whole program launched after its
// producer (a decode loop's read of step n's check waited for step n + 1
// too). A buffer in host memory is copied directly once it is computed.
bool Buffer::read_in_place(void* dst, size_t nbytes) const {
  if (!api_->host_memory() || nbytes == 0 || nbytes != on_device_bytes()) return false;
  const PJRT_Api* raw = api_->raw();
  if (!raw->PJRT_Buffer_GetMemoryLayout || !raw->PJRT_Buffer_UnsafePointer) return false;
  auto r = PJRT_ARGS(PJRT_Buffer_ReadyEvent_Args);
  r.buffer = buf_;
  if (!api_->ok(raw->PJRT_Buffer_ReadyEvent(&r))) return false;
  Event ready(api_, r.event);
  ready.await("copying a device buffer to the host");  // the producer's failure, as the plugin's copy reports it
  auto l = PJRT_ARGS(PJRT_Buffer_GetMemoryLayout_Args);
  l.buffer = buf_;
  if (!api_->ok(raw->PJRT_Buffer_GetMemoryLayout(&l)) || l.layout.type != PJRT_Buffer_MemoryLayout_Type_Tiled ||
      l.layout.tiled.num_tiles != 0)
    return false;
  const size_t rank = l.layout.tiled.minor_to_major_size;
  for (size_t i = 0; i < rank; ++i)
    if (l.layout.tiled.minor_to_major[i] != static_cast<int64_t>(rank - 1 - i)) return false;
  auto u = PJRT_ARGS(PJRT_Buffer_UnsafePointer_Args);
  u.buffer = buf_;
  if (!api_->ok(raw->PJRT_Buffer_UnsafePointer(&u)) || !u.buffer_pointer) return false;
  std::memcpy(dst, reinterpret_cast<const void*>(u.buffer_pointer), nbytes);
  return true;
}

void Buffer::await_ready(const std::string& context) const {
  auto a = PJRT_ARGS(PJRT_Buffer_ReadyEvent_Args);
  a.buffer = buf_;
  api_->check(api_->raw()->PJRT_Buffer_ReadyEvent(&a), context);
  Event(api_, a.event).await(context);
}

// ---------------------------------------------------------------- Executable

Executable::Executable(const Api* api, PJRT_LoadedExecutable* e) : api_(api), exe_(e) {
  auto g = PJRT_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  g.loaded_executable = exe_;
  api_->check(api_->raw()->PJRT_LoadedExecutable_GetExecutable(&g), "PJRT_LoadedExecutable_GetExecutable");
  unloaded_ = g.executable;
  auto n = PJRT_ARGS(PJRT_Executable_NumOutputs_Args);
  n.executable = unloaded_;
  api_->check(api_->raw()->PJRT_Executable_NumOutputs(&n), "PJRT_Executable_NumOutputs");
  num_outputs_ = n.num_outputs;
  // Output sizes, for memory accounting of every result buffer.
  auto et = PJRT_ARGS(PJRT_Executable_OutputElementTypes_Args);
  et.executable = unloaded_;
  auto od = PJRT_ARGS(PJRT_Executable_OutputDimensions_Args);
  od.executable = unloaded_;
  out_bytes_.assign(num_outputs_, 0);
  if (!api_->raw()->PJRT_Executable_OutputElementTypes(&et) && !api_->raw()->PJRT_Executable_OutputDimensions(&od) &&
      et.num_output_types == num_outputs_) {
    size_t k = 0;
    for (size_t i = 0; i < num_outputs_; ++i) {
      int64_t n = static_cast<int64_t>(element_size(et.output_types[i]));
      for (size_t j = 0; j < od.dim_sizes[i]; ++j) n *= od.dims[k++];
      out_bytes_[i] = n;
    }
  }
}

Executable::~Executable() {
  if (unloaded_) {
    auto d = PJRT_ARGS(PJRT_Executable_Destroy_Args);
    d.executable = unloaded_;
    api_->raw()->PJRT_Executable_Destroy(&d);
  }
  auto d = PJRT_ARGS(PJRT_LoadedExecutable_Destroy_Args);
  d.executable = exe_;
  api_->raw()->PJRT_LoadedExecutable_Destroy(&d);
}

std::vector<BufferPtr> Executable::execute(const std::vector<PJRT_Buffer*>& in,
                                           const std::vector<int64_t>& non_donatable, bool,
                                           std::unique_ptr<Event>* done, const Launch& at) const {
  auto opts = PJRT_ARGS(PJRT_ExecuteOptions);
  opts.non_donatable_input_indices = non_donatable.data();
  opts.num_non_donatable_input_indices = non_donatable.size();
  std::vector<PJRT_Buffer*> outs(num_outputs_, nullptr);
  PJRT_Buffer* const* arg_list = in.data();
  PJRT_Buffer** out_list = outs.data();
  auto a = PJRT_ARGS(PJRT_LoadedExecutable_Execute_Args);
  a.executable = exe_;
  a.options = &opts;
  a.argument_lists = &arg_list;
  a.num_devices = 1;
  a.num_args = in.size();
  a.output_lists = &out_list;
  a.execute_device = at.on;
  // Outputs carry their own readiness and errors, which is what makes
  // dispatch asynchronous; the completion event is only for synchronize().
  PJRT_Event* complete = nullptr;
  if (done) a.device_complete_events = &complete;
  api_->check(api_->raw()->PJRT_LoadedExecutable_Execute(&a), "executing a program");
  if (done) *done = std::make_unique<Event>(api_, complete);
  std::vector<BufferPtr> result;
  result.reserve(outs.size());
  for (size_t i = 0; i < outs.size(); ++i)
    result.push_back(std::make_shared<Buffer>(api_, outs[i], out_bytes_[i], at.device));
  return result;
}

std::vector<std::vector<BufferPtr>> Executable::execute_replicas(const std::vector<std::vector<PJRT_Buffer*>>& inputs,
                                                                 const std::vector<int>& devices,
                                                                 std::vector<std::unique_ptr<Event>>* done) const {
  const size_t n = inputs.size();
  auto opts = PJRT_ARGS(PJRT_ExecuteOptions);
  std::vector<PJRT_Buffer* const*> arg_lists(n);
  std::vector<std::vector<PJRT_Buffer*>> outs(n, std::vector<PJRT_Buffer*>(num_outputs_, nullptr));
  std::vector<PJRT_Buffer**> out_lists(n);
  for (size_t i = 0; i < n; ++i) {
    arg_lists[i] = inputs[i].data();
    out_lists[i] = outs[i].data();
  }
  std::vector<PJRT_Event*> events(n, nullptr);
  auto a = PJRT_ARGS(PJRT_LoadedExecutable_Execute_Args);
  a.executable = exe_;
  a.options = &opts;
  a.argument_lists = arg_lists.data();
  a.num_devices = n;
  a.num_args = n ? inputs[0].size() : 0;
  a.output_lists = out_lists.data();
  a.device_complete_events = events.data();
  api_->check(api_->raw()->PJRT_LoadedExecutable_Execute(&a), "executing a replicated program");
  std::vector<std::vector<BufferPtr>> result(n);
  for (size_t i = 0; i < n; ++i) {
    done->push_back(std::make_unique<Event>(api_, events[i]));
    for (size_t k = 0; k < num_outputs_; ++k)
      result[i].push_back(std::make_shared<Buffer>(api_, outs[i][k], out_bytes_[k], devices.at(i)));
  }
  return result;
}

std::string Executable::serialize() const {
  auto a = PJRT_ARGS(PJRT_Executable_Serialize_Args);
  a.executable = unloaded_;
  api_->check(api_->raw()->PJRT_Executable_Serialize(&a), "serializing an executable");
  std::string bytes(a.serialized_bytes, a.serialized_bytes_size);
  if (a.serialized_executable_deleter) a.serialized_executable_deleter(a.serialized_executable);
  return bytes;
}

// ---------------------------------------------------------------- Client

std::vector<PJRT_NamedValue> client_create_options(const ClientOptions& opts, bool cpu_device_count) {
  std::vector<PJRT_NamedValue> out;
  auto add = [&](const char* name, size_t name_size, int64_t value) {
    auto nv = PJRT_ARGS(PJRT_NamedValue);
    nv.name = name;
    nv.name_size = name_size;
    nv.type = PJRT_NamedValue_kInt64;
    nv.int64_value = value;
    nv.value_size = 1;
    out.push_back(nv);
  };
  static const char kCount[] = "cpu_device_count", kNode[] = "node_id", kNodes[] = "num_nodes";
  if (cpu_device_count) add(kCount, sizeof(kCount) - 1, opts.cpu_device_count);
  if (opts.node_id >= 0) add(kNode, sizeof(kNode) - 1, opts.node_id);
  if (opts.num_nodes > 0) add(kNodes, sizeof(kNodes) - 1, opts.num_nodes);
  return out;
}

Client::Client(std::shared_ptr<Api> api, const ClientOptions& opts) : api_(std::move(api)), kv_store_(opts.kv_store) {
  g_client_made.store(true, std::memory_order_relaxed);
  const PJRT_Api* raw = api_->raw();
  if (opts.multi_process() && (opts.node_id < 0 || opts.num_nodes <= 0 || opts.node_id >= opts.num_nodes))
    throw Error("a multi-process PJRT client needs 0 <= node_id < num_nodes (got node_id " +
                    std::to_string(opts.node_id) + ", num_nodes " + std::to_string(opts.num_nodes) + ")",
                PJRT_Error_Code_INVALID_ARGUMENT);
  const KeyValueCallbacks kv = key_value_callbacks(kv_store_.get());
  auto create = [&](const std::vector<PJRT_NamedValue>& nvs, PJRT_Client_Create_Args* c) {
    *c = PJRT_ARGS(PJRT_Client_Create_Args);
    c->create_options = nvs.empty() ? nullptr : nvs.data();
    c->num_options = nvs.size();
    c->kv_get_callback = kv.get;
    c->kv_get_user_arg = kv.get_user_arg;
    c->kv_put_callback = kv.put;
    c->kv_put_user_arg = kv.put_user_arg;
    c->kv_try_get_callback = kv.try_get;
    c->kv_try_get_user_arg = kv.try_get_user_arg;
    return raw->PJRT_Client_Create(c);
  };
  auto c = PJRT_ARGS(PJRT_Client_Create_Args);
  PJRT_Error* err = create(client_create_options(opts), &c);
  if (err) {  // plugins other than XLA:CPU may reject cpu_device_count
    PJRT_Error_Code code;
    error_text(raw, err, &code);
    // The multi-process options stay: without them the plugin would make a
    // single-host client, and every collective would silently see one node.
    api_->check(
        create(client_create_options(opts, /*cpu_device_count=*/false), &c),
        "creating the PJRT client of " + api_->path() +
            (opts.multi_process() ? " as node " + std::to_string(opts.node_id) + " of " + std::to_string(opts.num_nodes)
                                  : ""));
  }
  client_ = c.client;

  auto d = PJRT_ARGS(PJRT_Client_AddressableDevices_Args);
  d.client = client_;
  api_->check(raw->PJRT_Client_AddressableDevices(&d), "listing devices");
  devices_.assign(d.addressable_devices, d.addressable_devices + d.num_addressable_devices);
  if (devices_.empty()) throw Error("PJRT plugin " + api_->path() + " reports no addressable devices");
  for (PJRT_Device* dev : devices_) {
    auto g = PJRT_ARGS(PJRT_Device_GetDescription_Args);
    g.device = dev;
    api_->check(raw->PJRT_Device_GetDescription(&g), "PJRT_Device_GetDescription");
    auto id = PJRT_ARGS(PJRT_DeviceDescription_Id_Args);
    id.device_description = g.device_description;
    api_->check(raw->PJRT_DeviceDescription_Id(&id), "PJRT_DeviceDescription_Id");
    device_ids_.push_back(id.id);
  }

  auto p = PJRT_ARGS(PJRT_Client_PlatformName_Args);
  p.client = client_;
  api_->check(raw->PJRT_Client_PlatformName(&p), "PJRT_Client_PlatformName");
  platform_.assign(p.platform_name, p.platform_name_size);
  kind_ = platform_named(platform_);
  // XLA:CPU's buffers are host memory: reads and writes in place.
  api_->set_host_memory(kind_ == Platform::Cpu);
  auto v = PJRT_ARGS(PJRT_Client_PlatformVersion_Args);
  v.client = client_;
  api_->check(raw->PJRT_Client_PlatformVersion(&v), "PJRT_Client_PlatformVersion");
  platform_version_.assign(v.platform_version, v.platform_version_size);
}

Client::~Client() {
  auto d = PJRT_ARGS(PJRT_Client_Destroy_Args);
  d.client = client_;
  api_->raw()->PJRT_Client_Destroy(&d);
}

BufferPtr Client::from_host(const void* data, PJRT_Buffer_Type type, const std::vector<int64_t>& dims,
                            int device) const {
  auto a = PJRT_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  a.client = client_;
  a.data = data;
  a.type = type;
  a.dims = dims.data();
  a.num_dims = dims.size();
  a.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  a.device = devices_.at(device);
  api_->check(api_->raw()->PJRT_Client_BufferFromHostBuffer(&a), "copying host data to the device");
  Event done(api_.get(), a.done_with_host_buffer);
  done.await("copying host data to the device");
  int64_t bytes = static_cast<int64_t>(element_size(type));
  for (int64_t d : dims) bytes *= d;
  return std::make_shared<Buffer>(api_.get(), a.buffer, bytes, device);
}

BufferPtr Client::copy_to_device(const Buffer& b, int device) const {
  auto a = PJRT_ARGS(PJRT_Buffer_CopyToDevice_Args);
  a.buffer = b.get();
  a.dst_device = devices_.at(device);
  api_->check(api_->raw()->PJRT_Buffer_CopyToDevice(&a), "copying between devices");
  return std::make_shared<Buffer>(api_.get(), a.dst_buffer, static_cast<int64_t>(b.on_device_bytes()), device);
}

ExecutablePtr Client::compile(const std::string& mlir, const std::vector<int>& replicas) const {
  auto prog = PJRT_ARGS(PJRT_Program);
  prog.code = const_cast<char*>(mlir.data());
  prog.code_size = mlir.size();
  static const char kFormat[] = "mlir";
  prog.format = kFormat;
  prog.format_size = 4;
  auto a = PJRT_ARGS(PJRT_Client_Compile_Args);
  a.client = client_;
  a.program = &prog;
  const bool portable = devices_.size() > 1;
  a.compile_options = portable ? kPortableCompileOptions : kCompileOptions;
  a.compile_options_size = portable ? sizeof(kPortableCompileOptions) : sizeof(kCompileOptions);
  std::string options;
  if (!replicas.empty()) {
    std::vector<int64_t> ids;
    for (int d : replicas) ids.push_back(device_ids_.at(d));
    options = replicated_options(ids);
    a.compile_options = options.data();
    a.compile_options_size = options.size();
  }
  api_->check(api_->raw()->PJRT_Client_Compile(&a), "compiling");
  return std::make_shared<Executable>(api_.get(), a.executable);
}

ExecutablePtr Client::deserialize(const std::string& bytes) const {
  auto a = PJRT_ARGS(PJRT_Executable_DeserializeAndLoad_Args);
  a.client = client_;
  a.serialized_executable = bytes.data();
  a.serialized_executable_size = bytes.size();
  api_->check(api_->raw()->PJRT_Executable_DeserializeAndLoad(&a), "loading a cached executable");
  return std::make_shared<Executable>(api_.get(), a.loaded_executable);
}

MemoryStats Client::memory_stats(int device) const {
  MemoryStats s;
  auto a = PJRT_ARGS(PJRT_Device_MemoryStats_Args);
  a.device = devices_.at(device);
  PJRT_Error* err = api_->raw()->PJRT_Device_MemoryStats(&a);
  if (err) {  // optional in PJRT: report "unknown" rather than fail
    PJRT_Error_Code code;
    error_text(api_->raw(), err, &code);
    return s;
  }
  s.bytes_in_use = a.bytes_in_use;
  if (a.peak_bytes_in_use_is_set) s.peak_bytes_in_use = a.peak_bytes_in_use;
  if (a.bytes_limit_is_set) s.bytes_limit = a.bytes_limit;
  return s;
}

size_t element_size(PJRT_Buffer_Type t) {
  switch (t) {
    case PJRT_Buffer_Type_PRED:
    case PJRT_Buffer_Type_S8:
    case PJRT_Buffer_Type_U8:
      return 1;
    case PJRT_Buffer_Type_S16:
    case PJRT_Buffer_Type_U16:
    case PJRT_Buffer_Type_F16:
    case PJRT_Buffer_Type_BF16:
      return 2;
    case PJRT_Buffer_Type_S32:
    case PJRT_Buffer_Type_U32:
    case PJRT_Buffer_Type_F32:
      return 4;
    case PJRT_Buffer_Type_S64:
    case PJRT_Buffer_Type_U64:
    case PJRT_Buffer_Type_F64:
    case PJRT_Buffer_Type_C64:
      return 8;
    case PJRT_Buffer_Type_C128:
      return 16;
    default:
      return 0;
  }
}

}  // namespace pjrt
