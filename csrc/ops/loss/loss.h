// Loss lowerings with PyTorch semantics. reduction: 0 none, 1 mean, 2 sum
// (at::Reduction).
#pragma once

#include <optional>
#include <utility>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::DType;
using shlo::Value;

// nll_loss: self (C), (N, C) or (N, C, d1, ...) with classes on dim 0 / 1;
// target int (), (N) or (N, d1, ...); weight (C) or none; ignore_index 0-d
// int64 operand. Returns {output, total_weight}. Out-of-range targets
// contribute nothing here (the kernel checks them on the device).
std::pair<Value, Value> nll_loss(Builder& b, Value self, Value target, std::optional<Value> weight, int64_t reduction,
                                 Value ignore_index);
Value nll_loss_backward(Builder& b, Value grad, Value self, Value target, std::optional<Value> weight,
                        int64_t reduction, Value ignore_index, Value total_weight);

// mse_loss on already broadcast, same-dtype operands.
Value mse_loss(Builder& b, Value x, Value y, int64_t reduction, DType out);
// grad (0-d or x's shape) -> d/dx, shape of x.
Value mse_loss_backward(Builder& b, Value grad, Value x, Value y, int64_t reduction, DType out);

// huber_loss (param = delta) and smooth_l1_loss (param = beta); operands
// broadcast, math in f32 for f16 / bf16.
enum class RobustLoss { Huber, SmoothL1 };
Value robust_loss(Builder& b, Value x, Value y, RobustLoss kind, double param, int64_t reduction);
Value robust_loss_backward(Builder& b, Value grad, Value x, Value y, RobustLoss kind, double param, int64_t reduction);

// binary_cross_entropy with the CPU's log clamp at -100; x, y (and w) of one shape.
Value binary_cross_entropy(Builder& b, Value x, Value y, std::optional<Value> w, int64_t reduction);
Value binary_cross_entropy_backward(Builder& b, Value grad, Value x, Value y, std::optional<Value> w,
                                    int64_t reduction);

}  // namespace ops
