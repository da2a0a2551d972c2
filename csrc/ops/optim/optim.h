// Optimizer steps over every parameter of a group at once: torch.optim's
// fused=True kernels (_fused_adam_, _fused_adamw_, _fused_sgd_), with the
// math and rounding of PyTorch's CPU kernels. Half-precision tensors are
// updated in float32 and rounded once per stored value; scalar
// hyperparameters arrive as 0-d operands in the wide float type and are
// rounded to the compute type as the CPU casts its doubles.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "shlo/builder.h"

namespace ops {

struct AdamConfig {
  int64_t n = 0;         // parameters
  bool adamw = false;    // decoupled weight decay (AdamW)
  bool amsgrad = false;  // max_exp_avg_sqs given
  bool maximize = false;
  bool weight_decay = false;  // weight_decay != 0
  bool grad_scale = false;    // grads are divided by it and stored back
  bool found_inf = false;     // found_inf == 1 leaves everything as it was
  auto fields() const { return std::tie(n, adamw, amsgrad, maximize, weight_decay, grad_scale, found_inf); }
};

// Inputs: params[n], grads[n], exp_avgs[n], exp_avg_sqs[n],
// max_exp_avg_sqs[n] (amsgrad only), state_steps[n] (already incremented),
// lr, beta1, beta2, weight_decay, eps (0-d), then grad_scale and found_inf
// (one element each) when configured.
// Returns params[n], exp_avgs[n], exp_avg_sqs[n], max_exp_avg_sqs[n]
// (amsgrad only), grads[n] (grad_scale only), each in its input's type.
std::vector<shlo::Value> fused_adam(shlo::Builder& b, const AdamConfig& cfg, const std::vector<shlo::Value>& in);

struct SgdConfig {
  int64_t n = 0;          // parameters
  bool momentum = false;  // momentum != 0: momentum buffers given
  bool nesterov = false;
  bool maximize = false;
  bool weight_decay = false;  // weight_decay != 0
  bool first_step = false;    // the buffers start as the gradient
  bool grad_scale = false;
  bool found_inf = false;
  auto fields() const {
    return std::tie(n, momentum, nesterov, maximize, weight_decay, first_step, grad_scale, found_inf);
  }
};

// Inputs: params[n], grads[n], momentum_buffers[n] (momentum only), lr,
// weight_decay, momentum, dampening (0-d), then grad_scale and found_inf
// when configured.
// Returns params[n], momentum_buffers[n] (momentum only), grads[n]
// (grad_scale only).
std::vector<shlo::Value> fused_sgd(shlo::Builder& b, const SgdConfig& cfg, const std::vector<shlo::Value>& in);

}  // namespace ops
