// Pooling: max / avg / adaptive pooling in 2-D and 3-D (1-D pooling reaches
// these through unsqueezed inputs), their gradients and max_unpool: ATen
// entry points and their registration. Output shapes and argument checks
// come from PyTorch's meta functions where it has them; the lowerings are
// pooling.h.
#include <ATen/native/AdaptivePooling.h>
#include <ATen/native/Pool.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/adaptive_max_pool2d_backward_meta.h>
#include <ATen/ops/adaptive_max_pool2d_meta.h>
#include <ATen/ops/adaptive_max_pool3d_backward_meta.h>
#include <ATen/ops/adaptive_max_pool3d_meta.h>
#include <ATen/ops/avg_pool2d_backward_meta.h>
#include <ATen/ops/avg_pool2d_meta.h>
#include <ATen/ops/avg_pool3d_backward_meta.h>
#include <ATen/ops/avg_pool3d_meta.h>
#include <ATen/ops/max_pool2d_with_indices_backward_meta.h>
#include <ATen/ops/max_pool2d_with_indices_meta.h>
#include <c10/util/StringUtil.h>

#include "aten/library.h"
#include "ops/common/aten_common.h"
#include "ops/pooling/pooling.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;
using WindowList = std::vector<ops::Windows>;

// A pooling argument with one value per spatial dim (one value repeats;
// empty takes `fallback`, as stride defaults to the kernel size).
std::vector<int64_t> per_dim(at::IntArrayRef v, size_t n, at::IntArrayRef fallback) {
  if (v.empty()) v = fallback;
  return v.size() == 1 ? std::vector<int64_t>(n, v[0]) : std::vector<int64_t>(v.begin(), v.end());
}

// The input as [B, C, *spatial] (a missing batch dim becomes 1).
shlo::Shape batched_shape(const at::Tensor& t, size_t spatial) {
  shlo::Shape s(t.sizes().begin(), t.sizes().end());
  if (s.size() == spatial + 1) s.insert(s.begin(), 1);
  return s;
}

WindowList strided_windows(const at::Tensor& self, at::IntArrayRef out_sizes, at::IntArrayRef k, at::IntArrayRef s,
                           at::IntArrayRef p, at::IntArrayRef d, bool count_include_pad) {
  size_t n = k.size();
  WindowList ws;
  for (size_t i = 0; i < n; ++i) {
    int64_t in = self.size(self.dim() - n + i), out = out_sizes[out_sizes.size() - n + i];
    ws.push_back(ops::pool_windows(in, out, k[i], s[i], p[i], d[i], count_include_pad));
  }
  return ws;
}

WindowList adaptive(const at::Tensor& self, at::IntArrayRef out_sizes, size_t n) {
  WindowList ws;
  for (size_t i = 0; i < n; ++i)
    ws.push_back(ops::adaptive_windows(self.size(self.dim() - n + i), out_sizes[out_sizes.size() - n + i]));
  return ws;
}

// values (and indices) of a max pooling into the given outputs.
void max_into(const at::Tensor& out, const at::Tensor& indices, const at::Tensor& self, const WindowList& ws) {
  if (out.numel() == 0) return;
  write_all(
      {out, indices}, "window_max", {read(self)},
      [](Builder& b, const Vals& v, const WindowList& ws, const shlo::Shape& in, const shlo::Shape& final_shape) {
        auto [val, idx] = ops::window_max(b, b.reshape(v[0], in), ws);
        return Vals{b.reshape(val, final_shape), b.reshape(idx, final_shape)};
      },
      ws, batched_shape(self, ws.size()), shape_of(out.sizes()));
}

void avg_into(const at::Tensor& out, const at::Tensor& self, const WindowList& ws, int64_t div) {
  if (out.numel() == 0) return;
  write_all(
      {out}, "window_avg", {read(self)},
      [](Builder& b, const Vals& v, const WindowList& ws, int64_t div, const shlo::Shape& in,
         const shlo::Shape& final_shape) {
        return Vals{b.reshape(ops::window_avg(b, b.reshape(v[0], in), ws, div), final_shape)};
      },
      ws, div, batched_shape(self, ws.size()), shape_of(out.sizes()));
}

void avg_backward_into(const at::Tensor& grad_input, const at::Tensor& grad, const WindowList& ws, int64_t div) {
  if (grad_input.numel() == 0) return;
  shlo::DType t = to_shlo(grad_input.scalar_type());
  write_all(
      {grad_input}, "window_avg_backward", {read_as(grad, t)},
      [](Builder& b, const Vals& v, const WindowList& ws, int64_t div, const shlo::Shape& gs,
         const shlo::Shape& final_shape) {
        return Vals{b.reshape(ops::window_avg_backward(b, b.reshape(v[0], gs), ws, div), final_shape)};
      },
      ws, div, batched_shape(grad, ws.size()), shape_of(grad_input.sizes()));
}

void max_backward_into(const at::Tensor& grad_input, const at::Tensor& grad, const at::Tensor& indices, size_t n) {
  if (grad_input.numel() == 0) return;
  shlo::Shape in_spatial(grad_input.sizes().end() - n, grad_input.sizes().end());
  shlo::DType t = to_shlo(grad_input.scalar_type());
  write_all(
      {grad_input}, "plane_scatter_add", {read_as(grad, t), read(indices)},
      [](Builder& b, const Vals& v, const shlo::Shape& gs, const shlo::Shape& in_spatial,
         const shlo::Shape& final_shape) {
        Value g = b.reshape(v[0], gs), i = b.reshape(v[1], gs);
        return Vals{b.reshape(ops::plane_scatter_add(b, g, i, in_spatial), final_shape)};
      },
      batched_shape(grad, n), in_spatial, shape_of(grad_input.sizes()));
}

// ---- max_pool2d / 3d with indices

using MMax2 = at::meta::structured_max_pool2d_with_indices;

void max_pool2d_impl(Structured<MMax2>& m, const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                     at::IntArrayRef p, at::IntArrayRef d, bool ceil_mode) {
  m.meta(self, k, s, p, d, ceil_mode);
  auto kk = per_dim(k, 2, k), ss = per_dim(s, 2, k), pp = per_dim(p, 2, p), dd = per_dim(d, 2, d);
  max_into(m.outs[0], m.outs[1], self, strided_windows(self, m.outs[0].sizes(), kk, ss, pp, dd, true));
}

std::tuple<at::Tensor, at::Tensor> max_pool2d_with_indices(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                                                           at::IntArrayRef p, at::IntArrayRef d, bool ceil_mode) {
  Structured<MMax2> m;
  max_pool2d_impl(m, self, k, s, p, d, ceil_mode);
  return {m.outs[0], m.outs[1]};
}
std::tuple<at::Tensor&, at::Tensor&> max_pool2d_with_indices_out(const at::Tensor& self, at::IntArrayRef k,
                                                                 at::IntArrayRef s, at::IntArrayRef p,
                                                                 at::IntArrayRef d, bool ceil_mode, at::Tensor& out,
                                                                 at::Tensor& indices) {
  Structured<MMax2> m({out, indices});
  max_pool2d_impl(m, self, k, s, p, d, ceil_mode);
  return {out, indices};
}

struct MaxPool2dBackward {
  template <class M>
  void operator()(M&, const at::Tensor& grad_input, const at::Tensor& grad, const at::Tensor&, at::IntArrayRef,
                  at::IntArrayRef, at::IntArrayRef, at::IntArrayRef, bool, const at::Tensor& indices) const {
    max_backward_into(grad_input, grad, indices, 2);
  }
};

// max_pool3d has no meta function: PyTorch's shape rules and checks.
std::vector<int64_t> max_pool3d_shape(const at::Tensor& self, const std::vector<int64_t>& k,
                                      const std::vector<int64_t>& s, const std::vector<int64_t>& p,
                                      const std::vector<int64_t>& d, bool ceil_mode, at::IntArrayRef k_arg,
                                      at::IntArrayRef s_arg, at::IntArrayRef p_arg, at::IntArrayRef d_arg) {
  TORCH_CHECK(k_arg.size() == 1 || k_arg.size() == 3,
              "max_pool3d: kernel_size must either be a single int, or a tuple of three ints");
  TORCH_CHECK(s_arg.empty() || s_arg.size() == 1 || s_arg.size() == 3,
              "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints");
  TORCH_CHECK(p_arg.size() == 1 || p_arg.size() == 3,
              "max_pool3d: padding must either be a single int, or a tuple of three ints");
  TORCH_CHECK(d_arg.size() == 1 || d_arg.size() == 3,
              "max_pool3d: dilation must be either a single int, or a tuple of three ints");
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, "non-empty 4D or 5D (batch mode) tensor expected for input");
  int64_t it = self.size(-3), ih = self.size(-2), iw = self.size(-1);
  int64_t ot = at::native::pooling_output_shape<int64_t>(it, k[0], p[0], s[0], d[0], ceil_mode);
  int64_t oh = at::native::pooling_output_shape<int64_t>(ih, k[1], p[1], s[1], d[1], ceil_mode);
  int64_t ow = at::native::pooling_output_shape<int64_t>(iw, k[2], p[2], s[2], d[2], ceil_mode);
  at::native::pool3d_shape_check(self, self.size(-4), k[0], k[1], k[2], s[0], s[1], s[2], p[0], p[1], p[2], d[0], d[1],
                                 d[2], it, ih, iw, ot, oh, ow, "max_pool3d_with_indices()");
  std::vector<int64_t> out(self.sizes().begin(), self.sizes().end() - 3);
  out.insert(out.end(), {ot, oh, ow});
  return out;
}

void max_pool3d_into(const at::Tensor& self, at::IntArrayRef k_arg, at::IntArrayRef s_arg, at::IntArrayRef p_arg,
                     at::IntArrayRef d_arg, bool ceil_mode, at::Tensor& out, at::Tensor& indices) {
  auto k = per_dim(k_arg, 3, k_arg), s = per_dim(s_arg, 3, k_arg), p = per_dim(p_arg, 3, p_arg),
       d = per_dim(d_arg, 3, d_arg);
  std::vector<int64_t> os = max_pool3d_shape(self, k, s, p, d, ceil_mode, k_arg, s_arg, p_arg, d_arg);
  at::native::resize_output(out, os);
  at::native::resize_output(indices, os);
  max_into(out, indices, self, strided_windows(self, os, k, s, p, d, true));
}

std::tuple<at::Tensor, at::Tensor> max_pool3d_with_indices(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                                                           at::IntArrayRef p, at::IntArrayRef d, bool ceil_mode) {
  at::Tensor out = empty({0}, self.scalar_type(), self.device()), idx = empty({0}, at::kLong, self.device());
  max_pool3d_into(self, k, s, p, d, ceil_mode, out, idx);
  return {out, idx};
}
std::tuple<at::Tensor&, at::Tensor&> max_pool3d_with_indices_out(const at::Tensor& self, at::IntArrayRef k,
                                                                 at::IntArrayRef s, at::IntArrayRef p,
                                                                 at::IntArrayRef d, bool ceil_mode, at::Tensor& out,
                                                                 at::Tensor& indices) {
  max_pool3d_into(self, k, s, p, d, ceil_mode, out, indices);
  return {out, indices};
}
at::Tensor& max_pool3d_with_indices_backward_out(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k,
                                                 at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef d,
                                                 bool ceil_mode, const at::Tensor& indices, at::Tensor& grad_input) {
  TORCH_CHECK(grad.sizes() == indices.sizes(), "max_pool3d_with_indices_backward: grad_output of shape ", grad.sizes(),
              " and indices of shape ", indices.sizes(), " differ");
  at::native::resize_output(grad_input, self.sizes());
  max_backward_into(grad_input, grad, indices, 3);
  return grad_input;
}
at::Tensor max_pool3d_with_indices_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k,
                                            at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef d, bool ceil_mode,
                                            const at::Tensor& indices) {
  at::Tensor gi = empty(self.sizes(), self.scalar_type(), self.device());
  return max_pool3d_with_indices_backward_out(grad, self, k, s, p, d, ceil_mode, indices, gi);
}

// ---- avg_pool2d / 3d (structured)

WindowList avg_windows(const at::Tensor& self, const at::Tensor& out, at::IntArrayRef k, at::IntArrayRef s,
                       at::IntArrayRef p, bool count_include_pad, size_t n) {
  auto kk = per_dim(k, n, k), ss = per_dim(s, n, k), pp = per_dim(p, n, p);
  return strided_windows(self, out.sizes(), kk, ss, pp, std::vector<int64_t>(n, 1), count_include_pad);
}

int64_t divisor_of(std::optional<int64_t> d) {
  if (!d.has_value()) return 0;
  TORCH_CHECK(*d != 0, "divisor must be not zero");
  return *d;
}

template <size_t N>
struct AvgPool {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                  at::IntArrayRef p, bool, bool cip, std::optional<int64_t> div) const {
    int64_t dv = divisor_of(div);
    avg_into(out, self, avg_windows(self, out, k, s, p, cip, N), dv);
  }
};

template <size_t N>
struct AvgPoolBackward {
  template <class M>
  void operator()(M&, const at::Tensor& grad_input, const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k,
                  at::IntArrayRef s, at::IntArrayRef p, bool, bool cip, std::optional<int64_t> div) const {
    int64_t dv = divisor_of(div);
    avg_backward_into(grad_input, grad, avg_windows(self, grad, k, s, p, cip, N), dv);
  }
};

// ---- adaptive pooling

std::vector<int64_t> adaptive_shape(const at::Tensor& self, at::IntArrayRef output_size, size_t n, const char* name) {
  TORCH_CHECK(output_size.size() == n, name, ": output_size must be ", n);
  TORCH_CHECK(self.dim() == static_cast<int64_t>(n) + 1 || self.dim() == static_cast<int64_t>(n) + 2, name,
              "(): Expected ", n + 1, "D or ", n + 2, "D tensor, but got ", self.sizes());
  for (int64_t i = 1; i < self.dim(); ++i)
    TORCH_CHECK(self.size(i) > 0, name,
                "(): Expected input to have non-zero size for non-batch dimensions, but "
                "input has sizes ",
                self.sizes(), " with dimension ", i, " being empty");
  for (int64_t o : output_size)
    TORCH_CHECK(o >= 0, name, ": elements of output_size must be greater than or equal to 0");
  std::vector<int64_t> out(self.sizes().begin(), self.sizes().end() - n);
  out.insert(out.end(), output_size.begin(), output_size.end());
  return out;
}

at::Tensor adaptive_avg(const at::Tensor& self, at::IntArrayRef output_size, size_t n, const char* name,
                        at::Tensor* out_arg) {
  std::vector<int64_t> os = adaptive_shape(self, output_size, n, name);
  at::Tensor out = out_arg ? *out_arg : empty(os, self.scalar_type(), self.device());
  if (out_arg) {
    TORCH_CHECK(out.scalar_type() == self.scalar_type(), name, ": expected out dtype ", self.scalar_type());
    at::native::resize_output(out, os);
  }
  avg_into(out, self, adaptive(self, os, n), 0);
  return out;
}

at::Tensor adaptive_avg_backward(const at::Tensor& grad, const at::Tensor& self, size_t n, at::Tensor* out_arg) {
  at::native::adaptive_pool_empty_output_check(
      grad, n == 2 ? "adaptive_avg_pool2d_backward" : "adaptive_avg_pool3d_backward");
  TORCH_CHECK(grad.dim() == self.dim(), "adaptive_avg_pool_backward: grad_output and input dims differ");
  at::Tensor gi = out_arg ? *out_arg : empty(self.sizes(), self.scalar_type(), self.device());
  if (out_arg) at::native::resize_output(gi, self.sizes());
  avg_backward_into(gi, grad, adaptive(self, grad.sizes(), n), 0);
  return gi;
}

at::Tensor _adaptive_avg_pool2d(const at::Tensor& self, c10::SymIntArrayRef output_size) {
  return adaptive_avg(self, C10_AS_INTARRAYREF_SLOW(output_size), 2, "adaptive_avg_pool2d", nullptr);
}
at::Tensor& _adaptive_avg_pool2d_out(const at::Tensor& self, c10::SymIntArrayRef output_size, at::Tensor& out) {
  adaptive_avg(self, C10_AS_INTARRAYREF_SLOW(output_size), 2, "adaptive_avg_pool2d", &out);
  return out;
}
at::Tensor _adaptive_avg_pool2d_backward(const at::Tensor& grad, const at::Tensor& self) {
  return adaptive_avg_backward(grad, self, 2, nullptr);
}
at::Tensor _adaptive_avg_pool3d(const at::Tensor& self, c10::SymIntArrayRef output_size) {
  return adaptive_avg(self, C10_AS_INTARRAYREF_SLOW(output_size), 3, "adaptive_avg_pool3d", nullptr);
}
at::Tensor& _adaptive_avg_pool3d_out(const at::Tensor& self, c10::SymIntArrayRef output_size, at::Tensor& out) {
  adaptive_avg(self, C10_AS_INTARRAYREF_SLOW(output_size), 3, "adaptive_avg_pool3d", &out);
  return out;
}
at::Tensor _adaptive_avg_pool3d_backward(const at::Tensor& grad, const at::Tensor& self) {
  return adaptive_avg_backward(grad, self, 3, nullptr);
}

// adaptive_max_pool2d / 3d return (values, indices), which Kernels::structured
// does not cover: their two variants are written here around the meta.
template <class Meta, size_t N>
std::tuple<at::Tensor, at::Tensor> adaptive_max_pool(const at::Tensor& self, at::IntArrayRef os) {
  Structured<Meta> m;
  m.meta(self, os);
  max_into(m.outs[0], m.outs[1], self, adaptive(self, m.outs[0].sizes(), N));
  return {m.outs[0], m.outs[1]};
}
template <class Meta, size_t N>
std::tuple<at::Tensor&, at::Tensor&> adaptive_max_pool_out(const at::Tensor& self, at::IntArrayRef os, at::Tensor& out,
                                                           at::Tensor& indices) {
  Structured<Meta> m({out, indices});
  m.meta(self, os);
  max_into(out, indices, self, adaptive(self, out.sizes(), N));
  return {out, indices};
}

template <size_t N>
struct AdaptiveMaxPoolBackward {
  template <class M>
  void operator()(M&, const at::Tensor& grad_input, const at::Tensor& grad, const at::Tensor&,
                  const at::Tensor& indices) const {
    max_backward_into(grad_input, grad, indices, N);
  }
};

// ---- max_unpool

engine::Ref max_unpool_ref(const at::Tensor& self, const at::Tensor& indices, at::IntArrayRef output_size,
                           size_t spatial, const char* name) {
  int64_t dims = static_cast<int64_t>(spatial);
  TORCH_CHECK(indices.scalar_type() == at::kLong,
              "elements in indices should be type int64 but got: ", indices.scalar_type());
  TORCH_CHECK(output_size.size() == spatial, "There should be exactly ", spatial,
              " elements (height, width) in output_size, but got ", output_size.size(), " elements.");
  TORCH_CHECK(self.dim() == dims + 1 || self.dim() == dims + 2, "Input to ", name, " should be a ", dims + 1, "d or ",
              dims + 2, "d Tensor, but got a tensor with ", self.dim(), " dimensions.");
  TORCH_CHECK(self.sizes() == indices.sizes(), "Expected shape of indices to be same as that of the input tensor (",
              self.sizes(), ") but got indices tensor with shape: ", indices.sizes());
  for (int64_t i = 1; i < self.dim(); ++i)
    TORCH_CHECK(self.size(i) > 0, name, "(): Expected input to have non-zero size for non-batch dimensions, but got ",
                self.sizes(), " with dimension ", i, " being empty.");
  int64_t plane = 1;
  for (int64_t s : output_size) plane *= s;
  // Device indices are checked later (at the next host read): capture by value.
  std::string volume = c10::Join("x", output_size);
  check_index_bounds(indices, 0, plane, [volume](int64_t v) {
    TORCH_CHECK(false, "Found an invalid max index: ", v, " (output volumes are of size ", volume, ")");
  });
  bool batched = self.dim() == dims + 2;
  shlo::Type t = type_of(self);
  std::vector<int64_t> lead(self.sizes().begin(), self.sizes().end() - dims);
  if (!batched) lead.insert(lead.begin(), 1);
  shlo::Shape in_shape = lead;
  in_shape.insert(in_shape.end(), self.sizes().end() - dims, self.sizes().end());
  shlo::Shape out_spatial(output_size.begin(), output_size.end());
  t.shape.assign(lead.begin() + (batched ? 0 : 1), lead.end());
  t.shape.insert(t.shape.end(), out_spatial.begin(), out_spatial.end());
  shlo::Shape final_shape = t.shape;
  return op1(
      "max_unpool", {read(self), read(indices)}, t,
      [](Builder& b, const Vals& in, const shlo::Shape& in_shape, const shlo::Shape& out_spatial,
         const shlo::Shape& final_shape) {
        Value x = b.reshape(in[0], in_shape), idx = b.reshape(in[1], in_shape);
        return Vals{b.reshape(ops::max_unpool(b, x, idx, out_spatial), final_shape)};
      },
      in_shape, out_spatial, final_shape);
}

at::Tensor max_unpool2d(const at::Tensor& self, const at::Tensor& indices, c10::SymIntArrayRef output_size) {
  return wrap(max_unpool_ref(self, indices, C10_AS_INTARRAYREF_SLOW(output_size), 2, "max_unpool2d"), self.device());
}
at::Tensor& max_unpool2d_out(const at::Tensor& self, const at::Tensor& indices, c10::SymIntArrayRef output_size,
                             at::Tensor& out) {
  return store_out(out, max_unpool_ref(self, indices, C10_AS_INTARRAYREF_SLOW(output_size), 2, "max_unpool2d"));
}
at::Tensor max_unpool3d(const at::Tensor& self, const at::Tensor& indices, c10::SymIntArrayRef output_size,
                        at::IntArrayRef stride, at::IntArrayRef padding) {
  TORCH_CHECK(stride.size() == 3 && padding.size() == 3, "max_unpool3d: stride and padding must have 3 elements");
  return wrap(max_unpool_ref(self, indices, C10_AS_INTARRAYREF_SLOW(output_size), 3, "max_unpool3d"), self.device());
}
at::Tensor& max_unpool3d_out(const at::Tensor& self, const at::Tensor& indices, c10::SymIntArrayRef output_size,
                             at::IntArrayRef stride, at::IntArrayRef padding, at::Tensor& out) {
  TORCH_CHECK(stride.size() == 3 && padding.size() == 3, "max_unpool3d: stride and padding must have 3 elements");
  return store_out(out, max_unpool_ref(self, indices, C10_AS_INTARRAYREF_SLOW(output_size), 3, "max_unpool3d"));
}

using MAMax2 = at::meta::structured_adaptive_max_pool2d;
using MAMax3 = at::meta::structured_adaptive_max_pool3d;

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("_adaptive_avg_pool2d", &_adaptive_avg_pool2d);
  m.impl("_adaptive_avg_pool2d.out", &_adaptive_avg_pool2d_out);
  m.impl("_adaptive_avg_pool2d_backward", &_adaptive_avg_pool2d_backward);
  m.impl("_adaptive_avg_pool3d", &_adaptive_avg_pool3d);
  m.impl("_adaptive_avg_pool3d.out", &_adaptive_avg_pool3d_out);
  m.impl("_adaptive_avg_pool3d_backward", &_adaptive_avg_pool3d_backward);
  m.impl("adaptive_max_pool2d", &adaptive_max_pool<MAMax2, 2>);
  m.impl("adaptive_max_pool2d.out", &adaptive_max_pool_out<MAMax2, 2>);
  m.structured<at::meta::structured_adaptive_max_pool2d_backward>(
      "adaptive_max_pool2d_backward", nullptr, "adaptive_max_pool2d_backward.grad_input", AdaptiveMaxPoolBackward<2>{});
  m.impl("adaptive_max_pool3d", &adaptive_max_pool<MAMax3, 3>);
  m.impl("adaptive_max_pool3d.out", &adaptive_max_pool_out<MAMax3, 3>);
  m.structured<at::meta::structured_adaptive_max_pool3d_backward>(
      "adaptive_max_pool3d_backward", nullptr, "adaptive_max_pool3d_backward.grad_input", AdaptiveMaxPoolBackward<3>{});
  m.structured<at::meta::structured_avg_pool2d>("avg_pool2d", nullptr, "avg_pool2d.out", AvgPool<2>{});
  m.structured<at::meta::structured_avg_pool2d_backward>("avg_pool2d_backward", nullptr,
                                                         "avg_pool2d_backward.grad_input", AvgPoolBackward<2>{});
  m.structured<at::meta::structured_avg_pool3d>("avg_pool3d", nullptr, "avg_pool3d.out", AvgPool<3>{});
  m.structured<at::meta::structured_avg_pool3d_backward>("avg_pool3d_backward", nullptr,
                                                         "avg_pool3d_backward.grad_input", AvgPoolBackward<3>{});
  m.impl("max_pool2d_with_indices", &max_pool2d_with_indices);
  m.impl("max_pool2d_with_indices.out", &max_pool2d_with_indices_out);
  m.structured<at::meta::structured_max_pool2d_with_indices_backward>(
      "max_pool2d_with_indices_backward", nullptr, "max_pool2d_with_indices_backward.grad_input", MaxPool2dBackward{});
  m.impl("max_pool3d_with_indices", &max_pool3d_with_indices);
  m.impl("max_pool3d_with_indices.out", &max_pool3d_with_indices_out);
  m.impl("max_pool3d_with_indices_backward", &max_pool3d_with_indices_backward);
  m.impl("max_pool3d_with_indices_backward.grad_input", &max_pool3d_with_indices_backward_out);
  m.impl("max_unpool2d", &max_unpool2d);
  m.impl("max_unpool2d.out", &max_unpool2d_out);
  m.impl("max_unpool3d", &max_unpool3d);
  m.impl("max_unpool3d.out", &max_unpool3d_out);
}

}  // namespace tpu
