// Convolution: the overrideable convolution entry points that F.conv1d/2d/3d
// and conv_transpose reach on a PrivateUse1 device, forward and backward, and
// their registration. The lowering is conv.h.
#include <string>

#include "aten/library.h"
#include "ops/conv/conv.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

std::vector<int64_t> expand(at::IntArrayRef v, size_t n, const char* name) {
  TORCH_CHECK(v.size() == 1 || v.size() == n, "expected ", name, " to be a single integer value or a list of ", n,
              " values to match the convolution dimensions, but got ", name, "=", v);
  return v.size() == 1 ? std::vector<int64_t>(n, v[0]) : std::vector<int64_t>(v.begin(), v.end());
}

ops::ConvParams params(const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
                       at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups) {
  TORCH_CHECK(input.dim() >= 3 && input.dim() <= 5, "convolution: expected a 3-D, 4-D or 5-D (batched) input, got ",
              input.dim(), "-D");
  TORCH_CHECK(weight.dim() == input.dim(), "convolution: weight should have ", input.dim(), " dimensions, got ",
              weight.dim());
  TORCH_CHECK(input.scalar_type() == weight.scalar_type(), "Input type (", input.scalar_type(), ") and weight type (",
              weight.scalar_type(), ") should be the same");
  // Integer convolutions run exactly in their own type (the CPU's slow path accepts them).
  TORCH_CHECK((at::isFloatingType(input.scalar_type()) && input.scalar_type() != at::kDouble) ||
                  at::isIntegralType(input.scalar_type(), /*includeBool=*/false),
              "convolution: unsupported dtype ", input.scalar_type(), " on the tpu");
  size_t n = input.dim() - 2;
  ops::ConvParams p;
  p.stride = expand(stride, n, "stride");
  p.padding = expand(padding, n, "padding");
  p.dilation = expand(dilation, n, "dilation");
  p.output_padding = transposed ? expand(output_padding, n, "output_padding") : std::vector<int64_t>(n, 0);
  p.transposed = transposed;
  p.groups = groups;
  TORCH_CHECK(groups > 0, "non-positive groups is not supported");
  for (size_t i = 0; i < n; ++i) {
    TORCH_CHECK(p.stride[i] > 0, "non-positive stride is not supported");
    TORCH_CHECK(p.dilation[i] > 0, "dilation should be greater than zero");
    TORCH_CHECK(p.padding[i] >= 0, "negative padding is not supported");
    TORCH_CHECK(p.output_padding[i] >= 0, "negative output_padding is not supported");
  }
  int64_t c = input.size(1);
  if (transposed) {
    TORCH_CHECK(weight.size(0) == c, "Given transposed=1, weight of size ", weight.sizes(), ", expected input",
                input.sizes(), " to have ", weight.size(0), " channels, but got ", c, " channels instead");
    TORCH_CHECK(c % groups == 0, "Given groups=", groups, ", expected input channels to be divisible by groups");
  } else {
    TORCH_CHECK(weight.size(1) * groups == c, "Given groups=", groups, ", weight of size ", weight.sizes(),
                ", expected input", input.sizes(), " to have ", weight.size(1) * groups, " channels, but got ", c,
                " channels instead");
    TORCH_CHECK(weight.size(0) % groups == 0, "Given groups=", groups, ", expected weight to be divisible by groups");
  }
  return p;
}

at::Tensor convolution_overrideable(const at::Tensor& input, const at::Tensor& weight,
                                    const std::optional<at::Tensor>& bias, at::IntArrayRef stride,
                                    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                                    at::IntArrayRef output_padding, int64_t groups) {
  ops::ConvParams p = params(input, weight, stride, padding, dilation, transposed, output_padding, groups);
  shlo::Shape out = ops::conv_output_shape(shape_of(input.sizes()), shape_of(weight.sizes()), p);
  for (size_t i = 2; i < out.size(); ++i)
    TORCH_CHECK(out[i] > 0, "convolution: calculated output size ", shlo::Shape(out.begin() + 2, out.end()),
                " is too small for input ", input.sizes());
  bool has_bias = bias.has_value() && bias->defined();
  std::vector<engine::Ref> in{read(input), read(weight)};
  if (has_bias) {
    TORCH_CHECK(bias->dim() == 1 && bias->size(0) == out[1], "convolution: expected bias of shape [", out[1], "], got ",
                bias->sizes());
    in.push_back(read_as(*bias, to_shlo(input.scalar_type())));
  }
  engine::Ref r = op1(
      "conv", std::move(in), shlo::Type{to_shlo(input.scalar_type()), out},
      [](Builder& b, const Vals& v, const ops::ConvParams& p, bool has_bias) {
        return Vals{ops::conv_forward(b, v[0], v[1], has_bias ? &v[2] : nullptr, p)};
      },
      p, has_bias);
  return wrap(r, input.device());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_overrideable(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding, int64_t groups,
    std::array<bool, 3> output_mask) {
  ops::ConvParams p = params(input, weight, stride, padding, dilation, transposed, output_padding, groups);
  shlo::DType dt = to_shlo(input.scalar_type());
  shlo::Shape in_shape = shape_of(input.sizes()), w_shape = shape_of(weight.sizes());
  engine::Ref gy = read_as(grad_output, dt);
  at::Tensor gi, gw, gb;
  if (output_mask[0]) {
    // The input's size is not implied by grad_output's (strides floor it).
    gi = wrap(op1(
                  "conv_grad_input", {gy, read(weight)}, shlo::Type{dt, in_shape},
                  [](Builder& b, const Vals& v, const ops::ConvParams& p, const shlo::Shape& in_shape) {
                    return Vals{ops::conv_grad_input(b, v[0], v[1], in_shape, p)};
                  },
                  p, in_shape),
              input.device());
  }
  if (output_mask[1]) {
    gw = wrap(op1(
                  "conv_grad_weight", {gy, read(input)}, shlo::Type{dt, w_shape},
                  [](Builder& b, const Vals& v, const ops::ConvParams& p, const shlo::Shape& w_shape) {
                    return Vals{ops::conv_grad_weight(b, v[0], v[1], w_shape, p)};
                  },
                  p, w_shape),
              input.device());
  }
  if (output_mask[2]) {
    gb = wrap(op1("conv_grad_bias", {gy}, shlo::Type{dt, {grad_output.size(1)}},
                  [](Builder& b, const Vals& v) { return Vals{ops::conv_grad_bias(b, v[0])}; }),
              input.device());
  }
  return {gi, gw, gb};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("convolution_backward_overrideable", &convolution_backward_overrideable);
  m.impl("convolution_overrideable", &convolution_overrideable);
}

}  // namespace tpu
