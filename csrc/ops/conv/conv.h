// Convolution (PyTorch's convolution / conv_transpose, 1-D to 3-D, with
// stride, padding, dilation, groups) and its gradients, as stablehlo.convolution.
// f16/bf16 products accumulate in f32 and round once, like the matmuls.
#pragma once

#include <tuple>
#include <vector>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

struct ConvParams {
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  auto fields() const { return std::tie(stride, padding, dilation, output_padding, transposed, groups); }
};

// Output shape of conv(input, weight) (weight [O, C/g, k...], or
// [C, O/g, k...] when transposed).
shlo::Shape conv_output_shape(const shlo::Shape& input, const shlo::Shape& weight, const ConvParams& p);

// input [N, C, s...], weight as above, bias [O] or nullptr.
Value conv_forward(Builder& b, Value input, Value weight, const Value* bias, const ConvParams& p);

// Gradients of conv_forward given grad_output (shape of the forward result).
Value conv_grad_input(Builder& b, Value grad_out, Value weight, const shlo::Shape& input_shape, const ConvParams& p);
Value conv_grad_weight(Builder& b, Value grad_out, Value input, const shlo::Shape& weight_shape, const ConvParams& p);
// Sum of grad_out over every dim but the channel dim 1.
Value conv_grad_bias(Builder& b, Value grad_out);

}  // namespace ops
