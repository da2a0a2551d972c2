// The key-value store adapter: the C callbacks a plugin calls during
// PJRT_Client_Create, driven directly with an in-memory store the way a
// plugin would drive them (copy the value, then call its deleter; errors
// made through the plugin's callback_error).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "pjrt/kv_store.h"
#include "pjrt/runtime.h"
#include "test_env.h"

namespace {

class MemoryStore : public pjrt::KeyValueStore {
 public:
  std::string get(const std::string& key, int64_t timeout_ms) override {
    std::unique_lock<std::mutex> l(mu_);
    if (!cv_.wait_for(l, std::chrono::milliseconds(timeout_ms), [&] { return kv_.count(key) > 0; }))
      throw pjrt::Error("key '" + key + "' was not set within " + std::to_string(timeout_ms) + " ms",
                        PJRT_Error_Code_DEADLINE_EXCEEDED);
    return kv_.at(key);
  }
  void put(const std::string& key, const std::string& value) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      kv_[key] = value;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> kv_;
};

// Stands in for the plugin's PJRT_Error: what callback_error was given.
struct FakeError {
  PJRT_Error_Code code;
  std::string message;
};
PJRT_Error* make_error(PJRT_Error_Code code, const char* msg, size_t size) {
  return reinterpret_cast<PJRT_Error*>(new FakeError{code, std::string(msg, size)});
}
PJRT_CallbackError g_make_error = make_error;

std::unique_ptr<FakeError> taken(PJRT_Error* e) { return std::unique_ptr<FakeError>(reinterpret_cast<FakeError*>(e)); }

PJRT_Error* put(const pjrt::KeyValueCallbacks& cb, const std::string& k, const std::string& v) {
  PJRT_KeyValuePutCallback_Args a{};
  a.struct_size = PJRT_KeyValuePutCallback_Args_STRUCT_SIZE;
  a.key = k.data();
  a.key_size = k.size();
  a.value = v.data();
  a.value_size = v.size();
  a.callback_error = &g_make_error;
  a.user_arg = cb.put_user_arg;
  return cb.put(&a);
}

// The value as a plugin receives it (copied, then freed by its deleter).
PJRT_Error* get(const pjrt::KeyValueCallbacks& cb, const std::string& k, int timeout_ms, std::string* out) {
  PJRT_KeyValueGetCallback_Args a{};
  a.struct_size = PJRT_KeyValueGetCallback_Args_STRUCT_SIZE;
  a.key = k.data();
  a.key_size = k.size();
  a.timeout_in_ms = timeout_ms;
  a.callback_error = &g_make_error;
  a.user_arg = cb.get_user_arg;
  PJRT_Error* err = cb.get(&a);
  if (!err) {
    EXPECT_NE(a.value_deleter_callback, nullptr);
    out->assign(a.value, a.value_size);
    a.value_deleter_callback(a.value);
  }
  return err;
}

}  // namespace

TEST(PjrtKeyValue, PutThenGetReturnsTheValue) {
  MemoryStore store;
  auto cb = pjrt::key_value_callbacks(&store);
  ASSERT_EQ(put(cb, "topology/0", "host-a:8476"), nullptr);
  std::string v;
  ASSERT_EQ(get(cb, "topology/0", 1000, &v), nullptr);
  EXPECT_EQ(v, "host-a:8476");
  // a put replaces; an empty value is a value
  ASSERT_EQ(put(cb, "topology/0", ""), nullptr);
  ASSERT_EQ(get(cb, "topology/0", 1000, &v), nullptr);
  EXPECT_EQ(v, "");
}

TEST(PjrtKeyValue, GetWaitsForAPutFromAnotherThread) {
  MemoryStore store;
  auto cb = pjrt::key_value_callbacks(&store);
  std::thread peer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(put(cb, "late", "here"), nullptr);
  });
  std::string v;
  PJRT_Error* err = get(cb, "late", 10000, &v);
  peer.join();
  ASSERT_EQ(err, nullptr);
  EXPECT_EQ(v, "here");
}

TEST(PjrtKeyValue, MissingKeyTimesOutWithAClearError) {
  MemoryStore store;
  auto cb = pjrt::key_value_callbacks(&store);
  std::string v;
  auto t0 = std::chrono::steady_clock::now();
  auto err = taken(get(cb, "node/1/addr", 100, &v));
  ASSERT_NE(err, nullptr);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(90));
  EXPECT_EQ(err->code, PJRT_Error_Code_DEADLINE_EXCEEDED);
  EXPECT_NE(err->message.find("key-value get 'node/1/addr'"), std::string::npos) << err->message;
  EXPECT_NE(err->message.find("not set within 100 ms"), std::string::npos) << err->message;
}

TEST(PjrtKeyValue, ValuesWithNulBytesSurvive) {
  MemoryStore store;
  auto cb = pjrt::key_value_callbacks(&store);
  const std::string key("k\0ey", 4), value("\0a\0\0b\xff\0", 7);
  ASSERT_EQ(put(cb, key, value), nullptr);
  std::string v;
  ASSERT_EQ(get(cb, key, 1000, &v), nullptr);
  EXPECT_EQ(v.size(), 7u);
  EXPECT_EQ(v, value);
  EXPECT_NE(get(cb, "k", 10, &v), nullptr) << "a key is its bytes, not a C string";
}

TEST(PjrtKeyValue, TryGetReportsNotFoundAtOnce) {
  MemoryStore store;
  auto cb = pjrt::key_value_callbacks(&store);
  PJRT_KeyValueTryGetCallback_Args a{};
  a.struct_size = PJRT_KeyValueTryGetCallback_Args_STRUCT_SIZE;
  a.key = "absent";
  a.key_size = 6;
  a.callback_error = &g_make_error;
  a.user_arg = cb.try_get_user_arg;
  auto err = taken(cb.try_get(&a));
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(err->code, PJRT_Error_Code_NOT_FOUND);
  EXPECT_NE(err->message.find("'absent'"), std::string::npos) << err->message;
  ASSERT_EQ(put(cb, "absent", "now set"), nullptr);
  ASSERT_EQ(cb.try_get(&a), nullptr);
  EXPECT_EQ(std::string(a.value, a.value_size), "now set");
  a.value_deleter_callback(a.value);
}

TEST(PjrtKeyValue, AStoreThatThrowsSomethingElseIsAnInternalError) {
  struct Broken : MemoryStore {
    void put(const std::string&, const std::string&) override { throw std::runtime_error("store is closed"); }
  } store;
  auto cb = pjrt::key_value_callbacks(&store);
  auto err = taken(put(cb, "x", "y"));
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(err->code, PJRT_Error_Code_INTERNAL);
  EXPECT_EQ(err->message, "key-value put 'x': store is closed");
}

TEST(PjrtKeyValue, NoStoreMeansNoCallbacks) {
  auto cb = pjrt::key_value_callbacks(nullptr);
  EXPECT_EQ(cb.get, nullptr);
  EXPECT_EQ(cb.put, nullptr);
  EXPECT_EQ(cb.try_get, nullptr);
}

TEST(PjrtKeyValue, NodeOptionsAreSentOnlyWhenSet) {
  auto names = [](const pjrt::ClientOptions& o) {
    std::vector<std::string> n;
    for (const auto& v : pjrt::client_create_options(o)) n.emplace_back(v.name, v.name_size);
    return n;
  };
  pjrt::ClientOptions single;
  EXPECT_EQ(names(single), (std::vector<std::string>{"cpu_device_count"}));
  EXPECT_FALSE(single.multi_process());
  pjrt::ClientOptions pod;
  pod.node_id = 3;
  pod.num_nodes = 4;
  pod.kv_store = std::make_shared<MemoryStore>();
  EXPECT_EQ(names(pod), (std::vector<std::string>{"cpu_device_count", "node_id", "num_nodes"}));
  auto nvs = pjrt::client_create_options(pod, /*cpu_device_count=*/false);
  ASSERT_EQ(nvs.size(), 2u);
  EXPECT_EQ(nvs[0].type, PJRT_NamedValue_kInt64);
  EXPECT_EQ(nvs[0].int64_value, 3);
  EXPECT_EQ(nvs[1].int64_value, 4);
}

TEST(PjrtKeyValue, AClientRejectsANodeOutsideItsJob) {
  const char* path = std::getenv("TORCH_PJRT_PLUGIN_PATH");
  ASSERT_NE(path, nullptr);
  pjrt::ClientOptions o;
  o.node_id = 2;
  o.num_nodes = 2;
  try {
    pjrt::Client c(std::make_shared<pjrt::Api>(path), o);
    FAIL() << "node 2 of 2 was accepted";
  } catch (const pjrt::Error& e) {
    EXPECT_EQ(e.code(), PJRT_Error_Code_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("node_id 2, num_nodes 2"), std::string::npos) << e.what();
  }
}

// XLA:CPU takes the options and forms its one-node client as usual: the
// same code path a multi-host plugin gets, minus the peers.
TEST(PjrtKeyValue, ASingleNodeJobFormsAClientWithItsStore) {
  struct Counting : MemoryStore {
    std::atomic<int> calls{0};
    std::string get(const std::string& k, int64_t t) override {
      ++calls;
      return MemoryStore::get(k, t);
    }
    void put(const std::string& k, const std::string& v) override {
      ++calls;
      MemoryStore::put(k, v);
    }
  };
  auto store = std::make_shared<Counting>();
  pjrt::ClientOptions o;
  o.node_id = 0;
  o.num_nodes = 1;
  o.kv_store = store;
  pjrt::Client c(std::make_shared<pjrt::Api>(std::getenv("TORCH_PJRT_PLUGIN_PATH")), o);
  EXPECT_EQ(c.device_count(), 1u);
  std::vector<float> in{1, 2}, out(2);
  c.from_host(in.data(), PJRT_Buffer_Type_F32, {2})->to_host(out.data(), 8);
  EXPECT_EQ(in, out);
}
