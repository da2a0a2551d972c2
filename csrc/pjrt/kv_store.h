// A key-value store shared by every process of a multi-host job, and the
// PJRT callbacks that hand it to a plugin. Plugins that form one client over
// several hosts (XLA:GPU; libtpu where it cannot discover the slice itself)
// exchange their topology through it while PJRT_Client_Create runs. The
// store itself comes from above (the Python layer can back it with the c10d
// store); this layer only adapts it to the C API. No torch here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "pjrt_c_api.h"

namespace pjrt {

// Thread-safe: a plugin may call it from several threads at once. Failures
// are exceptions; a pjrt::Error keeps its code (get's timeout should be
// DEADLINE_EXCEEDED), anything else reaches the plugin as INTERNAL.
class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;
  // Blocks until the key is set or timeout_ms has passed (then throws).
  virtual std::string get(const std::string& key, int64_t timeout_ms) = 0;
  virtual void put(const std::string& key, const std::string& value) = 0;
  // Without waiting: the value, or nullopt if the key is not set yet. The
  // default asks get() with no time to wait.
  virtual std::optional<std::string> try_get(const std::string& key);
};

// The callbacks and user args of PJRT_Client_Create_Args for one store,
// which must outlive every client created with them.
struct KeyValueCallbacks {
  PJRT_KeyValueGetCallback get = nullptr;
  void* get_user_arg = nullptr;
  PJRT_KeyValuePutCallback put = nullptr;
  void* put_user_arg = nullptr;
  PJRT_KeyValueTryGetCallback try_get = nullptr;
  void* try_get_user_arg = nullptr;
};
KeyValueCallbacks key_value_callbacks(KeyValueStore* store);

// Frees a value a get/try_get callback handed back (what the plugin calls
// through value_deleter_callback once it has copied it).
void delete_key_value(char* value);

}  // namespace pjrt
