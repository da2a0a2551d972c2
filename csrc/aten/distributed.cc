// The c10d backend "tpu_dist": torch.distributed's collectives on tpu
// tensors, so DDP, FSDP2, DTensor, functional collectives and transformers'
// tensor parallelism run unchanged (they find a backend by device type).
//
// This is its host transport, for peers the PJRT client cannot reach
// itself (XLA:CPU across processes): each collective copies its tpu tensors
// to the host, runs there on a gloo backend built on the same store, and
// copies the results back. Gloo lacks AVG, so an average is a sum divided
// by the group size on the host. The call returns once the inputs are on
// the host: gloo runs the exchange on its own threads while the caller goes
// on (DDP keeps computing gradients), and the Work and its future complete
// when the results are back in the tpu tensors. A peer that dies makes gloo
// fail the collective with its error within the group's timeout, raised by
// wait().
#include "aten/distributed.h"

#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/utils/pybind.h>

#include <atomic>
#include <memory>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "aten/errors.h"
#include "engine/graph.h"
#include "engine/runtime.h"
#include "pjrt/kv_store.h"

namespace tpu {

namespace {

namespace py = pybind11;
using c10d::OpType;
using c10d::ReduceOp;
using c10d::Work;

std::atomic<int64_t> g_host_collectives{0};
std::atomic<int64_t> g_host_bytes{0};

// A finished collective: its outputs are in place on the device.
class DoneWork : public Work {
 public:
  DoneWork(OpType op, std::vector<at::Tensor> outputs, c10::Device device)
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

// Host copies of one collective's tensors, and which go back.
class Staging {
 public:
  // A tensor the collective reads (and, if `written`, overwrites).
  at::Tensor in(const at::Tensor& t, bool written = false) {
    at::Tensor h = t.to(at::kCPU).contiguous();
    g_host_bytes.fetch_add(static_cast<int64_t>(h.nbytes()), std::memory_order_relaxed);
    if (written) pairs_.push_back({t, h});
    return h;
  }
  // A tensor the collective only writes.
  at::Tensor out(const at::Tensor& t) {
    at::Tensor h = at::empty(t.sizes(), t.options().device(at::kCPU));
    pairs_.push_back({t, h});
    return h;
  }
  std::vector<at::Tensor> in(const std::vector<at::Tensor>& ts, bool written = false) {
    std::vector<at::Tensor> h;
    for (const auto& t : ts) h.push_back(in(t, written));
    return h;
  }
  std::vector<at::Tensor> out(const std::vector<at::Tensor>& ts) {
    std::vector<at::Tensor> h;
    for (const auto& t : ts) h.push_back(out(t));
    return h;
  }
  // Lists of lists (allgather's outputs, scatter's inputs), each staged.
  std::vector<std::vector<at::Tensor>> in(const std::vector<std::vector<at::Tensor>>& lists) {
    std::vector<std::vector<at::Tensor>> h;
    for (const auto& ts : lists) h.push_back(in(ts));
    return h;
  }
  std::vector<std::vector<at::Tensor>> out(const std::vector<std::vector<at::Tensor>>& lists) {
    std::vector<std::vector<at::Tensor>> h;
    for (const auto& ts : lists) h.push_back(out(ts));
    return h;
  }
  // Divides every host result by n (AVG as SUM / n).
  void average(int n) {
    for (auto& [d, h] : pairs_) {
      TORCH_CHECK(at::isFloatingType(h.scalar_type()) || at::isComplexType(h.scalar_type()),
                  "ReduceOp.AVG needs floating point tensors, got ", h.scalar_type());
      h.div_(n);
    }
  }
  // Once the exchange has ended: averages if `average_by` > 0, writes the
  // results into the tpu tensors and counts the collective.
  void finish(int average_by) {
    if (average_by > 0) average(average_by);
    copy_back();
    g_host_collectives.fetch_add(1, std::memory_order_relaxed);
  }
  void copy_back() {
    for (auto& [d, h] : pairs_) {
      g_host_bytes.fetch_add(static_cast<int64_t>(h.nbytes()), std::memory_order_relaxed);
      d.copy_(h);
    }
  }
  std::vector<at::Tensor> results() const {
    std::vector<at::Tensor> r;
    for (const auto& [d, h] : pairs_) r.push_back(d);
    return r;
  }

 private:
  std::vector<std::pair<at::Tensor, at::Tensor>> pairs_;
};

// A collective in flight on the host transport: complete, with its future,
// once gloo's exchange has ended and the results are averaged (if asked)
// and copied back into the tpu tensors; that last step runs on the thread
// that ends gloo's work.
class HostWork : public Work {
 public:
  HostWork(OpType op, c10::intrusive_ptr<c10::ivalue::Future> exchanged, std::shared_ptr<Staging> staging,
           int average_by, c10::Device device)
      : Work(-1, op), exchanged_(std::move(exchanged)) {
    future_ = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()),
                                                       std::vector<c10::Device>{device});
    exchanged_->addCallback([done = future_, staging = std::move(staging), average_by](c10::ivalue::Future& f) {
      if (f.hasError()) {
        done->setError(f.exception_ptr());
        return;
      }
      try {
        staging->finish(average_by);
        done->markCompleted(c10::IValue(staging->results()));
      } catch (...) {
        done->setError(std::current_exception());
      }
    });
  }
  bool isCompleted() override { return future_->completed(); }
  bool isSuccess() const override { return future_->completed() && !future_->hasError(); }
  // Gloo bounds the exchange by the group's timeout and fails it then.
  bool wait(std::chrono::milliseconds) override {
    future_->wait();
    if (future_->hasError()) std::rethrow_exception(future_->exception_ptr());
    return true;
  }
  std::vector<at::Tensor> result() override {
    wait(kNoTimeout);
    return future_->value().toTensorVector();
  }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  c10::intrusive_ptr<c10::ivalue::Future> exchanged_;  // gloo's, held while its callback is pending
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

class TpuDistBackend : public c10d::Backend {
 public:
  TpuDistBackend(c10::intrusive_ptr<c10d::Backend> host, int rank, int size, c10::DeviceIndex device)
      : Backend(rank, size), host_(std::move(host)), device_(c10::DeviceType::PrivateUse1, device) {}

  const std::string getBackendName() const override { return "tpu_dist"; }

  c10::intrusive_ptr<Work> broadcast(std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) override {
    return run(OpType::BROADCAST, [&](Staging& s) {
      auto h = s.in(tensors, true);
      return host_->broadcast(h, opts);
    });
  }

  c10::intrusive_ptr<Work> allreduce(std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) override {
    return run(
        OpType::ALLREDUCE,
        [&](Staging& s) {
          auto h = s.in(tensors, true);
          return host_->allreduce(h, sum_for_avg(opts));
        },
        averaging(opts.reduceOp));
  }

  c10::intrusive_ptr<Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                               const c10d::AllreduceCoalescedOptions& opts) override {
    return run(
        OpType::ALLREDUCE_COALESCED,
        [&](Staging& s) {
          auto h = s.in(tensors, true);
          return host_->allreduce_coalesced(h, sum_for_avg(opts));
        },
        averaging(opts.reduceOp));
  }

  c10::intrusive_ptr<Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override {
    return run(
        OpType::REDUCE,
        [&](Staging& s) {
          auto h = s.in(tensors, true);
          return host_->reduce(h, sum_for_avg(opts));
        },
        averaging(opts.reduceOp));
  }

  c10::intrusive_ptr<Work> allgather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                     const c10d::AllgatherOptions& opts) override {
    return run(OpType::ALLGATHER, [&](Staging& s) {
      auto ho = s.out(outputs);
      auto hi = s.in(inputs);
      return host_->allgather(ho, hi, opts);
    });
  }

  c10::intrusive_ptr<Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                           const c10d::AllgatherOptions& opts) override {
    return run(OpType::_ALLGATHER_BASE, [&](Staging& s) {
      at::Tensor ho = s.out(output), hi = s.in(input);
      return host_->_allgather_base(ho, hi, opts);
    });
  }

  c10::intrusive_ptr<Work> allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::AllgatherOptions& opts) override {
    return run(OpType::COALESCED, [&](Staging& s) {
      auto ho = s.out(outputs);
      auto hi = s.in(inputs);
      return host_->allgather_into_tensor_coalesced(ho, hi, opts);
    });
  }

  c10::intrusive_ptr<Work> gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                  const c10d::GatherOptions& opts) override {
    return run(OpType::GATHER, [&](Staging& s) {
      auto ho = s.out(outputs);
      auto hi = s.in(inputs);
      return host_->gather(ho, hi, opts);
    });
  }

  c10::intrusive_ptr<Work> scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                   const c10d::ScatterOptions& opts) override {
    return run(OpType::SCATTER, [&](Staging& s) {
      auto ho = s.out(outputs);
      auto hi = s.in(inputs);
      return host_->scatter(ho, hi, opts);
    });
  }

  c10::intrusive_ptr<Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                          std::vector<std::vector<at::Tensor>>& inputs,
                                          const c10d::ReduceScatterOptions& opts) override {
    return run(
        OpType::REDUCE_SCATTER,
        [&](Staging& s) {
          auto ho = s.out(outputs);
          auto hi = s.in(inputs);
          return host_->reduce_scatter(ho, hi, sum_for_avg(opts));
        },
        averaging(opts.reduceOp));
  }

  c10::intrusive_ptr<Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                const c10d::ReduceScatterOptions& opts) override {
    return run(
        OpType::_REDUCE_SCATTER_BASE,
        [&](Staging& s) {
          at::Tensor ho = s.out(output), hi = s.in(input);
          return host_->_reduce_scatter_base(ho, hi, sum_for_avg(opts));
        },
        averaging(opts.reduceOp));
  }

  c10::intrusive_ptr<Work> reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::ReduceScatterOptions& opts) override {
    return run(
        OpType::REDUCE_SCATTER_TENSOR_COALESCED,
        [&](Staging& s) {
          auto ho = s.out(outputs);
          auto hi = s.in(inputs);
          return host_->reduce_scatter_tensor_coalesced(ho, hi, sum_for_avg(opts));
        },
        averaging(opts.reduceOp));
  }

  c10::intrusive_ptr<Work> alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_splits,
                                         std::vector<int64_t>& input_splits,
                                         const c10d::AllToAllOptions& opts) override {
    return run(OpType::ALLTOALL_BASE, [&](Staging& s) {
      at::Tensor ho = s.out(output), hi = s.in(input);
      return host_->alltoall_base(ho, hi, output_splits, input_splits, opts);
    });
  }

  c10::intrusive_ptr<Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                    const c10d::AllToAllOptions& opts) override {
    return run(OpType::ALLTOALL, [&](Staging& s) {
      auto ho = s.out(outputs);
      auto hi = s.in(inputs);
      return host_->alltoall(ho, hi, opts);
    });
  }

  c10::intrusive_ptr<Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override {
    return run(OpType::SEND, [&](Staging& s) {
      auto h = s.in(tensors);
      return host_->send(h, dst, tag);
    });
  }

  c10::intrusive_ptr<Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override {
    return run(OpType::RECV, [&](Staging& s) {
      auto h = s.out(tensors);
      return host_->recv(h, src, tag);
    });
  }

  c10::intrusive_ptr<Work> barrier(const c10d::BarrierOptions& opts) override {
    // Everything issued before the barrier is done before it, as on CUDA.
    guarded("synchronizing before a barrier", [] { engine::synchronize(); });
    c10d::BarrierOptions o = opts;
    o.device_ids.clear();  // the host group's devices are the CPU's
    auto w = host_->barrier(o);
    w->wait();
    g_host_collectives.fetch_add(1, std::memory_order_relaxed);
    return c10::make_intrusive<DoneWork>(OpType::BARRIER, std::vector<at::Tensor>{}, device_);
  }

 private:
  static bool averaging(const ReduceOp& op) { return op == ReduceOp::AVG; }
  template <typename Opts>
  static Opts sum_for_avg(const Opts& opts) {
    Opts o = opts;
    if (averaging(opts.reduceOp)) o.reduceOp = ReduceOp::SUM;
    return o;
  }

  template <typename Call>
  c10::intrusive_ptr<Work> run(OpType op, Call&& call, bool average = false) {
    auto s = std::make_shared<Staging>();
    c10::intrusive_ptr<Work> w = call(*s);
    c10::intrusive_ptr<c10::ivalue::Future> exchanged;
    try {
      exchanged = w->getFuture();
    } catch (const c10::Error&) {
      // Gloo's point-to-point works have no future: finished here.
      w->wait();
      s->finish(average ? getSize() : 0);
      return c10::make_intrusive<DoneWork>(op, s->results(), device_);
    }
    return c10::make_intrusive<HostWork>(op, std::move(exchanged), std::move(s), average ? getSize() : 0, device_);
  }

  c10::intrusive_ptr<c10d::Backend> host_;
  c10::Device device_;  // the one this process's ranks use
};

// The c10d store as the key-value store a multi-process PJRT client forms
// over: the rendezvous the process group already made serves the plugin
// too. The plugin calls it from its own threads while the client is being
// created, so the store must not need the GIL: the C++ stores (TCPStore,
// FileStore, HashStore, PrefixStore over them) do not.
class C10dKeyValueStore : public pjrt::KeyValueStore {
 public:
  explicit C10dKeyValueStore(c10::intrusive_ptr<c10d::Store> store) : store_(std::move(store)) {}

  std::string get(const std::string& key, int64_t timeout_ms) override {
    // c10d reads a zero timeout as "wait forever"; PJRT means "now".
    if (timeout_ms <= 0) {
      if (auto v = try_get(key)) return *v;
      throw pjrt::Error("not set", PJRT_Error_Code_DEADLINE_EXCEEDED);
    }
    try {
      store_->wait({key}, std::chrono::milliseconds(timeout_ms));
    } catch (const c10::Error& e) {
      if (store_->check({key})) throw;
      throw pjrt::Error("not set within " + std::to_string(timeout_ms) + " ms (" + e.what_without_backtrace() + ")",
                        PJRT_Error_Code_DEADLINE_EXCEEDED);
    }
    auto v = store_->get(key);
    return std::string(v.begin(), v.end());
  }

  void put(const std::string& key, const std::string& value) override {
    store_->set(key, std::vector<uint8_t>(value.begin(), value.end()));
  }

  std::optional<std::string> try_get(const std::string& key) override {
    if (!store_->check({key})) return std::nullopt;
    auto v = store_->get(key);
    return std::string(v.begin(), v.end());
  }

 private:
  c10::intrusive_ptr<c10d::Store> store_;
};

}  // namespace

void init_distributed(py::module_& m) {
  py::module_::import("torch.distributed");
  py::class_<TpuDistBackend, c10d::Backend, c10::intrusive_ptr<TpuDistBackend>>(m, "TpuDistBackend")
      .def(py::init([](const c10::intrusive_ptr<c10d::Backend>& host, int rank, int size, int device) {
             return c10::make_intrusive<TpuDistBackend>(host, rank, size, static_cast<c10::DeviceIndex>(device));
           }),
           py::arg("host"), py::arg("rank"), py::arg("size"), py::arg("device"));
  m.def(
      "_configure_multi_process",
      [](const c10::intrusive_ptr<c10d::Store>& store, int64_t node_id, int64_t num_nodes) {
        engine::Runtime::configure_multi_process(node_id, num_nodes, std::make_shared<C10dKeyValueStore>(store));
      },
      py::arg("store"), py::arg("node_id"), py::arg("num_nodes"));
  m.def("_dist_stats", [] {
    py::dict d;
    d["host_collectives"] = g_host_collectives.load();
    d["host_bytes"] = g_host_bytes.load();
    d["device_collectives"] = 0;
    return d;
  });
}

}  // namespace tpu
