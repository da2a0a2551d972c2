// Pooling kernels of the coverage branch: max / avg / adaptive pooling in
// 2-D and 3-D (1-D pooling reaches these through unsqueezed inputs) and their
// gradients. Output shapes and argument checks come from PyTorch's meta
// functions where it has them. Lowerings: ops/coverage_pool.cc.
#include <ATen/native/AdaptivePooling.h>
#include <ATen/native/Pool.h>
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

#include "aten/kernels.h"
#include "aten/structured.h"
#include "ops/coverage.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

// A pooling argument with one value per spatial dim (one value repeats;
// empty takes `fallback`, as stride defaults to the kernel size).
std::vector<int64_t> per_dim(at::IntArrayRef v, size_t n, at::IntArrayRef fallback) {
  if (v.empty()) v = fallback;
  return v.size() == 1 ? std::vector<int64_t>(n, v[0]) : std::vector<int64_t>(v.begin(), v.end());
}

std::string key_of(const std::vector<ops::Windows>& ws) {
  std::string k = "[";
  for (const ops::Windows& w : ws) {
    k += std::to_string(w.in) + ">" + std::to_string(w.out) + ":";
    for (int64_t r : w.raw) k += std::to_string(r) + ",";
    for (int64_t d : w.divisor) k += std::to_string(d) + ",";
    k += ";";
  }
  return k + "]";
}

// The input as [B, C, *spatial] (a missing batch dim becomes 1).
shlo::Shape batched_shape(const at::Tensor& t, size_t spatial) {
  shlo::Shape s(t.sizes().begin(), t.sizes().end());
  if (s.size() == spatial + 1) s.insert(s.begin(), 1);
  return s;
}

std::vector<ops::Windows> strided_windows(const at::Tensor& self, at::IntArrayRef out_sizes, at::IntArrayRef k,
                                          at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef d,
                                          bool count_include_pad) {
  size_t n = k.size();
  std::vector<ops::Windows> ws;
  for (size_t i = 0; i < n; ++i) {
    int64_t in = self.size(self.dim() - n + i), out = out_sizes[out_sizes.size() - n + i];
    ws.push_back(ops::pool_windows(in, out, k[i], s[i], p[i], d[i], count_include_pad));
  }
  return ws;
}

std::vector<ops::Windows> adaptive(const at::Tensor& self, at::IntArrayRef out_sizes, size_t n) {
  std::vector<ops::Windows> ws;
  for (size_t i = 0; i < n; ++i)
    ws.push_back(ops::adaptive_windows(self.size(self.dim() - n + i), out_sizes[out_sizes.size() - n + i]));
  return ws;
}

// values (and indices) of a max pooling into the given outputs.
void max_into(const at::Tensor& out, const at::Tensor& indices, const at::Tensor& self,
              const std::vector<ops::Windows>& ws) {
  if (out.numel() == 0) return;
  shlo::Shape in = batched_shape(self, ws.size());
  shlo::Shape final_shape = shape_of(out.sizes());
  legacy_write_all({out, indices}, "window_max" + key_of(ws), {read(self)}, [=](Builder& b, const Vals& v) {
    auto [val, idx] = ops::window_max(b, b.reshape(v[0], in), ws);
    return Vals{b.reshape(val, final_shape), b.reshape(idx, final_shape)};
  });
}

void avg_into(const at::Tensor& out, const at::Tensor& self, const std::vector<ops::Windows>& ws, int64_t div) {
  if (out.numel() == 0) return;
  shlo::Shape in = batched_shape(self, ws.size()), final_shape = shape_of(out.sizes());
  write(out, legacy_op("window_avg" + key_of(ws) + std::to_string(div), {read(self)}, type_of(out),
                       [=](Builder& b, const Vals& v) {
                         return Vals{b.reshape(ops::window_avg(b, b.reshape(v[0], in), ws, div), final_shape)};
                       }));
}

void avg_backward_into(const at::Tensor& grad_input, const at::Tensor& grad, const std::vector<ops::Windows>& ws,
                       int64_t div) {
  if (grad_input.numel() == 0) return;
  shlo::Shape gs = batched_shape(grad, ws.size()), final_shape = shape_of(grad_input.sizes());
  shlo::DType t = to_shlo(grad_input.scalar_type());
  write(grad_input,
        legacy_op("window_avg_backward" + key_of(ws) + std::to_string(div), {read_as(grad, t)}, type_of(grad_input),
                  [=](Builder& b, const Vals& v) {
                    return Vals{b.reshape(ops::window_avg_backward(b, b.reshape(v[0], gs), ws, div), final_shape)};
                  }));
}

void max_backward_into(const at::Tensor& grad_input, const at::Tensor& grad, const at::Tensor& indices, size_t n) {
  if (grad_input.numel() == 0) return;
  shlo::Shape gs = batched_shape(grad, n), final_shape = shape_of(grad_input.sizes());
  shlo::Shape in_spatial(grad_input.sizes().end() - n, grad_input.sizes().end());
  shlo::DType t = to_shlo(grad_input.scalar_type());
  write(grad_input, legacy_op("plane_scatter_add" + shape_str(grad_input.sizes()), {read_as(grad, t), read(indices)},
                              type_of(grad_input), [=](Builder& b, const Vals& v) {
                                Value g = b.reshape(v[0], gs), i = b.reshape(v[1], gs);
                                return Vals{b.reshape(ops::plane_scatter_add(b, g, i, in_spatial), final_shape)};
                              }));
}

void check_float(const at::Tensor& self, const char* name) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()), "\"", name, "\" not implemented for '",
                              at::toString(self.scalar_type()), "'");
}

// ---- max_pool2d / 3d with indices

using MMax2 = at::meta::structured_max_pool2d_with_indices;
using MMax2B = at::meta::structured_max_pool2d_with_indices_backward;

void max_pool2d_impl(Structured<MMax2>& m, const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                     at::IntArrayRef p, at::IntArrayRef d, bool ceil_mode) {
  m.meta(self, k, s, p, d, ceil_mode);
  auto kk = per_dim(k, 2, k), ss = per_dim(s, 2, k), pp = per_dim(p, 2, p), dd = per_dim(d, 2, d);
  max_into(m.outs[0], m.outs[1], self, strided_windows(self, m.outs[0].sizes(), kk, ss, pp, dd, true));
}

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

// ---- avg_pool2d / 3d

template <class Meta>
std::vector<ops::Windows> avg_windows(const at::Tensor& self, const at::Tensor& out, at::IntArrayRef k,
                                      at::IntArrayRef s, at::IntArrayRef p, bool count_include_pad, size_t n) {
  auto kk = per_dim(k, n, k), ss = per_dim(s, n, k), pp = per_dim(p, n, p);
  return strided_windows(self, out.sizes(), kk, ss, pp, std::vector<int64_t>(n, 1), count_include_pad);
}

int64_t divisor_of(std::optional<int64_t> d) {
  if (!d.has_value()) return 0;
  TORCH_CHECK(*d != 0, "divisor must be not zero");
  return *d;
}

using MAvg2 = at::meta::structured_avg_pool2d;
using MAvg2B = at::meta::structured_avg_pool2d_backward;
using MAvg3 = at::meta::structured_avg_pool3d;
using MAvg3B = at::meta::structured_avg_pool3d_backward;

template <class Meta, size_t N>
at::Tensor& avg_pool_impl(Structured<Meta>& m, const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                          at::IntArrayRef p, bool ceil_mode, bool cip, std::optional<int64_t> div) {
  m.meta(self, k, s, p, ceil_mode, cip, div);
  int64_t dv = divisor_of(div);
  avg_into(m.outs[0], self, avg_windows<Meta>(self, m.outs[0], k, s, p, cip, N), dv);
  return m.outs[0];
}

template <class Meta, size_t N>
at::Tensor& avg_pool_backward_impl(Structured<Meta>& m, const at::Tensor& grad, const at::Tensor& self,
                                   at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p, bool ceil_mode, bool cip,
                                   std::optional<int64_t> div) {
  m.meta(grad, self, k, s, p, ceil_mode, cip, div);
  int64_t dv = divisor_of(div);
  avg_backward_into(m.outs[0], grad, avg_windows<Meta>(self, grad, k, s, p, cip, N), dv);
  return m.outs[0];
}

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

using MAMax2 = at::meta::structured_adaptive_max_pool2d;
using MAMax2B = at::meta::structured_adaptive_max_pool2d_backward;
using MAMax3 = at::meta::structured_adaptive_max_pool3d;
using MAMax3B = at::meta::structured_adaptive_max_pool3d_backward;

}  // namespace

namespace cov {

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
at::Tensor max_pool2d_with_indices_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k,
                                            at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef d, bool ceil_mode,
                                            const at::Tensor& indices) {
  Structured<MMax2B> m;
  m.meta(grad, self, k, s, p, d, ceil_mode, indices);
  max_backward_into(m.outs[0], grad, indices, 2);
  return m.outs[0];
}
at::Tensor& max_pool2d_with_indices_backward_out(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k,
                                                 at::IntArrayRef s, at::IntArrayRef p, at::IntArrayRef d,
                                                 bool ceil_mode, const at::Tensor& indices, at::Tensor& grad_input) {
  Structured<MMax2B> m({grad_input});
  m.meta(grad, self, k, s, p, d, ceil_mode, indices);
  max_backward_into(grad_input, grad, indices, 2);
  return grad_input;
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

at::Tensor avg_pool2d(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p, bool ceil_mode,
                      bool cip, std::optional<int64_t> div) {
  Structured<MAvg2> m;
  return avg_pool_impl<MAvg2, 2>(m, self, k, s, p, ceil_mode, cip, div);
}
at::Tensor& avg_pool2d_out(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                           bool ceil_mode, bool cip, std::optional<int64_t> div, at::Tensor& out) {
  Structured<MAvg2> m({out});
  avg_pool_impl<MAvg2, 2>(m, self, k, s, p, ceil_mode, cip, div);
  return out;
}
at::Tensor avg_pool2d_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                               at::IntArrayRef p, bool ceil_mode, bool cip, std::optional<int64_t> div) {
  Structured<MAvg2B> m;
  return avg_pool_backward_impl<MAvg2B, 2>(m, grad, self, k, s, p, ceil_mode, cip, div);
}
at::Tensor& avg_pool2d_backward_out(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k,
                                    at::IntArrayRef s, at::IntArrayRef p, bool ceil_mode, bool cip,
                                    std::optional<int64_t> div, at::Tensor& grad_input) {
  Structured<MAvg2B> m({grad_input});
  avg_pool_backward_impl<MAvg2B, 2>(m, grad, self, k, s, p, ceil_mode, cip, div);
  return grad_input;
}
at::Tensor avg_pool3d(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p, bool ceil_mode,
                      bool cip, std::optional<int64_t> div) {
  Structured<MAvg3> m;
  return avg_pool_impl<MAvg3, 3>(m, self, k, s, p, ceil_mode, cip, div);
}
at::Tensor& avg_pool3d_out(const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef p,
                           bool ceil_mode, bool cip, std::optional<int64_t> div, at::Tensor& out) {
  Structured<MAvg3> m({out});
  avg_pool_impl<MAvg3, 3>(m, self, k, s, p, ceil_mode, cip, div);
  return out;
}
at::Tensor avg_pool3d_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k, at::IntArrayRef s,
                               at::IntArrayRef p, bool ceil_mode, bool cip, std::optional<int64_t> div) {
  Structured<MAvg3B> m;
  return avg_pool_backward_impl<MAvg3B, 3>(m, grad, self, k, s, p, ceil_mode, cip, div);
}
at::Tensor& avg_pool3d_backward_out(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef k,
                                    at::IntArrayRef s, at::IntArrayRef p, bool ceil_mode, bool cip,
                                    std::optional<int64_t> div, at::Tensor& grad_input) {
  Structured<MAvg3B> m({grad_input});
  avg_pool_backward_impl<MAvg3B, 3>(m, grad, self, k, s, p, ceil_mode, cip, div);
  return grad_input;
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

#define COV_ADAPTIVE_MAX(n, M, MB)                                                                             \
  std::tuple<at::Tensor, at::Tensor> adaptive_max_pool##n##d(const at::Tensor& self, at::IntArrayRef os) {     \
    Structured<M> m;                                                                                           \
    m.meta(self, os);                                                                                          \
    max_into(m.outs[0], m.outs[1], self, adaptive(self, m.outs[0].sizes(), n));                                \
    return {m.outs[0], m.outs[1]};                                                                             \
  }                                                                                                            \
  std::tuple<at::Tensor&, at::Tensor&> adaptive_max_pool##n##d_out(const at::Tensor& self, at::IntArrayRef os, \
                                                                   at::Tensor& out, at::Tensor& indices) {     \
    Structured<M> m({out, indices});                                                                           \
    m.meta(self, os);                                                                                          \
    max_into(out, indices, self, adaptive(self, out.sizes(), n));                                              \
    return {out, indices};                                                                                     \
  }                                                                                                            \
  at::Tensor adaptive_max_pool##n##d_backward(const at::Tensor& grad, const at::Tensor& self,                  \
                                              const at::Tensor& indices) {                                     \
    Structured<MB> m;                                                                                          \
    m.meta(grad, self, indices);                                                                               \
    max_backward_into(m.outs[0], grad, indices, n);                                                            \
    return m.outs[0];                                                                                          \
  }                                                                                                            \
  at::Tensor& adaptive_max_pool##n##d_backward_out(const at::Tensor& grad, const at::Tensor& self,             \
                                                   const at::Tensor& indices, at::Tensor& grad_input) {        \
    Structured<MB> m({grad_input});                                                                            \
    m.meta(grad, self, indices);                                                                               \
    max_backward_into(grad_input, grad, indices, n);                                                           \
    return grad_input;                                                                                         \
  }
COV_ADAPTIVE_MAX(2, MAMax2, MAMax2B)
COV_ADAPTIVE_MAX(3, MAMax3, MAMax3B)
#undef COV_ADAPTIVE_MAX

}  // namespace cov

}  // namespace tpu
