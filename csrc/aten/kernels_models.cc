// Kernels Hugging Face models need that no other family covers: histc (the
// MoE experts' token counts) and the shallow-copy compatibility query that
// lets Module.to("tpu") keep tied parameters tied.
#include <ATen/native/Resize.h>
#include <c10/util/bit_cast.h>

#include <cmath>
#include <limits>

#include "aten/kernels.h"
#include "aten/structured.h"
#include "engine/checks.h"
#include "ops/sort/histc.h"

namespace tpu {

namespace {

bool dense_cpu_or_tpu(const at::Tensor& t) {
  return t.layout() == at::kStrided && (t.device().is_cpu() || t.device().is_privateuseone()) && !t.is_quantized() &&
         !t.key_set().has(c10::DispatchKey::Python);
}

void histc_impl(const at::Tensor& self, int64_t bins, const at::Scalar& min, const at::Scalar& max, at::Tensor& out) {
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  at::ScalarType st = self.scalar_type();
  TORCH_CHECK(st != at::kBool && !at::isComplexType(st), "\"histc\" not implemented for '", st, "'");
  TORCH_CHECK(out.scalar_type() == st,
              "torch.histogram: input tensor and hist tensor should have the same dtype, but got input ", self.dtype(),
              " and hist ", out.dtype());
  double lo = min.toDouble(), hi = max.toDouble();
  // Equal bounds mean "use the data's range": computed on the device, so
  // histc never waits for the host.
  bool auto_range = lo == hi && self.numel() > 0;
  if (!auto_range) {
    if (lo == hi) {
      lo -= 1;
      hi += 1;
    }
    TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi, "] is not finite");
    TORCH_CHECK(lo < hi, "torch.histc: max must be larger than min");
  }
  at::native::resize_output(out, {bins});
  shlo::DType dt = to_shlo(st);
  if (auto_range && at::isFloatingType(st)) {
    // PyTorch refuses a data range that is not finite, naming the range:
    // the data's min and max come back from the device with the check.
    bool f64 = st == at::kDouble, f32 = st == at::kFloat, bf16 = st == at::kBFloat16;
    engine::Ref range = legacy_op("histc_range", {read(self)}, shlo::Type{shlo::DType::S64, {3}},
                                  [](shlo::Builder& b, const std::vector<shlo::Value>& v) {
                                    return std::vector<shlo::Value>{ops::range_bits(b, v[0])};
                                  });
    engine::defer_check(range, [f64, f32, bf16](const std::vector<int64_t>& a) {
      auto value = [f64](int64_t bits) {
        if (f64) return c10::bit_cast<double>(bits);
        return static_cast<double>(c10::bit_cast<float>(static_cast<int32_t>(bits)));
      };
      double l = value(a[1]), h = value(a[2]);
      // The CPU's min / max answer NaN for both as soon as one element is
      // NaN, and the NaN it prints is the negative one its float kernels
      // produce (bfloat16's rounding makes it positive): the same text.
      if (a[0]) l = h = std::copysign(std::numeric_limits<double>::quiet_NaN(), bf16 ? 1.0 : -1.0);
      // Equal edges move 1 apart as histc's own edges do, except where the
      // CPU widens in the data's dtype: a float / double infinity pair
      // keeps one infinity and brings the other to the largest finite value.
      if (l == h && std::isinf(l) && (f64 || f32)) {
        double big = f64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
        (l > 0 ? l : h) = l > 0 ? big : -big;
      } else if (l == h) {
        l -= 1;
        h += 1;
      }
      TORCH_CHECK(std::isfinite(l) && std::isfinite(h), "torch.histc: range of [", l, ", ", h, "] is not finite");
    });
  }
  write(out, legacy_op("histc:" + std::to_string(bins) + (auto_range ? ":auto" : ""),
                       {read(self), scalar_of(lo, dt), scalar_of(hi, dt)}, shlo::Type{dt, {bins}},
                       [bins, auto_range](shlo::Builder& b, const std::vector<shlo::Value>& v) {
                         return std::vector<shlo::Value>{ops::histc(b, v[0], v[1], v[2], bins, auto_range)};
                       }));
}

}  // namespace

// PrivateUse1 is not among c10's "dense" backends, so without this
// Module._apply makes a new Parameter per module when moving to the tpu
// and tied weights (embeddings / LM heads) come apart. Dense CPU and tpu
// tensors can swap implementations like CPU and CUDA ones do.
bool _has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  if (dense_cpu_or_tpu(self) && dense_cpu_or_tpu(from)) return true;
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set());
}

at::Tensor histc(const at::Tensor& self, int64_t bins, const at::Scalar& min, const at::Scalar& max) {
  at::Tensor out = at::empty({0}, self.options());
  histc_impl(self, bins, min, max, out);
  return out;
}

at::Tensor& histc_out(const at::Tensor& self, int64_t bins, const at::Scalar& min, const at::Scalar& max,
                      at::Tensor& out) {
  histc_impl(self, bins, min, max, out);
  return out;
}

}  // namespace tpu
