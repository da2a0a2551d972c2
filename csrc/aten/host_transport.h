// The host transport of the c10d backend tpu_dist (distributed.cc has the
// backend): a collective whose peers the PJRT client cannot reach copies
// its tpu tensors to the host, runs on gloo, and copies the results back.
// Here are those copies (Staging), the Work that completes once they are
// back, and the transport's counts that torch_pjrt._C._dist_stats reports.
#pragma once

#include <ATen/ATen.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "aten/device_transport.h"

namespace tpu {

extern std::atomic<int64_t> g_host_collectives;
extern std::atomic<int64_t> g_host_bytes;
extern std::atomic<int64_t> g_cpu_collectives;  // CPU tensors given to a tpu_dist group

// Host copies of one collective's tensors, and which go back.
class Staging {
 public:
  // A tensor the collective reads (and, if `written`, overwrites).
  at::Tensor in(const at::Tensor& t, bool written = false);
  // A tensor the collective only writes.
  at::Tensor out(const at::Tensor& t);
  std::vector<at::Tensor> in(const std::vector<at::Tensor>& ts, bool written = false);
  std::vector<at::Tensor> out(const std::vector<at::Tensor>& ts);
  // Lists of lists (allgather's outputs, scatter's inputs), each staged.
  std::vector<std::vector<at::Tensor>> in(const std::vector<std::vector<at::Tensor>>& lists);
  std::vector<std::vector<at::Tensor>> out(const std::vector<std::vector<at::Tensor>>& lists);
  // Divides every host result by n (AVG as SUM / n).
  void average(int n);
  // Once the exchange has ended: averages if `average_by` > 0, writes the
  // results into the tpu tensors and counts the collective (as the host
  // transport's when it moved tpu tensors, else as gloo's on CPU tensors).
  void finish(int average_by);
  void copy_back();
  std::vector<at::Tensor> results() const;

 private:
  std::vector<std::pair<at::Tensor, at::Tensor>> pairs_;
  bool tpu_ = false;
};

// A collective in flight on the host transport: complete, with its future,
// once gloo's exchange has ended and the results are averaged (if asked)
// and copied back into the tpu tensors; that last step runs on the thread
// that ends gloo's work.
class HostWork : public FutureWork {
 public:
  // Gloo bounds the exchange by the group's timeout and fails it then.
  HostWork(c10d::OpType op, c10::intrusive_ptr<c10::ivalue::Future> exchanged, std::shared_ptr<Staging> staging,
           int average_by, c10::Device device);

 private:
  c10::intrusive_ptr<c10::ivalue::Future> exchanged_;  // gloo's, held while its callback is pending
};

}  // namespace tpu
