// Device buffers: their memory accounting (live and peak bytes per
// device), reads to the host, and their destruction, which for donated
// buffers runs on a thread of its own so a release never waits on a
// program that has not started.
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "pjrt/api_args.h"
#include "pjrt/runtime.h"

namespace pjrt {

namespace {
// Index kMaxDevices: every device together.
std::atomic<int64_t> g_live[kMaxDevices + 1], g_peak[kMaxDevices + 1];
int slot(int device) { return device < 0 || device >= kMaxDevices ? kMaxDevices : device; }
void add(int i, int64_t delta) {
  int64_t now = g_live[i].fetch_add(delta) + delta;
  int64_t peak = g_peak[i].load();
  while (now > peak && !g_peak[i].compare_exchange_weak(peak, now)) {
  }
}
void count(int device, int64_t delta) {
  add(kMaxDevices, delta);
  if (slot(device) != kMaxDevices) add(slot(device), delta);
}
}  // namespace
int64_t live_bytes(int device) { return g_live[slot(device)].load(); }
int64_t peak_bytes(int device) { return g_peak[slot(device)].load(); }
void reset_peak_bytes(int device) {
  if (device >= 0) {
    g_peak[slot(device)].store(g_live[slot(device)].load());
    return;
  }
  for (int i = 0; i <= kMaxDevices; ++i) g_peak[i].store(g_live[i].load());
}

Buffer::Buffer(const Api* api, PJRT_Buffer* b, int64_t bytes, int device)
    : api_(api), buf_(b), bytes_(bytes), device_(device) {
  count(device_, bytes);
}

namespace {

void destroy(const PJRT_Api* api, PJRT_Buffer* b) {
  // A forked child's copies of the parent's buffers are the parent's to
  // destroy, and the plugin's threads a destroy may wait on stayed there.
  if (in_forked_child()) return;
  auto d = PJRT_ARGS(PJRT_Buffer_Destroy_Args);
  d.buffer = b;
  if (PJRT_Error* e = api->PJRT_Buffer_Destroy(&d)) {
    PJRT_Error_Code c;
    error_text(api, e, &c);  // nothing sensible to do in a destructor
  }
}

// Destroying the handle of a buffer donated to a program that has not yet
// started blocks: XLA:CPU waits for that program to start. A decode loop's
// host froze that way for most of a step, freeing the previous step's graph
// while the engine held its launch lock, so the next step was planned and
// launched only once the device had gone idle. Donated buffers are
// therefore destroyed on this one thread, in the order they were released;
// others (which do not wait) where released, as a wake of this thread costs
// more than their destroy (strict mode's add of one element took 12 us
// instead of 3.4 with every buffer sent here). From the process's exit on,
// all are destroyed where released.
class Releaser {
 public:
  static Releaser& get() {
    static Releaser* r = new Releaser();  // lives for the process, as the buffers do
    return *r;
  }

  void release(const PJRT_Api* api, PJRT_Buffer* b) {
    // A forked child has no releasing thread (see destroy()).
    if (in_forked_child()) return;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!exiting_) {
        queue_.emplace_back(api, b);
        wake_.notify_one();
        return;
      }
    }
    destroy(api, b);
  }

  void flush() {
    if (in_forked_child()) return;
    std::unique_lock<std::mutex> l(mu_);
    done_.wait(l, [&] { return queue_.empty() && idle_; });
  }

 private:
  // Made when the first buffer is released, so after the plugin's own
  // statics: its exit handler runs before they are torn down.
  Releaser() {
    std::atexit([] { get().at_exit(); });
    std::thread([this] { loop(); }).detach();
  }

  void at_exit() {
    flush();
    std::lock_guard<std::mutex> l(mu_);
    exiting_ = true;
  }

  void loop() {
    pthread_setname_np(pthread_self(), "tpu-release");
    std::vector<std::pair<const PJRT_Api*, PJRT_Buffer*>> batch;
    for (;;) {
      {
        std::unique_lock<std::mutex> l(mu_);
        idle_ = true;
        done_.notify_all();
        wake_.wait(l, [&] { return !queue_.empty(); });
        idle_ = false;
        batch.swap(queue_);
      }
      for (const auto& [api, b] : batch) destroy(api, b);
      batch.clear();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<std::pair<const PJRT_Api*, PJRT_Buffer*>> queue_;
  bool idle_ = false;  // the thread waits for work, none queued
  bool exiting_ = false;
};

}  // namespace

void flush_releases() { Releaser::get().flush(); }

Buffer::~Buffer() {
  if (!donated_) {
    count(device_, -bytes_);
    destroy(api_->raw(), buf_);
    return;
  }
  Releaser::get().release(api_->raw(), buf_);
}

void Buffer::set_donated(bool donated) {
  if (donated == donated_) return;
  donated_ = donated;
  count(device_, donated ? -bytes_ : bytes_);
}

PJRT_Buffer_Type Buffer::element_type() const {
  auto a = PJRT_ARGS(PJRT_Buffer_ElementType_Args);
  a.buffer = buf_;
  api_->check(api_->raw()->PJRT_Buffer_ElementType(&a), "PJRT_Buffer_ElementType");
  return a.type;
}

std::vector<int64_t> Buffer::dims() const {
  auto a = PJRT_ARGS(PJRT_Buffer_Dimensions_Args);
  a.buffer = buf_;
  api_->check(api_->raw()->PJRT_Buffer_Dimensions(&a), "PJRT_Buffer_Dimensions");
  return std::vector<int64_t>(a.dims, a.dims + a.num_dims);
}

size_t Buffer::on_device_bytes() const {
  auto a = PJRT_ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args);
  a.buffer = buf_;
  api_->check(api_->raw()->PJRT_Buffer_OnDeviceSizeInBytes(&a), "PJRT_Buffer_OnDeviceSizeInBytes");
  return a.on_device_size_in_bytes;
}

void Buffer::to_host(void* dst, size_t nbytes) const {
  if (read_in_place(dst, nbytes)) return;
  auto a = PJRT_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  a.src = buf_;
  a.dst = dst;
  a.dst_size = nbytes;
  api_->check(api_->raw()->PJRT_Buffer_ToHostBuffer(&a), "copying a device buffer to the host");
  Event(api_, a.event).await("copying a device buffer to the host");
}

// XLA:CPU queues its own device-to-host copy on the client's worker threads,
// behind any program running or queued there: with one worker (NPROC=1)
// reading a small value waited for the whole program launched after its
// producer (a decode loop's read of step n's check waited for step n + 1
// too). A buffer in host memory is copied directly once it is computed.
bool Buffer::read_in_place(void* dst, size_t nbytes) const {
  if (!api_->host_memory() || nbytes == 0 || nbytes != on_device_bytes()) return false;
  const PJRT_Api* raw = api_->raw();
  if (!raw->PJRT_Buffer_GetMemoryLayout || !raw->PJRT_Buffer_UnsafePointer) return false;
  auto r = PJRT_ARGS(PJRT_Buffer_ReadyEvent_Args);
  r.buffer = buf_;
  if (!api_->ok(raw->PJRT_Buffer_ReadyEvent(&r))) return false;
  Event ready(api_, r.event);
  ready.await("copying a device buffer to the host");  // the producer's failure, as the plugin's copy reports it
  auto l = PJRT_ARGS(PJRT_Buffer_GetMemoryLayout_Args);
  l.buffer = buf_;
  if (!api_->ok(raw->PJRT_Buffer_GetMemoryLayout(&l)) || l.layout.type != PJRT_Buffer_MemoryLayout_Type_Tiled ||
      l.layout.tiled.num_tiles != 0)
    return false;
  const size_t rank = l.layout.tiled.minor_to_major_size;
  for (size_t i = 0; i < rank; ++i)
    if (l.layout.tiled.minor_to_major[i] != static_cast<int64_t>(rank - 1 - i)) return false;
  auto u = PJRT_ARGS(PJRT_Buffer_UnsafePointer_Args);
  u.buffer = buf_;
  if (!api_->ok(raw->PJRT_Buffer_UnsafePointer(&u)) || !u.buffer_pointer) return false;
  std::memcpy(dst, reinterpret_cast<const void*>(u.buffer_pointer), nbytes);
  return true;
}

void Buffer::await_ready(const std::string& context) const {
  auto a = PJRT_ARGS(PJRT_Buffer_ReadyEvent_Args);
  a.buffer = buf_;
  api_->check(api_->raw()->PJRT_Buffer_ReadyEvent(&a), context);
  Event(api_, a.event).await(context);
}

}  // namespace pjrt
