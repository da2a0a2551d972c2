// The host transport's staging and its Work (see host_transport.h): the
// copies to the host before gloo's exchange and back after it.
#include "aten/host_transport.h"

#include <exception>

namespace tpu {

std::atomic<int64_t> g_host_collectives{0};
std::atomic<int64_t> g_host_bytes{0};
std::atomic<int64_t> g_cpu_collectives{0};

at::Tensor Staging::in(const at::Tensor& t, bool written) {
  at::Tensor h = t.to(at::kCPU).contiguous();
  if (!t.is_cpu()) {
    tpu_ = true;
    g_host_bytes.fetch_add(static_cast<int64_t>(h.nbytes()), std::memory_order_relaxed);
  }
  if (written) pairs_.push_back({t, h});
  return h;
}

at::Tensor Staging::out(const at::Tensor& t) {
  at::Tensor h = at::empty(t.sizes(), t.options().device(at::kCPU));
  tpu_ |= !t.is_cpu();
  pairs_.push_back({t, h});
  return h;
}

std::vector<at::Tensor> Staging::in(const std::vector<at::Tensor>& ts, bool written) {
  std::vector<at::Tensor> h;
  for (const auto& t : ts) h.push_back(in(t, written));
  return h;
}

std::vector<at::Tensor> Staging::out(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> h;
  for (const auto& t : ts) h.push_back(out(t));
  return h;
}

std::vector<std::vector<at::Tensor>> Staging::in(const std::vector<std::vector<at::Tensor>>& lists) {
  std::vector<std::vector<at::Tensor>> h;
  for (const auto& ts : lists) h.push_back(in(ts));
  return h;
}

std::vector<std::vector<at::Tensor>> Staging::out(const std::vector<std::vector<at::Tensor>>& lists) {
  std::vector<std::vector<at::Tensor>> h;
  for (const auto& ts : lists) h.push_back(out(ts));
  return h;
}

void Staging::average(int n) {
  for (auto& [d, h] : pairs_) {
    TORCH_CHECK(at::isFloatingType(h.scalar_type()) || at::isComplexType(h.scalar_type()),
                "ReduceOp.AVG needs floating point tensors, got ", h.scalar_type());
    h.div_(n);
  }
}

void Staging::finish(int average_by) {
  if (average_by > 0) average(average_by);
  copy_back();
  (tpu_ ? g_host_collectives : g_cpu_collectives).fetch_add(1, std::memory_order_relaxed);
}

void Staging::copy_back() {
  for (auto& [d, h] : pairs_) {
    if (!d.is_cpu()) g_host_bytes.fetch_add(static_cast<int64_t>(h.nbytes()), std::memory_order_relaxed);
    d.copy_(h);
  }
}

std::vector<at::Tensor> Staging::results() const {
  std::vector<at::Tensor> r;
  for (const auto& [d, h] : pairs_) r.push_back(d);
  return r;
}

HostWork::HostWork(c10d::OpType op, c10::intrusive_ptr<c10::ivalue::Future> exchanged, std::shared_ptr<Staging> staging,
                   int average_by, c10::Device device)
    : FutureWork(op, device), exchanged_(std::move(exchanged)) {
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

}  // namespace tpu
