// What the runtime's files (runtime.cc, buffer.cc, executable.cc,
// client.cc) share and nothing else includes: the zero-filled args structs
// every PJRT call takes, reading a PJRT error, and the fork watch's note
// that a client exists.
#pragma once

#include <cstring>
#include <string>

#include "pjrt_c_api.h"

namespace pjrt {

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

// The error's message; its code into *code. Destroys err.
std::string error_text(const PJRT_Api* api, PJRT_Error* err, PJRT_Error_Code* code);

// Called when a client is made: from then on a forked child cannot use the
// plugin (see in_forked_child()).
void note_client_made();

}  // namespace pjrt
