// Activation functions and their gradients with PyTorch semantics: the
// nonlinearities of torch.nn.functional (relu, gelu, silu, elu, softplus,
// ...), the backward formulas autograd calls for them, glu and PReLU.
// Operands arrive already broadcast and in the op's common dtype; 0-d scalar
// operands (slopes, thresholds...) are broadcast and converted here.
// Float16 / bfloat16 math runs in float32 and rounds back, as PyTorch's CPU
// kernels do ("opmath").
#pragma once

#include <optional>
#include <vector>

#include "ops/common/named_enum.h"
#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

// (enum name, PyTorch name)
// clang-format off: macro lists, several entries to a line
#define OPS_ACTIVATION_LIST(X)                                                                       \
  X(Gelu, "gelu") X(GeluTanh, "gelu_tanh") X(Hardsigmoid, "hardsigmoid") X(Hardswish, "hardswish") \
  X(LogSigmoid, "log_sigmoid") X(Mish, "mish") X(Relu, "relu") X(Silu, "silu")
OPS_NAMED_ENUM(Activation, OPS_ACTIVATION_LIST)

// Backward formulas (grad, saved tensor: the forward's input, or its output
// for sigmoid and tanh).
#define OPS_ACTIVATION_GRAD_LIST(X)                                                                        \
  X(GeluBackward, "gelu_backward") X(GeluTanhBackward, "gelu_tanh_backward")                               \
  X(HardsigmoidBackward, "hardsigmoid_backward") X(HardswishBackward, "hardswish_backward")                 \
  X(LogSigmoidBackward, "log_sigmoid_backward") X(MishBackward, "mish_backward")                           \
  X(SigmoidBackward, "sigmoid_backward") X(SiluBackward, "silu_backward") X(TanhBackward, "tanh_backward")
OPS_NAMED_ENUM(ActivationGrad, OPS_ACTIVATION_GRAD_LIST)
// clang-format on

// Same dtype as x (relu also takes integers).
Value activation(Builder& b, Activation op, Value x);
// Same dtype as grad.
Value activation_grad(Builder& b, ActivationGrad op, Value grad, Value saved);

// x <= threshold ? value : other (threshold and threshold_backward).
Value threshold(Builder& b, Value x, Value other, Value threshold, Value value);
Value leaky_relu(Builder& b, Value x, Value slope);
Value leaky_relu_backward(Builder& b, Value grad, Value x, Value slope);
// x > 0 ? scale * x : alpha * scale * (exp(input_scale * x) - 1)
Value elu(Builder& b, Value x, Value alpha, Value scale, Value input_scale);
// x_or_y is the forward input, or its result when is_result.
Value elu_backward(Builder& b, Value grad, Value x_or_y, Value alpha, Value scale, Value input_scale, bool is_result);
Value hardtanh_backward(Builder& b, Value grad, Value x, Value lo, Value hi);
Value softplus(Builder& b, Value x, Value beta, Value threshold);
Value softplus_backward(Builder& b, Value grad, Value x, Value beta, Value threshold);
// hardshrink: |x| <= lambd ? 0 : x; softshrink moves the rest towards 0 by lambd.
Value shrink(Builder& b, Value x, Value lambd, bool soft);
// Both shrinks: |x| <= lambd ? 0 : grad.
Value shrink_backward(Builder& b, Value grad, Value x, Value lambd);
// log(z / (1 - z)) with z = x, or x clamped to [eps, 1 - eps] when eps is given.
Value logit(Builder& b, Value x, std::optional<Value> eps);
Value logit_backward(Builder& b, Value grad, Value x, std::optional<Value> eps);

// First half of x along dim times sigmoid of the second half.
Value glu(Builder& b, Value x, int64_t dim);
Value glu_backward(Builder& b, Value grad, Value x, int64_t dim);

// PReLU, autocast's one elementwise lower-precision op: x > 0 ? x : w * x,
// with (grad_x, grad_w) for its backward. Operands already broadcast.
Value prelu(Builder& b, Value x, Value w);
std::vector<Value> prelu_backward(Builder& b, Value grad, Value x, Value w);

}  // namespace ops
