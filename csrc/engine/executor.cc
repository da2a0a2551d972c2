// The launch queue's executor thread (see executor.h).
#include "engine/executor.h"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/launch.h"
#include "engine/timeline.h"

namespace engine {

namespace {

class Executor {
 public:
  void enqueue(std::vector<Ref> refs, std::function<void()> marker = nullptr) {
    std::unique_lock<std::mutex> l(mu_);
    rethrow_locked();
    push_locked(l, std::move(refs), std::move(marker));
  }

  void enqueue_quietly(std::vector<std::vector<Ref>> programs) {
    std::unique_lock<std::mutex> l(mu_);
    for (auto& refs : programs) push_locked(l, std::move(refs), nullptr);
  }

  void drain() {
    std::unique_lock<std::mutex> l(mu_);
    idle_.wait(l, [&] { return queue_.empty() && !busy_; });
    rethrow_locked();
  }

  void wait_idle() {
    std::unique_lock<std::mutex> l(mu_);
    idle_.wait(l, [&] { return queue_.empty() && !busy_; });
  }

  void raise_pending_error() {
    if (!failed_.load(std::memory_order_acquire)) return;  // per op: no lock on the common path
    std::lock_guard<std::mutex> l(mu_);
    rethrow_locked();
  }

  int64_t queued() {
    std::lock_guard<std::mutex> l(mu_);
    return static_cast<int64_t>(queue_.size()) + (busy_ ? 1 : 0);
  }

 private:
  static constexpr size_t kMaxQueued = 1024;
  static constexpr int kSpins = 200;

  void push_locked(std::unique_lock<std::mutex>& l, std::vector<Ref> refs, std::function<void()> marker) {
    start_locked();
    // A bound keeps a Python loop from running arbitrarily far ahead of the
    // device (and holding every queued graph alive). A full queue is let
    // drain to half before the producer resumes, so a long loop pays one
    // wake-up per kMaxQueued / 2 ops instead of one per op.
    if (queue_.size() >= kMaxQueued) {
      ++producers_waiting_;
      space_.wait(l, [&] { return queue_.size() <= kMaxQueued / 2; });
      --producers_waiting_;
    }
    queue_.push_back(Work{std::move(refs), std::move(marker), timeline::on() ? timeline::correlation() : 0});
    has_work_.store(true, std::memory_order_release);
    if (waiting_) work_.notify_one();
  }

  void rethrow_locked() {
    if (!error_) return;
    std::exception_ptr e = error_;
    error_ = nullptr;
    failed_.store(false, std::memory_order_release);
    std::rethrow_exception(e);
  }

  void start_locked() {
    if (started_) return;
    started_ = true;
    // Detached: the executor lives as long as the process (device buffers
    // must outlive static destruction, see Runtime).
    std::thread([this] {
      pthread_setname_np(pthread_self(), "tpu-executor");  // named in profilers and debuggers
      loop();
    }).detach();
  }

  void loop() {
    for (;;) {
      std::vector<Ref> refs;
      std::function<void()> marker;
      uint64_t correlation;
      bool skip;
      // Ops from a Python loop arrive a few microseconds apart: polling
      // briefly before sleeping spares the dispatching thread a futex wake
      // per op.
      for (int spin = 0; spin < kSpins && !has_work_.load(std::memory_order_acquire); ++spin) std::this_thread::yield();
      {
        std::unique_lock<std::mutex> l(mu_);
        waiting_ = true;
        work_.wait(l, [&] { return !queue_.empty(); });
        waiting_ = false;
        refs = std::move(queue_.front().refs);
        marker = std::move(queue_.front().marker);
        correlation = queue_.front().correlation;
        queue_.pop_front();
        has_work_.store(!queue_.empty(), std::memory_order_release);
        busy_ = !marker;  // a marker is no work of the device's
        skip = static_cast<bool>(error_);
        if (producers_waiting_ && queue_.size() <= kMaxQueued / 2) space_.notify_all();
      }
      if (marker) {
        marker();  // runs even after a failure: waiting on an event must end
      } else if (!skip) {
        try {
          timeline::CorrelationScope op(correlation);
          materialize(refs);
        } catch (...) {
          std::lock_guard<std::mutex> l(mu_);
          if (!error_) error_ = std::current_exception();
          failed_.store(true, std::memory_order_release);
        }
      }
      refs.clear();  // may free the graph behind it: outside the lock
      std::lock_guard<std::mutex> l(mu_);
      busy_ = false;
      if (queue_.empty()) idle_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable work_, idle_, space_;
  struct Work {
    std::vector<Ref> refs;
    std::function<void()> marker;  // set instead of refs for a marker
    uint64_t correlation;          // the host op that queued it, for the timeline
  };
  std::deque<Work> queue_;
  bool busy_ = false;
  bool waiting_ = false;       // the executor sleeps on work_
  int producers_waiting_ = 0;  // threads blocked on a full queue
  std::atomic<bool> has_work_{false};
  bool started_ = false;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};  // error_ is set
};

// Leaked on purpose, like the runtime: the thread never exits.
Executor& executor() {
  static Executor* e = new Executor();
  return *e;
}

}  // namespace

void enqueue(std::vector<Ref> refs) { executor().enqueue(std::move(refs)); }
void enqueue_quietly(std::vector<std::vector<Ref>> programs) { executor().enqueue_quietly(std::move(programs)); }
void drain() { executor().drain(); }
void raise_pending_error() { executor().raise_pending_error(); }
void wait_idle() { executor().wait_idle(); }
void enqueue_marker(std::function<void()> fn) { executor().enqueue({}, std::move(fn)); }
int64_t queued() { return executor().queued(); }

}  // namespace engine
