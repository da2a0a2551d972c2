// Nearest-neighbour upsampling (F.interpolate modes "nearest" and
// "nearest-exact", nn.Upsample) in 1-3 spatial dims, and its gradients.
// Shapes and argument checks come from PyTorch's meta functions; the
// source index of every output position is computed here with PyTorch's
// own index functions, so rounding at odd scales is the CPU's bit for bit.
// ATen entry points and their registration; the lowering is upsample.h.
#include <ATen/native/UpSample.h>
#include <ATen/ops/_upsample_nearest_exact1d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact1d_meta.h>
#include <ATen/ops/_upsample_nearest_exact2d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact2d_meta.h>
#include <ATen/ops/_upsample_nearest_exact3d_backward_meta.h>
#include <ATen/ops/_upsample_nearest_exact3d_meta.h>
#include <ATen/ops/upsample_nearest1d_backward_meta.h>
#include <ATen/ops/upsample_nearest1d_meta.h>
#include <ATen/ops/upsample_nearest2d_backward_meta.h>
#include <ATen/ops/upsample_nearest2d_meta.h>
#include <ATen/ops/upsample_nearest3d_backward_meta.h>
#include <ATen/ops/upsample_nearest3d_meta.h>

#include "aten/library.h"
#include "ops/upsample/upsample.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;
using Scales = std::vector<std::optional<double>>;

void check_dtype(const char* name, at::ScalarType t) {
  // The CPU kernels cover floating types and uint8.
  if (!at::isFloatingType(t) && t != at::kByte)
    throw c10::NotImplementedError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
                                   std::string("\"") + name + "\" not implemented for '" + c10::toString(t) + "'");
}

// Source indices per spatial dim: in[j] -> out[j] positions. The forward
// and the backward kernels of the CPU round differently (see below).
std::vector<std::vector<int64_t>> source_indices(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                                                 const Scales& scales, bool exact, bool grad) {
  std::vector<std::vector<int64_t>> src(out.size());
  for (size_t j = 0; j < out.size(); ++j) {
    src[j].resize(out[j]);
    // As on the CPU: the forward kernels apply the scale as is, also where
    // the sizes are equal; the backward kernels take equal sizes (and, for
    // nearest, twice the size) as an exact copy whatever the scale says.
    const float scale = at::native::compute_scales_value<float>(scales[j], in[j], out[j]);
    for (int64_t o = 0; o < out[j]; ++o)
      src[j][o] = grad    ? (exact ? at::native::nearest_exact_idx(o, in[j], out[j], scales[j])
                                   : at::native::nearest_idx(o, in[j], out[j], scales[j]))
                  : exact ? at::native::nearest_neighbor_exact_compute_source_index(scale, o, in[j])
                          : at::native::nearest_neighbor_compute_source_index(scale, o, in[j]);
  }
  return src;
}

// The trailing n sizes.
std::vector<int64_t> spatial(at::IntArrayRef sizes, size_t n) {
  return std::vector<int64_t>(sizes.end() - n, sizes.end());
}

// The nodes carry the sizes, scales and mode as attributes; the lowering
// computes the source indices from them (PyTorch's index functions run at
// lowering time), so keys stay short for large outputs.
void forward(const char* name, const at::Tensor& out, const at::Tensor& self, const Scales& scales, bool exact) {
  check_dtype(name, self.scalar_type());
  const size_t n = scales.size();
  write_all(
      {out}, "upsample_nearest", {read(self)},
      [](Builder& b, const Vals& v, const std::vector<int64_t>& in, const std::vector<int64_t>& os,
         const Scales& scales,
         bool exact) { return Vals{ops::resample_nearest(b, v[0], source_indices(in, os, scales, exact, false))}; },
      spatial(self.sizes(), n), spatial(out.sizes(), n), scales, exact);
}

void backward(const char* name, const at::Tensor& grad_input, const at::Tensor& grad, at::IntArrayRef input_size,
              const Scales& scales, bool exact) {
  check_dtype(name, grad.scalar_type());
  const size_t n = scales.size();
  write_all(
      {grad_input}, "upsample_nearest_backward", {read(grad)},
      [](Builder& b, const Vals& v, const std::vector<int64_t>& in, const std::vector<int64_t>& os,
         const Scales& scales, bool exact, const shlo::Shape& in_shape) {
        return Vals{ops::resample_nearest_backward(b, v[0], source_indices(in, os, scales, exact, true), in_shape)};
      },
      spatial(input_size, n), spatial(grad.sizes(), n), scales, exact, shape_of(input_size));
}

// The bodies in the form the structured helpers call: (meta, out, args...).
template <bool Exact>
struct Fwd {
  template <class M, class... S>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, at::IntArrayRef, S... s) const {
    forward(Exact ? "_upsample_nearest_exact" : "upsample_nearest", out, self, Scales{s...}, Exact);
  }
};
template <bool Exact>
struct Bwd {
  template <class M, class... S>
  void operator()(M&, const at::Tensor& gi, const at::Tensor& g, at::IntArrayRef, at::IntArrayRef in, S... s) const {
    backward(Exact ? "_upsample_nearest_exact_backward" : "upsample_nearest_backward", gi, g, in, Scales{s...}, Exact);
  }
};

}  // namespace

// Each mode and rank registers its forward and backward (functional and out=).
#define TPU_NEAREST(name, exact)                                                                                 \
  m.structured<at::meta::structured_##name>(#name, nullptr, #name ".out", Fwd<exact>{});                         \
  m.structured<at::meta::structured_##name##_backward>(#name "_backward", nullptr, #name "_backward.grad_input", \
                                                       Bwd<exact>{})

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  TPU_NEAREST(_upsample_nearest_exact1d, true);
  TPU_NEAREST(_upsample_nearest_exact2d, true);
  TPU_NEAREST(_upsample_nearest_exact3d, true);
  TPU_NEAREST(upsample_nearest1d, false);
  TPU_NEAREST(upsample_nearest2d, false);
  TPU_NEAREST(upsample_nearest3d, false);
}

#undef TPU_NEAREST

}  // namespace tpu
