#include "pjrt/ffi.h"

#include <sched.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>

#include "pjrt/runtime.h"

namespace pjrt {

namespace {

// XLA's FFI api table (a frame's `api`), up to the functions we call:
// making and destroying errors, and scheduling on the thread pool.
struct ErrorCreateArgs {
  size_t struct_size;
  ffi::ExtensionBase* extension_start;
  const char* message;
  int code;
};
struct ErrorDestroyArgs {
  size_t struct_size;
  ffi::ExtensionBase* extension_start;
  ffi::Error* error;
};
struct ScheduleArgs {
  size_t struct_size;
  ffi::ExtensionBase* extension_start;
  void* ctx;
  void (*task)(void*);
  void* data;
};
struct FfiApi {
  size_t struct_size;
  ffi::ExtensionBase* extension_start;
  ffi::ApiVersion api_version;
  void* internal_api;
  ffi::Error* (*error_create)(ErrorCreateArgs*);
  void* error_get_message;
  void (*error_destroy)(ErrorDestroyArgs*);
  // handler registration, stream, type ids, execution context, state and
  // device memory, in the table's order
  void* unused[8];
  ffi::Error* (*thread_pool_schedule)(ScheduleArgs*);
};

// The PJRT FFI extension (pjrt_c_api_ffi_extension.h, version 2): its
// third function registers a typed handler.
struct RegisterHandlerArgs {
  size_t struct_size;
  const char* target_name;
  size_t target_name_size;
  void* handler;
  const char* platform_name;
  size_t platform_name_size;
  uint32_t traits;
};
struct FfiExtension {
  PJRT_Extension_Base base;
  void* type_id_register;
  void* user_data_add;
  PJRT_Error* (*register_handler)(RegisterHandlerArgs*);
};

}  // namespace

namespace ffi {

bool answer_metadata(CallFrame* frame) {
  ExtensionBase* ext = frame->extension_start;
  if (!ext || ext->type != kMetadataExtension) return false;
  Metadata* m = reinterpret_cast<MetadataExtension*>(ext)->metadata;
  m->api_version.major_version = 0;
  m->api_version.minor_version = 1;
  m->traits = 0;
  return true;
}

Error* error(CallFrame* frame, const std::string& message) {
  auto* api = static_cast<const FfiApi*>(frame->api);
  ErrorCreateArgs a{sizeof(ErrorCreateArgs), nullptr, message.c_str(), /*invalid argument*/ 3};
  return api->error_create(&a);
}

bool schedule(CallFrame* frame, void (*task)(void*), void* data) {
  auto* api = static_cast<const FfiApi*>(frame->api);
  if (api->struct_size < offsetof(FfiApi, thread_pool_schedule) + sizeof(void*) || !api->thread_pool_schedule)
    return false;
  ScheduleArgs a{sizeof(ScheduleArgs), nullptr, frame->ctx, task, data};
  Error* e = api->thread_pool_schedule(&a);
  if (!e) return true;
  ErrorDestroyArgs d{sizeof(ErrorDestroyArgs), nullptr, e};
  api->error_destroy(&d);
  return false;
}

int host_pool_threads() {
  static const int n = [] {
    // NPROC is XLA's own setting, not one of ours (engine/env.cc).
    if (const char* s = std::getenv("NPROC"); s && std::atoi(s) > 0) return std::atoi(s);
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? std::max(1, CPU_COUNT(&set)) : 1;
  }();
  return n;
}

}  // namespace ffi

void register_ffi_handler(const Api& api, const std::string& name, const std::string& platform, ffi::Handler* handler) {
  const PJRT_Extension_Base* ext = api.raw()->extension_start;
  while (ext && ext->type != PJRT_Extension_Type_FFI) ext = ext->next;
  if (!ext || ext->struct_size < sizeof(FfiExtension))
    throw Error("PJRT plugin '" + api.path() + "' cannot call native functions (no FFI extension with handlers)");
  auto* f = reinterpret_cast<const FfiExtension*>(ext);
  RegisterHandlerArgs a{sizeof(RegisterHandlerArgs),
                        name.data(),
                        name.size(),
                        reinterpret_cast<void*>(handler),
                        platform.data(),
                        platform.size(),
                        0};
  api.check(f->register_handler(&a), "registering native function " + name);
}

}  // namespace pjrt
