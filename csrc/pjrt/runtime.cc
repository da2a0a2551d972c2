// The PJRT runtime's root: loading a plugin and checking its API table,
// reading its errors, the fork watch, and events. Buffers, executables and
// the client have files of their own (buffer.cc, executable.cc, client.cc).
#include "pjrt/runtime.h"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>

#include "pjrt/api_args.h"

namespace pjrt {

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

namespace {

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
void note_client_made() { g_client_made.store(true, std::memory_order_relaxed); }

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
