#include "pjrt/ffi.h"

#include "pjrt/runtime.h"

namespace pjrt {

namespace {

// The head of XLA's FFI api table (a frame's `api`): up to the first
// function, the one making errors.
struct ErrorCreateArgs {
  size_t struct_size;
  ffi::ExtensionBase* extension_start;
  const char* message;
  int code;
};
struct FfiApiHead {
  size_t struct_size;
  ffi::ExtensionBase* extension_start;
  ffi::ApiVersion api_version;
  void* internal_api;
  ffi::Error* (*error_create)(ErrorCreateArgs*);
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
  auto* api = static_cast<const FfiApiHead*>(frame->api);
  ErrorCreateArgs a{sizeof(ErrorCreateArgs), nullptr, message.c_str(), /*invalid argument*/ 3};
  return api->error_create(&a);
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
