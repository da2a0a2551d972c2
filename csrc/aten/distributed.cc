// The c10d backend "tpu_dist": torch.distributed's collectives on tpu
// tensors, so DDP, FSDP2, DTensor, functional collectives and transformers'
// tensor parallelism run unchanged (they find a backend by device type).
//
// Two transports. The device transport serves a group whose members are all
// in this process, each on its own device of its client (ranks as threads):
// a collective is one replicated program (csrc/ops/collective) over the
// members' devices, launched once for all of them (Meetings, below), so
// the data never leaves the devices. Its results are device values from
// the launch on, read in launch order like any op's; the Work completes
// when the member's replica has finished.
//
// The host transport is for peers the PJRT client cannot reach
// itself (XLA:CPU across processes): each collective copies its tpu tensors
// to the host, runs there on a gloo backend built on the same store, and
// copies the results back (host_transport.h: the copies and their Work).
// Gloo lacks AVG, so an average is a sum divided by the group size on the
// host. The call returns once the inputs are on
// the host: gloo runs the exchange on its own threads while the caller goes
// on (DDP keeps computing gradients), and the Work and its future complete
// when the results are back in the tpu tensors. A peer that dies makes gloo
// fail the collective with its error within the group's timeout, raised by
// wait().
#include "aten/distributed.h"

#include <ATen/Parallel.h>
#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "aten/device_transport.h"
#include "aten/errors.h"
#include "aten/host_transport.h"
#include "aten/tensor.h"
#include "aten/torch_compat.h"
#include "engine/graph.h"
#include "engine/launch.h"
#include "engine/reads.h"
#include "engine/runtime.h"
#include "ops/collective/aten.h"
#include "pjrt/kv_store.h"

namespace tpu {

namespace {

namespace py = pybind11;
using c10d::OpType;
using c10d::ReduceOp;
using c10d::Work;

std::atomic<int64_t> g_device_collectives{0};

class TpuDistBackend : public c10d::Backend {
 public:
  // devices: every member's device index in rank order when the group can
  // use the device transport, else empty. tag: the group's number, equal in
  // every member, which keeps the meeting ids of groups apart.
  TpuDistBackend(c10::intrusive_ptr<c10d::Backend> host, int rank, int size, c10::DeviceIndex device,
                 std::vector<int> devices, int tag, std::chrono::milliseconds timeout)
      : Backend(rank, size),
        host_(std::move(host)),
        device_(c10::DeviceType::PrivateUse1, device),
        devices_(std::move(devices)),
        tag_(tag),
        timeout_(timeout) {}

  // Gloo's destructor joins its worker threads, and a collective's callback
  // finishing on one of them may drop the last reference to a tensor Python
  // holds, which takes the GIL: the host group is released without the GIL,
  // or the two threads would wait on each other.
  ~TpuDistBackend() override {
    if (Py_IsInitialized() && PyGILState_Check()) {
      pybind11::gil_scoped_release unlocked;
      host_.reset();
    }
  }

  const std::string getBackendName() const override { return "tpu_dist"; }

  c10::intrusive_ptr<Work> broadcast(std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) override {
    if (on_device(tensors)) {
      ops::CollectiveCall c = call(ops::Collective::Broadcast);
      c.root = static_cast<int>(opts.rootRank);
      return device_collective(OpType::BROADCAST, c, tensors, tensors);
    }
    return run(OpType::BROADCAST, [&](Staging& s) {
      auto h = s.in(tensors, true);
      return host_->broadcast(h, opts);
    });
  }

  c10::intrusive_ptr<Work> allreduce(std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) override {
    if (auto c = reducing(ops::Collective::AllReduce, opts.reduceOp, tensors))
      return device_collective(OpType::ALLREDUCE, *c, tensors, tensors);
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
    if (auto c = reducing(ops::Collective::AllReduce, opts.reduceOp, tensors))
      return device_collective(OpType::ALLREDUCE_COALESCED, *c, tensors, tensors);
    return run(
        OpType::ALLREDUCE_COALESCED,
        [&](Staging& s) {
          auto h = s.in(tensors, true);
          return host_->allreduce_coalesced(h, sum_for_avg(opts));
        },
        averaging(opts.reduceOp));
  }

  c10::intrusive_ptr<Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override {
    if (auto c = reducing(ops::Collective::AllReduce, opts.reduceOp, tensors)) {
      // Every member reduces; the root alone keeps the result.
      std::vector<at::Tensor> results;
      for (const at::Tensor& t : tensors) results.push_back(at::empty_like(t));
      auto w = device_collective(OpType::REDUCE, *c, tensors, results);
      if (getRank() == opts.rootRank)
        for (size_t i = 0; i < tensors.size(); ++i) tensors[i].copy_(results[i]);
      return w;
    }
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
    if (inputs.size() == 1 && outputs.size() == 1 && on_device(inputs) && on_device(outputs[0]) &&
        same_chunks(outputs[0], inputs[0].numel())) {
      // Gathered flat, then cut into the members' tensors.
      at::Tensor whole = at::empty({inputs[0].numel() * getSize()}, inputs[0].options());
      std::vector<at::Tensor> out{whole};
      auto w = device_collective(OpType::ALLGATHER, call(ops::Collective::AllGather), inputs, out);
      for (int r = 0; r < getSize(); ++r)
        outputs[0][r].copy_(whole.narrow(0, r * inputs[0].numel(), inputs[0].numel()).view(outputs[0][r].sizes()));
      return c10::make_intrusive<DoneWork>(OpType::ALLGATHER, outputs[0], device_);
    }
    return run(OpType::ALLGATHER, [&](Staging& s) {
      auto ho = s.out(outputs);
      auto hi = s.in(inputs);
      return host_->allgather(ho, hi, opts);
    });
  }

  c10::intrusive_ptr<Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                           const c10d::AllgatherOptions& opts) override {
    if (on_device({input, output}) && output.numel() == input.numel() * getSize())
      return device_collective(OpType::_ALLGATHER_BASE, call(ops::Collective::AllGather), {input}, {output});
    return run(OpType::_ALLGATHER_BASE, [&](Staging& s) {
      at::Tensor ho = s.out(output), hi = s.in(input);
      return host_->_allgather_base(ho, hi, opts);
    });
  }

  c10::intrusive_ptr<Work> allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::AllgatherOptions& opts) override {
    if (on_device(inputs) && on_device(outputs) && sizes_times(outputs, inputs, getSize()))
      return device_collective(OpType::COALESCED, call(ops::Collective::AllGather), inputs, outputs);
    return run(OpType::COALESCED, [&](Staging& s) {
      auto ho = s.out(outputs);
      auto hi = s.in(inputs);
      return host_->allgather_into_tensor_coalesced(ho, hi, opts);
    });
  }

  c10::intrusive_ptr<Work> gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                  const c10d::GatherOptions& opts) override {
    const bool root = getRank() == opts.rootRank;
    if (inputs.size() == 1 && on_device(inputs) &&
        (!root || (outputs.size() == 1 && on_device(outputs[0]) && same_chunks(outputs[0], inputs[0].numel())))) {
      at::Tensor whole = at::empty({inputs[0].numel() * getSize()}, inputs[0].options());
      std::vector<at::Tensor> out{whole};
      auto w = device_collective(OpType::GATHER, call(ops::Collective::AllGather), inputs, out);
      if (root)
        for (int r = 0; r < getSize(); ++r)
          outputs[0][r].copy_(whole.narrow(0, r * inputs[0].numel(), inputs[0].numel()).view(outputs[0][r].sizes()));
      return w;
    }
    return run(OpType::GATHER, [&](Staging& s) {
      auto ho = s.out(outputs);
      auto hi = s.in(inputs);
      return host_->gather(ho, hi, opts);
    });
  }

  c10::intrusive_ptr<Work> scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                   const c10d::ScatterOptions& opts) override {
    const bool root = getRank() == opts.rootRank;
    if (outputs.size() == 1 && on_device(outputs) &&
        (!root || (inputs.size() == 1 && on_device(inputs[0]) && same_chunks(inputs[0], outputs[0].numel())))) {
      // The root's pieces, end to end, broadcast; each member keeps its own.
      const int64_t k = outputs[0].numel();
      at::Tensor whole = at::empty({k * getSize()}, outputs[0].options());
      if (root) {
        std::vector<at::Tensor> flat;
        for (const at::Tensor& t : inputs[0]) flat.push_back(t.reshape({-1}));
        whole.copy_(at::cat(flat));
      }
      ops::CollectiveCall c = call(ops::Collective::Broadcast);
      c.root = static_cast<int>(opts.rootRank);
      std::vector<at::Tensor> both{whole};
      auto w = device_collective(OpType::SCATTER, c, both, both);
      outputs[0].copy_(whole.narrow(0, getRank() * k, k).view(outputs[0].sizes()));
      return w;
    }
    return run(OpType::SCATTER, [&](Staging& s) {
      auto ho = s.out(outputs);
      auto hi = s.in(inputs);
      return host_->scatter(ho, hi, opts);
    });
  }

  c10::intrusive_ptr<Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                          std::vector<std::vector<at::Tensor>>& inputs,
                                          const c10d::ReduceScatterOptions& opts) override {
    if (outputs.size() == 1 && inputs.size() == 1 && on_device(inputs[0]) &&
        same_chunks(inputs[0], outputs[0].numel()) && static_cast<int>(inputs[0].size()) == getSize())
      if (auto c = reducing(ops::Collective::ReduceScatter, opts.reduceOp, outputs)) {
        // The members' pieces end to end: the tensor form of the same call.
        std::vector<at::Tensor> flat;
        for (const at::Tensor& t : inputs[0]) flat.push_back(t.reshape({-1}));
        return device_collective(OpType::REDUCE_SCATTER, *c, {at::cat(flat)}, outputs);
      }
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
    if (auto c = reducing(ops::Collective::ReduceScatter, opts.reduceOp, {input, output}))
      if (input.numel() == output.numel() * getSize())
        return device_collective(OpType::_REDUCE_SCATTER_BASE, *c, {input}, {output});
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
    if (auto c = reducing(ops::Collective::ReduceScatter, opts.reduceOp, inputs))
      if (on_device(outputs) && sizes_times(inputs, outputs, getSize()))
        return device_collective(TPU_OPTYPE_REDUCE_SCATTER_COALESCED, *c, inputs, outputs);
    return run(
        TPU_OPTYPE_REDUCE_SCATTER_COALESCED,
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
    if (output_splits.empty() && input_splits.empty() && on_device({input, output}) &&
        input.numel() == output.numel() && input.numel() % getSize() == 0)
      return device_collective(OpType::ALLTOALL_BASE, call(ops::Collective::AllToAll), {input}, {output});
    if (on_device({input, output}) && static_cast<int>(input_splits.size()) == getSize() &&
        static_cast<int>(output_splits.size()) == getSize())
      return uneven_all_to_all(input, output, input_splits, output_splits);
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
    if (tensors.size() == 1 && on_device(tensors)) {
      // The value as it is now (values are immutable): later writes to the
      // tensor do not reach the receiver.
      mailbox().send(tag_, getRank(), dst, tag, read(tensors[0]));
      g_device_collectives.fetch_add(1, std::memory_order_relaxed);
      return c10::make_intrusive<DoneWork>(OpType::SEND, tensors, device_);
    }
    return run(OpType::SEND, [&](Staging& s) {
      auto h = s.in(tensors);
      return host_->send(h, dst, tag);
    });
  }

  c10::intrusive_ptr<Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override {
    if (tensors.size() == 1 && on_device(tensors)) {
      engine::Ref v;
      {
        std::optional<py::gil_scoped_release> nogil;
        if (PyGILState_Check()) nogil.emplace();
        v = mailbox().recv(tag_, src, getRank(), tag, timeout_);
      }
      TORCH_CHECK(v.type().dtype == to_shlo(tensors[0].scalar_type()) && v.type().shape == shape_of(tensors[0].sizes()),
                  "tpu_dist: recv into a ", tensors[0].scalar_type(), " tensor of shape ", tensors[0].sizes(), " got ",
                  v.type().str(), " from rank ", src);
      v = guarded("copying between devices", [&] { return engine::to_device(v, device_.index()); });
      write(tensors[0], v);
      g_device_collectives.fetch_add(1, std::memory_order_relaxed);
      return c10::make_intrusive<DoneWork>(OpType::RECV, tensors, device_);
    }
    return run(OpType::RECV, [&](Staging& s) {
      auto h = s.out(tensors);
      return host_->recv(h, src, tag);
    });
  }

  c10::intrusive_ptr<Work> barrier(const c10d::BarrierOptions& opts) override {
    // Everything issued before the barrier is done before it, as on CUDA.
    guarded("synchronizing before a barrier", [] { engine::synchronize(); });
    if (!devices_.empty()) {  // members in this process: they meet here
      meet({}, "barrier", [&](const std::vector<std::vector<engine::Ref>>&) {
        engine::Replicas none;
        none.values.resize(getSize());
        none.done.resize(getSize());
        return none;
      });
      g_device_collectives.fetch_add(1, std::memory_order_relaxed);
      return c10::make_intrusive<DoneWork>(OpType::BARRIER, std::vector<at::Tensor>{}, device_);
    }
    c10d::BarrierOptions o = opts;
    o.device_ids.clear();  // the host group's devices are the CPU's
    auto w = host_->barrier(o);
    w->wait();
    g_host_collectives.fetch_add(1, std::memory_order_relaxed);
    return c10::make_intrusive<DoneWork>(OpType::BARRIER, std::vector<at::Tensor>{}, device_);
  }

 private:
  // ---- the device transport

  ops::CollectiveCall call(ops::Collective kind) const {
    ops::CollectiveCall c;
    c.kind = kind;
    c.group_size = getSize();
    return c;
  }
  // Whether the device transport takes these tensors: a group that has it,
  // and every tensor a dense tpu tensor on this member's device.
  bool on_device(const std::vector<at::Tensor>& ts) const {
    if (devices_.empty() || ts.empty()) return false;
    for (const at::Tensor& t : ts)
      if (!t.defined() || t.device() != device_ || t.layout() != at::kStrided) return false;
    return true;
  }
  // The reductions the device computes (AVG of floating types only), or none.
  std::optional<ops::CollectiveCall> reducing(ops::Collective kind, const ReduceOp& op,
                                              const std::vector<at::Tensor>& ts) const {
    if (!on_device(ts)) return std::nullopt;
    std::optional<ops::Reduction> r = device_reduction(op, ts);
    if (!r) return std::nullopt;
    ops::CollectiveCall c = call(kind);
    c.reduction = *r;
    return c;
  }
  static bool same_chunks(const std::vector<at::Tensor>& outs, int64_t numel) {
    for (const at::Tensor& t : outs)
      if (t.numel() != numel) return false;
    return true;
  }
  // Pairs of one dtype where each big[i] has n times the elements of small[i].
  static bool sizes_times(const std::vector<at::Tensor>& big, const std::vector<at::Tensor>& small, int n) {
    if (big.size() != small.size()) return false;
    for (size_t i = 0; i < big.size(); ++i)
      if (big[i].numel() != small[i].numel() * n || big[i].scalar_type() != small[i].scalar_type()) return false;
    return true;
  }

  // This member's part in a meeting of the group: its inputs computed
  // first, then met under the next id (the group's tag above the member's
  // count of meetings, which all members keep in step: c10d's rule of the
  // same calls in the same order).
  Meetings::Mine meet(const std::vector<engine::Ref>& inputs, const char* what, const Meetings::Launch& launch) {
    // Members may be Python threads, waiting here for each other: never
    // hold the GIL (c10d's bindings release it before calling a backend;
    // hooks need not).
    std::optional<py::gil_scoped_release> nogil;
    if (PyGILState_Check()) nogil.emplace();
    guarded("computing a collective's inputs", [&] {
      for (const engine::Ref& r : inputs) engine::buffer(r);
    });
    const int64_t id = (static_cast<int64_t>(tag_) << 32) | ++issued_;
    return meetings().meet(id, getSize(), getRank(), inputs, timeout_, what, launch);
  }

  // One collective over flat copies of inputs, its results stored into
  // outputs (same count, any shapes of the result sizes).
  c10::intrusive_ptr<Work> device_collective(OpType op, const ops::CollectiveCall& c,
                                             const std::vector<at::Tensor>& inputs,
                                             const std::vector<at::Tensor>& outputs) {
    std::vector<shlo::Type> types;
    std::vector<engine::Ref> flat = flat_inputs(inputs, types);
    Meetings::Mine results =
        meet(flat, ops::collective_name(c.kind),
             [&](const std::vector<std::vector<engine::Ref>>& all) { return run_collective(c, types, devices_, all); });
    store_results(c, results.values, outputs, device_);
    g_device_collectives.fetch_add(1, std::memory_order_relaxed);
    return c10::make_intrusive<DeviceWork>(op, outputs, device_, results.done);
  }

  // Uneven splits: one replicated program cannot give its replicas
  // outputs of different shapes, so the members trade their pieces at the
  // meeting instead, each piece copied device to device.
  c10::intrusive_ptr<Work> uneven_all_to_all(const at::Tensor& input, const at::Tensor& output,
                                             const std::vector<int64_t>& input_splits,
                                             const std::vector<int64_t>& output_splits) {
    std::vector<engine::Ref> pieces;
    int64_t row = 0;
    for (int64_t n : input_splits) {
      pieces.push_back(read(input.narrow(0, row, n).reshape({-1})));
      row += n;
    }
    Meetings::Mine mine = meet(pieces, "all_to_all", [&](const std::vector<std::vector<engine::Ref>>& all) {
      engine::Replicas routed;
      routed.values.resize(all.size());
      routed.done.resize(all.size());
      for (size_t to = 0; to < all.size(); ++to)
        for (size_t from = 0; from < all.size(); ++from) routed.values[to].push_back(all[from].at(to));
      return routed;
    });
    std::vector<at::Tensor> received;
    for (size_t from = 0; from < mine.values.size(); ++from) {
      engine::Ref v =
          guarded("copying between devices", [&] { return engine::to_device(mine.values[from], device_.index()); });
      TORCH_CHECK(v.type().shape[0] ==
                      output_splits[from] * (input.dim() ? input.numel() / std::max<int64_t>(input.size(0), 1) : 1),
                  "all_to_all: rank ", from, " sent ", v.type().shape[0], " elements where ", output_splits[from],
                  " rows were expected");
      received.push_back(wrap(v, device_));
    }
    output.copy_(at::cat(received).view(output.sizes()));
    g_device_collectives.fetch_add(1, std::memory_order_relaxed);
    return c10::make_intrusive<DoneWork>(OpType::ALLTOALL_BASE, std::vector<at::Tensor>{output}, device_);
  }

  // ---- the host transport

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
  c10::Device device_;  // this member's
  std::vector<int> devices_;
  int tag_ = 0;
  std::chrono::milliseconds timeout_;
  int64_t issued_ = 0;
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
      .def(py::init([](const c10::intrusive_ptr<c10d::Backend>& host, int rank, int size, int device,
                       std::vector<int> devices, int tag, std::chrono::milliseconds timeout) {
             return c10::make_intrusive<TpuDistBackend>(host, rank, size, static_cast<c10::DeviceIndex>(device),
                                                        std::move(devices), tag, timeout);
           }),
           py::arg("host"), py::arg("rank"), py::arg("size"), py::arg("device"),
           py::arg("devices") = std::vector<int>{}, py::arg("tag") = 0,
           py::arg("timeout") = std::chrono::milliseconds(30 * 60 * 1000));
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
    d["device_collectives"] = g_device_collectives.load();
    d["cpu_collectives"] = g_cpu_collectives.load();
    return d;
  });
}

}  // namespace tpu
