// Native functions a program calls (stablehlo.custom_call, api_version 4):
// XLA's typed FFI, reached through the plugin's PJRT FFI extension.
//
// The plugins ship pjrt_c_api.h but not XLA's FFI headers, so the part of
// the FFI ABI a handler touches is declared here: the call frame XLA passes,
// its argument and result buffers, and the metadata query XLA makes once at
// registration. Layouts follow XLA FFI API 0.1; every struct starts with its
// size, which the handler checks before reading further.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace pjrt {

class Api;

namespace ffi {

struct ExtensionBase {
  size_t struct_size;
  int type;  // 1: metadata (XLA asks the handler for its version)
  ExtensionBase* next;
};
inline constexpr int kMetadataExtension = 1;

struct ApiVersion {
  size_t struct_size;
  ExtensionBase* extension_start;
  int major_version;
  int minor_version;
};

struct Metadata {
  size_t struct_size;
  ApiVersion api_version;
  uint32_t traits;
};

struct MetadataExtension {
  ExtensionBase base;
  Metadata* metadata;
};

// XLA primitive type ids of the buffers handlers read.
enum class DataType : int { S32 = 4, F32 = 11 };

struct Buffer {
  size_t struct_size;
  ExtensionBase* extension_start;
  DataType dtype;
  void* data;
  int64_t rank;
  int64_t* dims;
};

struct List {  // arguments or results: every entry a Buffer here
  size_t struct_size;
  ExtensionBase* extension_start;
  int64_t size;
  int* types;
  void** items;
};

struct Attributes {
  size_t struct_size;
  ExtensionBase* extension_start;
  int64_t size;
  int* types;
  void** names;
  void** attrs;
};

struct CallFrame {
  size_t struct_size;
  ExtensionBase* extension_start;
  const void* api;
  void* ctx;
  int stage;  // 3: execute
  List args;
  List rets;
  Attributes attrs;
};
inline constexpr int kExecuteStage = 3;

// The frame's i-th operand and result (every one a Buffer for our handlers).
inline Buffer* arg(CallFrame* frame, int i) { return static_cast<Buffer*>(frame->args.items[i]); }
inline Buffer* ret(CallFrame* frame, int i) { return static_cast<Buffer*>(frame->rets.items[i]); }

// The error a handler returns: nullptr for success. Made through the
// api table the call frame carries (XLA owns and frees it).
using Error = void;
using Handler = Error*(CallFrame*);

// Answers XLA's metadata query (true: the frame was one; return nullptr).
bool answer_metadata(CallFrame* frame);
// Whether a handler has nothing to do: the frame is XLA's metadata query
// (answered here) or a stage before execution.
inline bool idle(CallFrame* frame) { return answer_metadata(frame) || frame->stage != kExecuteStage; }
// Whether the frame has this many operands and results.
inline bool arity_is(const CallFrame* frame, int64_t args, int64_t rets) {
  return frame->args.size == args && frame->rets.size == rets;
}
// An error for XLA to report: code 3 (invalid argument) with message.
Error* error(CallFrame* frame, const std::string& message);

// Hands task(data) to the thread pool XLA runs the frame's program on (on
// XLA:CPU its intra-op pool, the one its own products split over). False
// when there is none or it refuses: task was not and will not be run. XLA
// promises no parallelism: a task may run later, on any pool thread, or
// before this returns; a caller waits only for work a task has started.
bool schedule(CallFrame* frame, void (*task)(void*), void* data);

// The threads of XLA:CPU's pool, sized as the plugin sizes it when it
// starts: NPROC if set, else the cores this process may run on.
int host_pool_threads();

}  // namespace ffi

// Registers handler as custom call target `name` for the plugin's platform
// ("Host" for XLA:CPU). Throws pjrt::Error when the plugin has no FFI
// extension or refuses the handler.
void register_ffi_handler(const Api& api, const std::string& name, const std::string& platform, ffi::Handler* handler);

}  // namespace pjrt
