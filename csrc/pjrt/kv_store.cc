#include "pjrt/kv_store.h"

#include <cstring>
#include <exception>

#include "pjrt/runtime.h"

namespace pjrt {

std::optional<std::string> KeyValueStore::try_get(const std::string& key) {
  try {
    return get(key, 0);
  } catch (const Error& e) {
    if (e.code() == PJRT_Error_Code_DEADLINE_EXCEEDED || e.code() == PJRT_Error_Code_NOT_FOUND) return std::nullopt;
    throw;
  }
}

void delete_key_value(char* value) { delete[] value; }

namespace {

// The plugin owns the error it gets back, so it must be made by the
// plugin's own constructor (callback_error), which copies the message.
PJRT_Error* to_plugin_error(PJRT_CallbackError* make, PJRT_Error_Code code, const std::string& msg) {
  if (!make || !*make) return nullptr;  // nothing to report with; cannot happen with a conforming plugin
  return (*make)(code, msg.data(), msg.size());
}

// Runs fn, turning any exception into the plugin's error type; "what" names
// the call and key so a plugin's log says which exchange failed.
template <typename Fn>
PJRT_Error* guarded(PJRT_CallbackError* make, const std::string& what, Fn&& fn) {
  try {
    fn();
    return nullptr;
  } catch (const Error& e) {
    return to_plugin_error(make, e.code(), what + ": " + e.what());
  } catch (const std::exception& e) {
    return to_plugin_error(make, PJRT_Error_Code_INTERNAL, what + ": " + e.what());
  } catch (...) {
    return to_plugin_error(make, PJRT_Error_Code_INTERNAL, what + ": unknown exception");
  }
}

// A heap copy the plugin frees through delete_key_value; sized, not
// NUL-terminated, so binary values (serialized protos) pass intact.
char* copy_out(const std::string& v) {
  char* p = new char[v.size() ? v.size() : 1];
  std::memcpy(p, v.data(), v.size());
  return p;
}

PJRT_Error* kv_get(PJRT_KeyValueGetCallback_Args* a) {
  std::string key(a->key, a->key_size);
  return guarded(a->callback_error, "key-value get '" + key + "'", [&] {
    std::string v = static_cast<KeyValueStore*>(a->user_arg)->get(key, a->timeout_in_ms);
    a->value = copy_out(v);
    a->value_size = v.size();
    a->value_deleter_callback = delete_key_value;
  });
}

PJRT_Error* kv_try_get(PJRT_KeyValueTryGetCallback_Args* a) {
  std::string key(a->key, a->key_size);
  std::optional<std::string> v;
  PJRT_Error* err = guarded(a->callback_error, "key-value try_get '" + key + "'",
                            [&] { v = static_cast<KeyValueStore*>(a->user_arg)->try_get(key); });
  if (err) return err;
  if (!v)
    return to_plugin_error(a->callback_error, PJRT_Error_Code_NOT_FOUND, "key-value try_get '" + key + "': not set");
  a->value = copy_out(*v);
  a->value_size = v->size();
  a->value_deleter_callback = delete_key_value;
  return nullptr;
}

PJRT_Error* kv_put(PJRT_KeyValuePutCallback_Args* a) {
  std::string key(a->key, a->key_size);
  return guarded(a->callback_error, "key-value put '" + key + "'",
                 [&] { static_cast<KeyValueStore*>(a->user_arg)->put(key, std::string(a->value, a->value_size)); });
}

}  // namespace

KeyValueCallbacks key_value_callbacks(KeyValueStore* store) {
  KeyValueCallbacks c;
  if (!store) return c;
  c.get = kv_get;
  c.put = kv_put;
  c.try_get = kv_try_get;
  c.get_user_arg = c.put_user_arg = c.try_get_user_arg = store;
  return c;
}

}  // namespace pjrt
