// The device transport's meeting points (csrc/aten/distributed.cc has the
// backend): members of an in-process tpu_dist group, each on its own device,
// meet here per collective and per point-to-point message. Also the Works
// both transports return (host_transport.h has the host transport's own).
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <tuple>

#include "engine/launch.h"

namespace tpu {

// A Work that is its future: complete when the future is, wait() raising
// the future's error (both transports' asynchronous collectives).
class FutureWork : public c10d::Work {
 public:
  FutureWork(c10d::OpType op, c10::Device device)
      : Work(-1, op),
        future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()),
                                                         std::vector<c10::Device>{device})) {}
  bool isCompleted() override { return future_->completed(); }
  bool isSuccess() const override { return future_->completed() && !future_->hasError(); }
  bool wait(std::chrono::milliseconds) override {
    future_->wait();
    if (future_->hasError()) std::rethrow_exception(future_->exception_ptr());
    return true;
  }
  std::vector<at::Tensor> result() override {
    wait(std::chrono::milliseconds(0));  // no timeout
    return future_->value().toTensorVector();
  }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 protected:
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

// A finished collective: its outputs are in place on the device (either
// transport's collectives that end within the call).
class DoneWork : public c10d::Work {
 public:
  DoneWork(c10d::OpType op, std::vector<at::Tensor> outputs, c10::Device device)
      : Work(-1, op), outputs_(std::move(outputs)) {
    future_ = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()),
                                                       std::vector<c10::Device>{device});
    future_->markCompleted(c10::IValue(outputs_));
    finish();
  }
  bool isCompleted() override { return true; }
  bool isSuccess() const override { return true; }
  bool wait(std::chrono::milliseconds) override { return true; }
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

// A collective on the device transport: complete, with its future, when
// this member's replica has finished on the device (its results are device
// values from the launch on, read in launch order like any op's).
class DeviceWork : public FutureWork {
 public:
  DeviceWork(c10d::OpType op, std::vector<at::Tensor> outputs, c10::Device device, std::shared_ptr<pjrt::Event> done)
      : FutureWork(op, device), done_(std::move(done)) {
    // The plugin calls back on its own thread, which must never drop the
    // last reference to a tensor (destroying a buffer there deadlocks the
    // plugin): the callback moves the outputs on to a task of torch's
    // inter-op pool, which completes the future.
    auto pending = std::make_shared<Pending>(Pending{future_, done_, std::move(outputs)});
    done_->on_ready([pending] {
      at::launch([future = std::move(pending->future), done = std::move(pending->done),
                  outputs = std::move(pending->outputs)] {
        try {
          done->await("a collective");
          future->markCompleted(c10::IValue(outputs));
        } catch (...) {
          future->setError(std::current_exception());
        }
      });
    });
  }

 private:
  struct Pending {
    c10::intrusive_ptr<c10::ivalue::Future> future;
    std::shared_ptr<pjrt::Event> done;
    std::vector<at::Tensor> outputs;
  };
  std::shared_ptr<pjrt::Event> done_;
};

// The members of an in-process group meet on the host for each collective:
// the last to arrive launches every member's replica in one launch, and each
// member takes its own results. One launch lets the plugin schedule the
// replicas together; replicas launched one by one from their own threads
// can all be parked on its thread pool waiting for one that has no thread
// left to run on. A member that never comes is an error the others get after
// the group's timeout, as on the host transport (the plugin's own meeting
// point inside the program would abort the process).
class Meetings {
 public:
  using Launch = std::function<engine::Replicas(const std::vector<std::vector<engine::Ref>>&)>;
  struct Mine {
    std::vector<engine::Ref> values;
    std::shared_ptr<pjrt::Event> done;
  };

  Mine meet(int64_t id, int size, int rank, std::vector<engine::Ref> inputs, std::chrono::milliseconds timeout,
            const char* what, const Launch& launch) {
    std::unique_lock<std::mutex> lock(mu_);
    Meeting& m = meetings_[id];
    m.inputs.resize(size);
    m.inputs[rank] = std::move(inputs);
    if (++m.arrived == size) {
      lock.unlock();  // compiling and launching: other groups meet meanwhile
      try {
        m.results = launch(m.inputs);
      } catch (...) {
        m.error = std::current_exception();
      }
      lock.lock();
      m.done = true;
      cv_.notify_all();
    } else if (!cv_.wait_for(lock, timeout, [&] { return m.done; })) {
      const int arrived = m.arrived;
      if (--m.arrived == 0) meetings_.erase(id);
      TORCH_CHECK(false, "tpu_dist: ", what, " timed out after ", timeout.count(), " ms: ", arrived, " of ", size,
                  " members of the group arrived");
    }
    std::exception_ptr error = m.error;
    Mine mine;
    if (!error) mine = Mine{m.results.values.at(rank), m.results.done.at(rank)};
    if (++m.left == size) meetings_.erase(id);
    if (error) std::rethrow_exception(error);
    return mine;
  }

 private:
  struct Meeting {
    int arrived = 0;
    int left = 0;
    bool done = false;
    std::vector<std::vector<engine::Ref>> inputs;
    engine::Replicas results;
    std::exception_ptr error;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, Meeting> meetings_;
};
inline Meetings& meetings() {
  static auto& m = *new Meetings();  // leaked: members may still wait at exit
  return m;
}

// Point-to-point messages between members: a send leaves its value (a
// device value, computed or not) here; the matching recv takes it, in the
// order sent per (group, source, destination, tag), and copies it to its
// own device, device to device.
class Mailbox {
 public:
  void send(int group, int src, int dst, int tag, engine::Ref value) {
    std::lock_guard<std::mutex> g(mu_);
    box_[{group, src, dst, tag}].push_back(std::move(value));
    cv_.notify_all();
  }
  engine::Ref recv(int group, int src, int dst, int tag, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    auto& q = box_[{group, src, dst, tag}];
    TORCH_CHECK(cv_.wait_for(lock, timeout, [&] { return !q.empty(); }), "tpu_dist: recv from rank ", src,
                " timed out after ", timeout.count(), " ms");
    engine::Ref v = std::move(q.front());
    q.pop_front();
    return v;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::tuple<int, int, int, int>, std::deque<engine::Ref>> box_;
};
inline Mailbox& mailbox() {
  static auto& m = *new Mailbox();  // leaked like the meetings
  return m;
}

}  // namespace tpu
