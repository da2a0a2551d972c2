// The PJRT client: its creation (single- or multi-process, with the
// options a plugin may reject), its devices, host <-> device copies, and
// compiling, with the compile options proto written by hand (one program
// per device, portable across devices, or replicated over several).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pjrt/api_args.h"
#include "pjrt/runtime.h"

namespace pjrt {

namespace {

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

// CompileOptionsProto { env_option_overrides (7): map entry { key (1):
// name, value (2): OptionOverrideProto { bool_field (2) | int_field (3) } } }.
// An override merges onto the plugin's own debug options, where a
// debug_options message would replace them all; appended to any options
// message it adds the entry (a proto's fields merge).
std::string option_override(const OptionOverride& o) {
  std::string value, entry, options;
  if (const bool* b = std::get_if<bool>(&o.value))
    put_field(value, 2, static_cast<uint64_t>(*b));
  else
    put_field(value, 3, static_cast<uint64_t>(std::get<int64_t>(o.value)));
  put_field(entry, 1, o.name);
  put_field(entry, 2, value);
  put_field(options, 7, entry);
  return options;
}

}  // namespace

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
  note_client_made();
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

ExecutablePtr Client::compile(const std::string& mlir, const std::vector<int>& replicas,
                              const std::vector<OptionOverride>& overrides) const {
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
  std::string options;
  if (!replicas.empty()) {
    std::vector<int64_t> ids;
    for (int d : replicas) ids.push_back(device_ids_.at(d));
    options = replicated_options(ids);
  } else if (portable) {
    options.assign(kPortableCompileOptions, sizeof(kPortableCompileOptions));
  } else {
    options.assign(kCompileOptions, sizeof(kCompileOptions));
  }
  for (const OptionOverride& o : overrides) options += option_override(o);
  a.compile_options = options.data();
  a.compile_options_size = options.size();
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

}  // namespace pjrt
