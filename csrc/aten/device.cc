// The tpu device as PyTorch sees it: PrivateUse1's allocator, device guard,
// hooks and default generators.
#include "aten/device.h"

#include <ATen/core/GeneratorForPrivateuseone.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>

#include "aten/errors.h"
#include "aten/tensor.h"
#include "engine/event.h"
#include "engine/mode.h"
#include "engine/runtime.h"
#include "ops/view/view.h"
#include "pjrt/runtime.h"

namespace tpu {

namespace {

thread_local c10::DeviceIndex t_current = 0;

// Streams: each thread's current stream per device (0, the default, until
// set), and ids for new ones. See engine/event.h for what a stream orders.
constexpr int kMaxDevices = 64;
thread_local c10::StreamId t_stream[kMaxDevices] = {};
std::atomic<c10::StreamId> g_next_stream{1};

c10::StreamId& current_stream_id(c10::DeviceIndex i) {
  TORCH_CHECK(i >= 0 && i < kMaxDevices, "invalid tpu device index ", static_cast<int>(i));
  return t_stream[i];
}

// A stream asked for "the current device" names it.
c10::Device resolved(c10::Device d) { return d.index() < 0 ? c10::Device(c10::DeviceType::PrivateUse1, t_current) : d; }

engine::DeviceEvent* as_event(void* e) { return static_cast<engine::DeviceEvent*>(e); }

}  // namespace

// (free, total) bytes of a device's memory: from the plugin where it
// reports a limit (TPU, GPU), else the host's (XLA:CPU keeps buffers in
// host RAM), MemAvailable as the free part.
std::pair<size_t, size_t> memory_info(c10::DeviceIndex device) {
  pjrt::Client& c = guarded("starting the PJRT runtime", [] { return &engine::Runtime::get(); })->client();
  TORCH_CHECK_INDEX(device >= 0 && device < static_cast<int>(c.device_count()), "invalid tpu device index ",
                    static_cast<int>(device), " (", c.device_count(), " device(s) available)");
  pjrt::MemoryStats m = c.memory_stats(device);
  if (m.bytes_limit > 0)
    return {static_cast<size_t>(std::max<int64_t>(m.bytes_limit - std::max<int64_t>(m.bytes_in_use, 0), 0)),
            static_cast<size_t>(m.bytes_limit)};
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGE_SIZE));
  const size_t total = page * static_cast<size_t>(sysconf(_SC_PHYS_PAGES));
  size_t free = page * static_cast<size_t>(sysconf(_SC_AVPHYS_PAGES));
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  size_t kib;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") {
      free = kib * 1024;
      break;
    }
    meminfo.ignore(256, '\n');
  }
  return {free, total};
}

namespace {

// Allocation makes only the handle: device memory appears when a value is
// first stored. The pointer is the handle's tag (StorageState::address()),
// an identity that is never dereferenced. A DeviceAllocator, so torch.accelerator's memory
// calls (empty_cache, memory_stats, get_memory_info) reach it: there is no
// cache to trim (a buffer is freed when its last value dies), and the
// statistics are the runtime's live and peak device bytes.
struct Allocator final : c10::DeviceAllocator {
  c10::DataPtr allocate(size_t nbytes) override {
    StorageState* s = StorageState::make(nbytes);
    return {s->address(), s, &StorageState::release, c10::Device(c10::DeviceType::PrivateUse1, t_current)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &StorageState::release; }
  void copy_data(void*, const void*, std::size_t) const override {
    TORCH_CHECK(false, "tpu storages cannot be copied as raw memory; use Tensor.copy_");
  }

  bool initialized() override { return true; }
  // Waits for queued work, whose frees then complete.
  void emptyCache(c10::MempoolId_t) override {
    guarded("synchronizing", [] { engine::synchronize(); });
  }
  // A buffer lives while any queued program reads it: no stream to track.
  void recordStream(const c10::DataPtr&, c10::Stream) override {}
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    // Queued ops have no buffers yet; CUDA counts an output from its launch.
    guarded("running queued ops", [] { engine::flush(); });
    c10::CachingDeviceAllocator::DeviceStats d;
    const int64_t live = pjrt::live_bytes(device), peak = pjrt::peak_bytes(device);
    for (auto* a : {&d.allocated_bytes, &d.reserved_bytes, &d.active_bytes, &d.requested_bytes}) {
      auto& all = (*a)[static_cast<size_t>(c10::CachingDeviceAllocator::StatType::AGGREGATE)];
      all.current = live;
      all.peak = peak;
    }
    return d;
  }
  void resetAccumulatedStats(c10::DeviceIndex) override {}
  void resetPeakStats(c10::DeviceIndex device) override { pjrt::reset_peak_bytes(device); }
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override { return memory_info(device); }
};

Allocator g_allocator;

// Pinned host memory: what DataLoader(pin_memory=True), Tensor.pin_memory()
// and DDP's map of used parameters allocate for staging. PJRT copies from
// any host memory (the plugin stages it as it needs), so these are ordinary
// aligned host blocks; what makes them pinned is that isPinnedPtr knows
// them, which PyTorch checks.
struct PinnedAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    void* p = nullptr;
    if (nbytes > 0 && posix_memalign(&p, 64, nbytes) != 0)
      TORCH_CHECK_WITH(OutOfMemoryError, false, "out of host memory pinning ", nbytes, " bytes");
    if (p) {
      std::lock_guard<std::mutex> g(mu());
      blocks()[reinterpret_cast<uintptr_t>(p)] = nbytes;
    }
    return {p, p, &release, c10::Device(c10::DeviceType::CPU)};
  }
  static void release(void* p) {
    if (!p) return;
    {
      std::lock_guard<std::mutex> g(mu());
      blocks().erase(reinterpret_cast<uintptr_t>(p));
    }
    free(p);
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dst, const void* src, std::size_t n) const override { std::memcpy(dst, src, n); }
  static bool owns(const void* ptr) {
    const auto a = reinterpret_cast<uintptr_t>(ptr);
    std::lock_guard<std::mutex> g(mu());
    auto it = blocks().upper_bound(a);
    if (it == blocks().begin()) return false;
    --it;
    return a < it->first + std::max<size_t>(it->second, 1);
  }

 private:
  static std::mutex& mu() {
    static std::mutex m;
    return m;
  }
  static std::map<uintptr_t, size_t>& blocks() {  // start -> size
    static std::map<uintptr_t, size_t> b;
    return b;
  }
};

PinnedAllocator g_pinned;

struct GuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return c10::DeviceType::PrivateUse1; }
  c10::Device exchangeDevice(c10::Device d) const override {
    c10::Device old = getDevice();
    setDevice(d);
    return old;
  }
  c10::Device getDevice() const override { return c10::Device(c10::DeviceType::PrivateUse1, t_current); }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.index() >= 0 && d.index() < device_count(), "invalid tpu device index ", static_cast<int>(d.index()),
                " (", device_count(), " device(s) available)");
    t_current = d.index();
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override { t_current = d.index(); }
  c10::Stream getStream(c10::Device d) const override {
    d = resolved(d);
    return c10::Stream(c10::Stream::UNSAFE, d, current_stream_id(d.index()));
  }
  c10::Stream getDefaultStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, resolved(d)); }
  c10::Stream getNewStream(c10::Device d, int) const override {
    return c10::Stream(c10::Stream::UNSAFE, resolved(d), g_next_stream.fetch_add(1));
  }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override { return getNewStream(d, 0); }
  c10::Stream exchangeStream(c10::Stream s) const override {
    const c10::Device d = resolved(s.device());
    c10::StreamId& cur = current_stream_id(d.index());
    c10::Stream old(c10::Stream::UNSAFE, d, cur);
    cur = s.id();
    return old;
  }
  void record(void** event, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag flag) const override {
    if (!*event) *event = new engine::DeviceEvent(flag == c10::EventFlag::BACKEND_DEFAULT);
    guarded("recording an event", [&] { as_event(*event)->record(); });
  }
  // Work on every stream runs in launch order: nothing to wait for.
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void* event) const override { return !event || as_event(event)->query(); }
  void synchronizeEvent(void* event) const override {
    if (event) guarded("waiting for an event", [&] { as_event(event)->synchronize(); });
  }
  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override { delete as_event(event); }
  double elapsedTime(void* start, void* end, const c10::DeviceIndex) const override {
    TORCH_CHECK(start && end, "Both events must be recorded before calculating elapsed time.");
    return guarded("timing events", [&] { return engine::DeviceEvent::elapsed_ms(*as_event(start), *as_event(end)); });
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    try {
      return device_count();
    } catch (...) {
      return 0;
    }
  }
  void synchronizeDevice(const c10::DeviceIndex) const override { synchronize(); }
  void synchronizeStream(const c10::Stream&) const override { synchronize(); }
  bool queryStream(const c10::Stream&) const override { return !engine::device_busy(); }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

struct Generator final : c10::GeneratorImpl {
  explicit Generator(c10::DeviceIndex i)
      : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, i),
                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)) {}
  void set_current_seed(uint64_t s) override {
    seed_ = s;
    offset_ = 0;
  }
  void set_offset(uint64_t o) override { offset_ = o; }
  uint64_t get_offset() const override { return offset_; }
  uint64_t current_seed() const override { return seed_; }
  uint64_t seed() override {
    set_current_seed(c10::detail::getNonDeterministicRandom());
    return seed_;
  }
  // State: 16 bytes (seed, offset), like the CUDA generator's philox state.
  void set_state(const c10::TensorImpl& st) override {
    TORCH_CHECK(st.numel() == 16 && st.dtype() == at::kByte, "tpu generator state must be 16 bytes");
    const uint64_t* p = static_cast<const uint64_t*>(st.data());
    seed_ = p[0];
    offset_ = p[1];
  }
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override {
    at::Tensor t = at::empty({16}, at::kByte);
    uint64_t* p = static_cast<uint64_t*>(t.data_ptr());
    p[0] = seed_;
    p[1] = offset_;
    return t.getIntrusivePtr();
  }
  Generator* clone_impl() const override {
    auto* g = new Generator(device().index());
    g->seed_ = seed_;
    g->offset_ = offset_;
    return g;
  }
  uint64_t seed_ = 67280421310721ull;
  uint64_t offset_ = 0;
};

const at::Generator& default_generator(c10::DeviceIndex i) {
  static std::vector<at::Generator> gens = [] {
    std::vector<at::Generator> v;
    for (int k = 0; k < std::max<int>(1, device_count()); ++k)
      v.push_back(at::make_generator<Generator>(static_cast<c10::DeviceIndex>(k)));
    return v;
  }();
  if (i < 0) i = t_current;
  TORCH_CHECK(i < static_cast<int>(gens.size()), "invalid tpu device index ", static_cast<int>(i));
  return gens[i];
}

struct Hooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return is_available(); }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex i) const override { return default_generator(i); }
  at::Generator getNewGenerator(c10::DeviceIndex i) const override {
    return at::make_generator<Generator>(i < 0 ? t_current : i);
  }
  at::Device getDeviceFromPtr(void*) const override { return at::Device(c10::DeviceType::PrivateUse1, t_current); }
  bool isPinnedPtr(const void* p) const override { return PinnedAllocator::owns(p); }
  c10::Allocator* getPinnedMemoryAllocator() const override { return &g_pinned; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return engine::Runtime::initialized(); }
  c10::DeviceIndex deviceCount() const override { return device_count(); }
  void setCurrentDevice(c10::DeviceIndex d) const override { t_current = d; }
  c10::DeviceIndex getCurrentDevice() const override { return t_current; }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    auto old = t_current;
    t_current = d;
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override { return exchangeDevice(d); }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    resize_storage_bytes(storage, newsize);
  }
};

struct Registrar {
  Registrar() {
    c10::SetAllocator(c10::DeviceType::PrivateUse1, &g_allocator);
    static Hooks hooks;
    at::RegisterPrivateUse1HooksInterface(&hooks);
  }
} g_registrar;

}  // namespace

c10::Allocator* allocator() { return &g_allocator; }

at::Generator& generator_or_default(const std::optional<at::Generator>& g, c10::DeviceIndex i) {
  if (g.has_value() && g->defined()) return const_cast<at::Generator&>(*g);
  return const_cast<at::Generator&>(default_generator(i));
}

std::pair<uint64_t, uint64_t> next_random_key(at::Generator& gen) {
  auto* g = gen.get<Generator>();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return {g->seed_, g->offset_++};
}

c10::DeviceIndex current_device() { return t_current; }

int device_count() {
  // A forked child is told the parent's devices, as CUDA's is, though it
  // cannot use them.
  if (pjrt::in_forked_child()) return engine::Runtime::known_device_count();
  // Counting devices must not fail: with no plugin there are no devices.
  try {
    return static_cast<int>(engine::Runtime::get().client().device_count());
  } catch (...) {
    return 0;
  }
}

c10::Device device_or_current(std::optional<at::Device> d) {
  if (d.has_value() && d->has_index()) return *d;
  return c10::Device(c10::DeviceType::PrivateUse1, current_device());
}

bool is_tpu_storage(const c10::DataPtr& p) { return p.get_deleter() == &StorageState::release; }

bool is_available() { return device_count() > 0; }

void check_device(const c10::Device& d) {
  auto& rt = guarded("starting the PJRT runtime", [] { return &engine::Runtime::get(); })->client();
  TORCH_CHECK(d.index() >= 0 && d.index() < static_cast<int>(rt.device_count()), "invalid tpu device index ",
              static_cast<int>(d.index()), " (", rt.device_count(), " device(s) available)");
}

void resize_storage_bytes(const c10::Storage& storage, size_t newsize) {
  auto* s = is_tpu_storage(storage.data_ptr()) ? static_cast<StorageState*>(storage.data_ptr().get_context()) : nullptr;
  TORCH_CHECK(s, "not a tpu storage");
  if (s->value() && newsize != s->nbytes) {
    unpad_storage(*s);
    // Keep the content as bytes, cut or zero-extended.
    engine::Ref bytes = s->value();
    int64_t n = static_cast<int64_t>(newsize);
    s->value() = engine::op1(
        "resize_bytes", {bytes}, shlo::Type{shlo::DType::U8, {n}},
        [](shlo::Builder& b, const std::vector<shlo::Value>& in, int64_t n) {
          shlo::Value u8 = ops::reinterpret_flat(b, in[0], shlo::DType::U8);
          int64_t have = u8.shape()[0];
          if (have >= n) return std::vector<shlo::Value>{b.slice(u8, {0}, {n}, {1})};
          return std::vector<shlo::Value>{b.pad(u8, b.zero(shlo::DType::U8), {0}, {n - have}, {0})};
        },
        n);
    engine::commit(s->slot());
  }
  s->nbytes = newsize;
  storage.unsafeGetStorageImpl()->set_nbytes(newsize);
}

void synchronize() { engine::synchronize(); }

}  // namespace tpu
