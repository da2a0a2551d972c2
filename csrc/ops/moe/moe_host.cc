// The experts layer's routing on the host (see moe_host.h).
#include "ops/moe/moe_host.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

namespace ops {

using shlo::DType;
using shlo::Type;

MoeDispatch moe_dispatch_host(shlo::Builder& b, shlo::Value hidden, shlo::Value ids, int64_t experts) {
  const int64_t pairs = ids.shape()[0] * ids.shape()[1], h = hidden.shape()[1];
  auto r = b.native_call(kMoeDispatchTarget, {hidden, ids},
                         {Type{DType::F32, {pairs, h}}, Type{DType::S32, {experts}}, Type{DType::S32, {pairs}}});
  return {r[0], r[1], r[2]};
}

shlo::Value moe_combine_host(shlo::Builder& b, shlo::Value ys, shlo::Value slot, shlo::Value weights) {
  return b.native_call(kMoeCombineTarget, {ys, slot, weights},
                       {Type{DType::F32, {weights.shape()[0], ys.shape()[1]}}})[0];
}

namespace {

using pjrt::ffi::arg;
using pjrt::ffi::arity_is;
using pjrt::ffi::Buffer;
using pjrt::ffi::DataType;
using pjrt::ffi::idle;
using pjrt::ffi::ret;

std::atomic<int64_t> g_dispatch_calls{0}, g_combine_calls{0};

bool is(const Buffer* t, DataType d, int64_t rank) { return t->dtype == d && t->rank == rank; }

}  // namespace

pjrt::ffi::Error* moe_dispatch_handler(pjrt::ffi::CallFrame* frame) {
  if (idle(frame)) return nullptr;
  static const std::string usage =
      std::string(kMoeDispatchTarget) + ": expects f32 [T,H], s32 [T,K] -> f32 [T*K,H], s32 [E], s32 [T*K]";
  if (!arity_is(frame, 2, 3)) return pjrt::ffi::error(frame, usage);
  Buffer *hidden = arg(frame, 0), *ids = arg(frame, 1), *rows = ret(frame, 0), *counts = ret(frame, 1),
         *slot = ret(frame, 2);
  const bool shapes_fit = is(hidden, DataType::F32, 2) && is(ids, DataType::S32, 2) && is(rows, DataType::F32, 2) &&
                          is(counts, DataType::S32, 1) && is(slot, DataType::S32, 1) &&
                          ids->dims[0] == hidden->dims[0] && rows->dims[0] == ids->dims[0] * ids->dims[1] &&
                          rows->dims[1] == hidden->dims[1] && slot->dims[0] == rows->dims[0];
  if (!shapes_fit) return pjrt::ffi::error(frame, usage);
  g_dispatch_calls.fetch_add(1, std::memory_order_relaxed);
  const int64_t h = hidden->dims[1], k = ids->dims[1], pairs = rows->dims[0], experts = counts->dims[0];
  const auto* x = static_cast<const float*>(hidden->data);
  const auto* id = static_cast<const int32_t*>(ids->data);
  auto* out = static_cast<float*>(rows->data);
  auto* count = static_cast<int32_t*>(counts->data);
  auto* where = static_cast<int32_t*>(slot->data);
  auto valid = [&](int32_t e) { return e >= 0 && e < experts; };
  // A counting sort: counts, each expert's first row, then the pairs in
  // order, so an expert's rows keep their pairs' order.
  std::fill(count, count + experts, 0);
  for (int64_t q = 0; q < pairs; ++q)
    if (valid(id[q])) ++count[id[q]];
  std::vector<int64_t> next(experts);
  int64_t grouped = 0;
  for (int64_t e = 0; e < experts; ++e) next[e] = grouped, grouped += count[e];
  for (int64_t q = 0; q < pairs; ++q) {
    if (!valid(id[q])) {
      where[q] = -1;
      continue;
    }
    const int64_t r = next[id[q]]++;
    where[q] = static_cast<int32_t>(r);
    std::copy(x + (q / k) * h, x + (q / k + 1) * h, out + r * h);
  }
  std::fill(out + grouped * h, out + pairs * h, 0.0f);
  return nullptr;
}

pjrt::ffi::Error* moe_combine_handler(pjrt::ffi::CallFrame* frame) {
  if (idle(frame)) return nullptr;
  static const std::string usage =
      std::string(kMoeCombineTarget) + ": expects f32 [R,H], s32 [T*K], f32 [T,K] -> f32 [T,H]";
  if (!arity_is(frame, 3, 1)) return pjrt::ffi::error(frame, usage);
  Buffer *ys = arg(frame, 0), *slot = arg(frame, 1), *weights = arg(frame, 2), *out = ret(frame, 0);
  const bool shapes_fit = is(ys, DataType::F32, 2) && is(slot, DataType::S32, 1) && is(weights, DataType::F32, 2) &&
                          is(out, DataType::F32, 2) && slot->dims[0] == weights->dims[0] * weights->dims[1] &&
                          out->dims[0] == weights->dims[0] && out->dims[1] == ys->dims[1];
  if (!shapes_fit) return pjrt::ffi::error(frame, usage);
  g_combine_calls.fetch_add(1, std::memory_order_relaxed);
  const int64_t tokens = weights->dims[0], k = weights->dims[1], h = ys->dims[1], rows = ys->dims[0];
  const auto* y = static_cast<const float*>(ys->data);
  const auto* where = static_cast<const int32_t*>(slot->data);
  const auto* w = static_cast<const float*>(weights->data);
  auto* o = static_cast<float*>(out->data);
  for (int64_t t = 0; t < tokens; ++t) {
    float* ot = o + t * h;
    std::fill(ot, ot + h, 0.0f);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t r = where[t * k + j];
      if (r < 0 || r >= rows) continue;  // no row: a sentinel expert's pair
      const float s = w[t * k + j];
      const float* yr = y + r * h;
      for (int64_t i = 0; i < h; ++i) ot[i] += s * yr[i];
    }
  }
  return nullptr;
}

int64_t moe_dispatch_calls() { return g_dispatch_calls.load(std::memory_order_relaxed); }
int64_t moe_combine_calls() { return g_combine_calls.load(std::memory_order_relaxed); }

}  // namespace ops
