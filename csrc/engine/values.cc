// Values that enter the graph from outside it: leaves over buffers, host
// uploads and the shared scalar constants.
#include <cstring>
#include <map>
#include <mutex>

#include "engine/graph.h"
#include "engine/op.h"
#include "engine/runtime.h"
#include "engine/timeline.h"

namespace engine {

Ref leaf(pjrt::BufferPtr buffer, shlo::Type type) {
  auto n = std::make_shared<Node>();
  n->name = "leaf";
  n->device = buffer ? buffer->device() : kUnplaced;
  n->out_types.push_back(std::move(type));
  n->buffers = {std::move(buffer)};
  return Ref{n, 0};
}

Ref from_host(const void* data, const shlo::Type& type, int device) {
  auto& rt = Runtime::get();
  int64_t bytes = 0;
  if (timeline::on()) {
    bytes = static_cast<int64_t>(pjrt::element_size(to_pjrt(type.dtype)));
    for (int64_t d : type.shape) bytes *= d;
  }
  timeline::Scoped span(timeline::Kind::HostToDevice, "host to device", bytes);
  return leaf(rt.client().from_host(data, to_pjrt(type.dtype), type.shape, device), type);
}

namespace {

std::mutex g_scalar_mu;
// Leaked on purpose: destroying device buffers during static destruction
// would call into a plugin that may already be torn down.
auto& g_scalars = *new std::map<std::pair<int, uint64_t>, Ref>();

// The few scalars a thread's ops use again and again (an add's alpha of 1),
// looked up without the process-wide lock: a small direct-mapped table per
// thread, leaked with the thread for the reason above.
struct RecentScalar {
  int dtype = -1;
  uint64_t bits = 0;
  Ref ref;
};
constexpr size_t kRecentScalars = 16;
thread_local RecentScalar* t_recent = nullptr;

template <typename T>
Ref cached_scalar(shlo::DType dtype, T v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  if (!t_recent) t_recent = new RecentScalar[kRecentScalars];
  RecentScalar& slot = t_recent[((bits * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(dtype)) >> 32) % kRecentScalars];
  if (slot.dtype == static_cast<int>(dtype) && slot.bits == bits) return slot.ref;
  Ref r;
  {
    std::lock_guard<std::mutex> g(g_scalar_mu);
    auto key = std::make_pair(static_cast<int>(dtype), bits);
    auto it = g_scalars.find(key);
    if (it != g_scalars.end()) {
      r = it->second;
    } else {
      if (g_scalars.size() > 4096) g_scalars.clear();
      r = from_host(&v, shlo::Type{dtype, {}});
      r.node->device = kAnyDevice;
      g_scalars.emplace(key, r);
    }
  }
  slot = RecentScalar{static_cast<int>(dtype), bits, r};
  return r;
}

// bfloat16's bits for f, rounded to nearest even as a device conversion
// rounds (a NaN stays a quiet NaN).
uint16_t bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

template <typename T>
T wrap_unsigned(double v) {
  return v < 0 ? static_cast<T>(static_cast<int64_t>(v)) : static_cast<T>(v);
}

}  // namespace

Ref scalar(shlo::DType dtype, double v) {
  using D = shlo::DType;
  switch (dtype) {
    case D::PRED:
      return cached_scalar<uint8_t>(dtype, v != 0);
    case D::S8:
      return cached_scalar<int8_t>(dtype, static_cast<int8_t>(v));
    case D::S16:
      return cached_scalar<int16_t>(dtype, static_cast<int16_t>(v));
    case D::S32:
      return cached_scalar<int32_t>(dtype, static_cast<int32_t>(v));
    case D::S64:
      return cached_scalar<int64_t>(dtype, static_cast<int64_t>(v));
    case D::U8:
      return cached_scalar<uint8_t>(dtype, static_cast<uint8_t>(v));
    // Negative values wrap like integer conversions (through int64).
    case D::U16:
      return cached_scalar<uint16_t>(dtype, wrap_unsigned<uint16_t>(v));
    case D::U32:
      return cached_scalar<uint32_t>(dtype, wrap_unsigned<uint32_t>(v));
    case D::U64:
      return cached_scalar<uint64_t>(dtype, wrap_unsigned<uint64_t>(v));
    case D::F32:
      return cached_scalar<float>(dtype, static_cast<float>(v));
    case D::F64:
      return cached_scalar<double>(dtype, v);
    case D::F16:
      return cached_scalar<_Float16>(dtype, static_cast<_Float16>(static_cast<float>(v)));
    case D::BF16:
      return cached_scalar<uint16_t>(dtype, bf16_bits(static_cast<float>(v)));
    default: {
      // complex: an f32 scalar (f64 for complex128) converted on device; f32
      // keeps it free of f64, which TPUs lack.
      Ref wide =
          dtype == D::C128 ? cached_scalar<double>(D::F64, v) : cached_scalar<float>(D::F32, static_cast<float>(v));
      return op1(
          "convert_scalar", {wide}, shlo::Type{dtype, {}},
          [](shlo::Builder& b, const std::vector<shlo::Value>& in, shlo::DType dtype) {
            return std::vector<shlo::Value>{b.convert(in[0], dtype)};
          },
          dtype);
    }
  }
}

Ref scalar_i64(int64_t v) { return cached_scalar<int64_t>(shlo::DType::S64, v); }

}  // namespace engine
