// Layer norm and RMS norm, forward and backward (and group norm's forward on
// torch releases before 2.13): ATen entry points and their registration. The
// lowering is norm.h.
#include <ATen/native/layer_norm.h>

#include <limits>

#include "aten/library.h"
#include "aten/torch_compat.h"
#include "ops/common/aten_common.h"
#include "ops/norm/norm.h"
#include "ops/reduction/reduction.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

bool present(const std::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

// x's shape with the dims from `axis` on as 1.
std::vector<int64_t> stat_shape(const at::Tensor& x, int64_t axis) {
  std::vector<int64_t> s(x.sizes().begin(), x.sizes().end());
  for (int64_t i = axis; i < x.dim(); ++i) s[i] = 1;
  return s;
}

// Statistics dtype of layer norm on the CPU: f32 when a reduced-precision
// input meets f32 parameters, else the input's dtype.
at::ScalarType ln_stat_dtype(const at::Tensor& x, const std::optional<at::Tensor>& w,
                             const std::optional<at::Tensor>& bias) {
  bool mixed = at::isReducedFloatingType(x.scalar_type()) &&
               ((present(w) && w->scalar_type() == at::kFloat) || (present(bias) && bias->scalar_type() == at::kFloat));
  return mixed ? at::kFloat : x.scalar_type();
}

void rms_check(const at::Tensor& input, at::IntArrayRef normalized_shape, const std::optional<at::Tensor>& weight) {
  int64_t n = static_cast<int64_t>(normalized_shape.size());
  TORCH_CHECK(n >= 1,
              "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
              "element, but got normalized_shape = ",
              normalized_shape);
  TORCH_CHECK(!present(weight) || weight->sizes() == normalized_shape,
              "Expected weight to be of same shape as normalized_shape, but got weight of shape ", weight->sizes(),
              " and normalized_shape = ", normalized_shape);
  TORCH_CHECK_VALUE(input.dim() >= n, "Input tensor must have at least ", n, " dimensions, but got ", input.dim());
  TORCH_CHECK(input.sizes().slice(input.dim() - n) == normalized_shape, "Given normalized_shape=", normalized_shape,
              ", expected input with shape [*", normalized_shape, "], but got input of size", input.sizes());
}

// The requested gradients, in order, of a backward lowering's results.
Vals present_values(const std::vector<std::optional<Value>>& r) {
  Vals res;
  for (auto& x : r)
    if (x) res.push_back(*x);
  return res;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm(const at::Tensor& input,
                                                                 c10::SymIntArrayRef normalized_shape,
                                                                 const std::optional<at::Tensor>& weight,
                                                                 const std::optional<at::Tensor>& bias, double eps) {
  at::IntArrayRef ns = C10_AS_INTARRAYREF_SLOW(normalized_shape);
  at::native::_check_layer_norm_inputs(input, ns, present(weight) ? *weight : at::Tensor(),
                                       present(bias) ? *bias : at::Tensor());
  check_floating(input, "native_layer_norm");
  int64_t axis = input.dim() - static_cast<int64_t>(ns.size());
  at::ScalarType sd = ln_stat_dtype(input, weight, bias);
  at::Tensor out = empty(input.sizes(), input.scalar_type(), input.device());
  at::Tensor mean = empty(stat_shape(input, axis), sd, input.device());
  at::Tensor rstd = empty(stat_shape(input, axis), sd, input.device());
  bool hw = present(weight), hb = present(bias);
  std::vector<engine::Ref> in{read(input), scalar_of(at::Scalar(eps), ops::acc_type(to_shlo(input.scalar_type())))};
  if (hw) in.push_back(read(*weight));
  if (hb) in.push_back(read(*bias));
  write_all(
      {out, mean, rstd}, "layer_norm", std::move(in),
      [](Builder& b, const Vals& v, int64_t axis, bool hw, bool hb, shlo::DType sdt) {
        std::optional<Value> w, bs;
        if (hw) w = v[2];
        if (hb) bs = v[hw ? 3 : 2];
        ops::LayerNormOut r = ops::layer_norm(b, v[0], axis, w, bs, v[1], sdt);
        return Vals{r.out, r.mean, r.rstd};
      },
      axis, hw, hb, to_shlo(sd));
  return {out, mean, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_layer_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, c10::SymIntArrayRef normalized_shape, const at::Tensor& mean,
    const at::Tensor& rstd, const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
    std::array<bool, 3> output_mask) {
  at::IntArrayRef ns = C10_AS_INTARRAYREF_SLOW(normalized_shape);
  at::native::_check_layer_norm_inputs(input, ns, present(weight) ? *weight : at::Tensor(),
                                       present(bias) ? *bias : at::Tensor());
  int64_t axis = input.dim() - static_cast<int64_t>(ns.size());
  bool hw = present(weight), hb = present(bias);
  std::array<bool, 3> mask{output_mask[0], output_mask[1] && hw, output_mask[2] && hb};
  at::Tensor gi, gw, gb;
  std::vector<at::Tensor> outs;
  if (mask[0]) outs.push_back(gi = empty(input.sizes(), input.scalar_type(), input.device()));
  if (mask[1]) outs.push_back(gw = empty(weight->sizes(), weight->scalar_type(), input.device()));
  if (mask[2]) outs.push_back(gb = empty(bias->sizes(), bias->scalar_type(), input.device()));
  if (outs.empty()) return {gi, gw, gb};
  std::vector<engine::Ref> in{read(grad_out), read(input), read(mean), read(rstd)};
  if (hw) in.push_back(read(*weight));
  if (hb) in.push_back(read(*bias));
  write_all(
      outs, "layer_norm_backward", std::move(in),
      [](Builder& b, const Vals& v, int64_t axis, bool hw, bool hb, const std::array<bool, 3>& mask) {
        std::optional<Value> w, bs;
        if (hw) w = v[4];
        if (hb) bs = v[hw ? 5 : 4];
        return present_values(
            ops::layer_norm_backward(b, v[0], v[1], v[2], v[3], w, bs, axis, {mask[0], mask[1], mask[2]}));
      },
      axis, hw, hb, mask);
  return {gi, gw, gb};
}

std::tuple<at::Tensor, at::Tensor> _fused_rms_norm(const at::Tensor& input, at::IntArrayRef normalized_shape,
                                                   const std::optional<at::Tensor>& weight, std::optional<double> eps) {
  rms_check(input, normalized_shape, weight);
  check_floating(input, "rms_norm");
  int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  shlo::DType acc = ops::acc_type(to_shlo(input.scalar_type()));
  // PyTorch's default eps is the machine epsilon of the computation dtype.
  double e = eps.value_or(acc == shlo::DType::F64 ? std::numeric_limits<double>::epsilon()
                                                  : static_cast<double>(std::numeric_limits<float>::epsilon()));
  at::Tensor out = empty(input.sizes(), input.scalar_type(), input.device());
  at::Tensor rstd = empty(stat_shape(input, axis), to_torch(acc), input.device());
  bool hw = present(weight);
  std::vector<engine::Ref> in{read(input), scalar_of(at::Scalar(e), acc)};
  if (hw) in.push_back(read(*weight));
  write_all(
      {out, rstd}, "rms_norm", std::move(in),
      [](Builder& b, const Vals& v, int64_t axis, bool hw) {
        std::optional<Value> w;
        if (hw) w = v[2];
        ops::RmsNormOut r = ops::rms_norm(b, v[0], axis, w, v[1]);
        return Vals{r.out, r.rstd};
      },
      axis, hw);
  return {out, rstd};
}

std::tuple<at::Tensor, at::Tensor> _fused_rms_norm_backward(const at::Tensor& grad_out, const at::Tensor& input,
                                                            at::IntArrayRef normalized_shape, const at::Tensor& rstd,
                                                            const std::optional<at::Tensor>& weight,
                                                            std::array<bool, 2> output_mask) {
  rms_check(input, normalized_shape, weight);
  int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  bool hw = present(weight);
  std::array<bool, 2> mask{output_mask[0], output_mask[1] && hw};
  at::Tensor gi, gw;
  std::vector<at::Tensor> outs;
  if (mask[0]) outs.push_back(gi = empty(input.sizes(), input.scalar_type(), input.device()));
  if (mask[1]) outs.push_back(gw = empty(weight->sizes(), input.scalar_type(), input.device()));
  if (outs.empty()) return {gi, gw};
  std::vector<engine::Ref> in{read(grad_out), read(input), read(rstd)};
  if (hw) in.push_back(read(*weight));
  write_all(
      outs, "rms_norm_backward", std::move(in),
      [](Builder& b, const Vals& v, int64_t axis, bool hw, const std::array<bool, 2>& mask) {
        std::optional<Value> w;
        if (hw) w = v[3];
        return present_values(ops::rms_norm_backward(b, v[0], v[1], v[2], w, axis, {mask[0], mask[1]}));
      },
      axis, hw, mask);
  return {gi, gw};
}

#if TPU_GROUP_NORM_DECOMPOSED
// Group norm as torch 2.13's math_group_norm computes it (see
// aten/torch_compat.h): the statistics of each (sample, group) by var_mean,
// then the per-channel affine. Autograd is unchanged: native_group_norm's
// derivative formula applies to this kernel as to the CPU's.
std::tuple<at::Tensor, at::Tensor, at::Tensor> native_group_norm(const at::Tensor& input,
                                                                 const std::optional<at::Tensor>& weight,
                                                                 const std::optional<at::Tensor>& bias, int64_t n,
                                                                 int64_t c, int64_t hxw, int64_t group, double eps) {
  at::Tensor x = input.contiguous().view({n, group, -1});
  auto [var, mean] = at::var_mean(x, {2}, /*correction=*/0, /*keepdim=*/true);
  at::Tensor rstd = at::rsqrt(var + eps);
  at::Tensor out = ((x - mean) * rstd).view(input.sizes());
  std::vector<int64_t> channel(input.dim(), 1);
  channel[1] = c;
  if (present(weight)) out = out * weight->view(channel);
  if (present(bias)) out = out + bias->view(channel);
  return {out, mean.view({n, group}), rstd.view({n, group})};
}
#endif

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("_fused_rms_norm", &_fused_rms_norm);
  m.impl("_fused_rms_norm_backward", &_fused_rms_norm_backward);
  m.impl("native_layer_norm", &native_layer_norm);
  m.impl("native_layer_norm_backward", &native_layer_norm_backward);
#if TPU_GROUP_NORM_DECOMPOSED
  m.impl("native_group_norm", &native_group_norm);
#endif
}

}  // namespace tpu
