// Nearest-neighbour upsampling (F.interpolate modes "nearest" and
// "nearest-exact", nn.Upsample) in 1-3 spatial dims, and its gradients.
// Shapes and argument checks come from PyTorch's meta functions; the
// source index of every output position is computed here with PyTorch's
// own index functions, so rounding at odd scales is the CPU's bit for bit.
// The program key carries everything the indices depend on (sizes, scales,
// mode). Lowering: ops/upsample.cc. The family registers itself below.
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
#include <torch/library.h>

#include <cstdio>

#include "aten/library.h"
#include "aten/structured.h"
#include "aten/tensor.h"
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

// Source indices per spatial dim, and the key part that determines them.
std::vector<std::vector<int64_t>> source_indices(at::IntArrayRef in, at::IntArrayRef out, const Scales& scales,
                                                 bool exact, bool grad, std::string& key) {
  std::vector<std::vector<int64_t>> src(out.size());
  key += exact ? "exact[" : "[";
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
    char s[40] = "-";
    if (scales[j]) std::snprintf(s, sizeof s, "%a", *scales[j]);
    key += std::to_string(in[j]) + ">" + std::to_string(out[j]) + "@" + s + ",";
  }
  return src;
}

void forward(const char* name, const at::Tensor& out, const at::Tensor& self, const Scales& scales, bool exact) {
  check_dtype(name, self.scalar_type());
  const size_t n = scales.size();
  at::IntArrayRef in = self.sizes().slice(self.dim() - n), os = out.sizes().slice(out.dim() - n);
  std::string key = "upsample_nearest";
  auto src = source_indices(in, os, scales, exact, false, key);
  write(out, legacy_op(std::move(key), {read(self)}, type_of(out),
                       [src](Builder& b, const Vals& v) { return Vals{ops::resample_nearest(b, v[0], src)}; }));
}

void backward(const char* name, const at::Tensor& grad_input, const at::Tensor& grad, at::IntArrayRef input_size,
              const Scales& scales, bool exact) {
  check_dtype(name, grad.scalar_type());
  const size_t n = scales.size();
  at::IntArrayRef in = input_size.slice(input_size.size() - n), os = grad.sizes().slice(grad.dim() - n);
  std::string key = "upsample_nearest_backward";
  auto src = source_indices(in, os, scales, exact, true, key);
  shlo::Shape in_shape(input_size.begin(), input_size.end());
  write(grad_input,
        legacy_op(std::move(key), {read(grad)}, type_of(grad_input), [src, in_shape](Builder& b, const Vals& v) {
          return Vals{ops::resample_nearest_backward(b, v[0], src, in_shape)};
        }));
}

at::IntArrayRef ints(c10::SymIntArrayRef s) { return C10_AS_INTARRAYREF_SLOW(s); }

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

// Entry points for every variant; S... is one optional scale per spatial dim.
template <class Meta, bool Exact, class... S>
at::Tensor up(const at::Tensor& self, c10::SymIntArrayRef os, S... s) {
  return functional<Meta>(Fwd<Exact>{}, self, ints(os), s...);
}
template <class Meta, bool Exact, class... S>
at::Tensor& up_out(const at::Tensor& self, c10::SymIntArrayRef os, S... s, at::Tensor& out) {
  return out_variant<Meta>(out, Fwd<Exact>{}, self, ints(os), s...);
}
template <class Meta, bool Exact, class... S>
at::Tensor up_back(const at::Tensor& g, c10::SymIntArrayRef os, c10::SymIntArrayRef in, S... s) {
  return functional<Meta>(Bwd<Exact>{}, g, ints(os), ints(in), s...);
}
template <class Meta, bool Exact, class... S>
at::Tensor& up_back_out(const at::Tensor& g, c10::SymIntArrayRef os, c10::SymIntArrayRef in, S... s, at::Tensor& gi) {
  return out_variant<Meta>(gi, Bwd<Exact>{}, g, ints(os), ints(in), s...);
}

using S = std::optional<double>;

}  // namespace

#define TPU_NEAREST(name, exact, ...)                                                              \
  m.impl(#name, &up<at::meta::structured_##name, exact, __VA_ARGS__>);                             \
  m.impl(#name ".out", &up_out<at::meta::structured_##name, exact, __VA_ARGS__>);                  \
  m.impl(#name "_backward", &up_back<at::meta::structured_##name##_backward, exact, __VA_ARGS__>); \
  m.impl(#name "_backward.grad_input", &up_back_out<at::meta::structured_##name##_backward, exact, __VA_ARGS__>)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  TPU_NEAREST(_upsample_nearest_exact1d, true, S);
  TPU_NEAREST(_upsample_nearest_exact2d, true, S, S);
  TPU_NEAREST(_upsample_nearest_exact3d, true, S, S, S);
  TPU_NEAREST(upsample_nearest1d, false, S);
  TPU_NEAREST(upsample_nearest2d, false, S, S);
  TPU_NEAREST(upsample_nearest3d, false, S, S, S);
}

}  // namespace tpu
