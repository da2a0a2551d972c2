// Fused optimizer step lowerings: one SGD and one Adam step on hand-checked
// values, a grad scale divided out, and a step skipped on found_inf.
#include <gtest/gtest.h>

#include "ops/optim/optim.h"
#include "test_env.h"

using shlo::Builder;
using shlo::DType;
using shlo::Type;
using shlo::Value;

namespace {

using test_env::run_f32;

std::vector<Value> params(Builder& b, const std::vector<std::vector<int64_t>>& dims) {
  std::vector<Value> v;
  for (const auto& d : dims) v.push_back(b.param(Type{DType::F32, d}));
  return v;
}

}  // namespace

TEST(OpsOptim, SgdMomentumStepAndSkip) {
  // params, grads, buffers, lr, weight_decay, momentum, dampening, found_inf
  const std::vector<std::vector<int64_t>> dims{{2}, {2}, {2}, {}, {}, {}, {}, {1}};
  Builder b;
  ops::SgdConfig cfg;
  cfg.n = 1;
  cfg.momentum = true;
  cfg.found_inf = true;
  std::string text = b.finish(ops::fused_sgd(b, cfg, params(b, dims)));
  std::vector<std::vector<float>> in{{1, 2}, {0.5f, -1}, {1, 1}, {0.1f}, {0}, {0.9f}, {0}, {0}};
  auto out = run_f32(text, in, dims, {2, 2});
  // buf = 0.9 * buf + g; p -= lr * buf
  EXPECT_NEAR(out[1][0], 1.4f, 1e-6);
  EXPECT_NEAR(out[1][1], -0.1f, 1e-6);
  EXPECT_NEAR(out[0][0], 0.86f, 1e-6);
  EXPECT_NEAR(out[0][1], 2.01f, 1e-6);
  in[7] = {1};  // found_inf: nothing changes
  out = run_f32(text, in, dims, {2, 2});
  EXPECT_EQ(out[0], in[0]);
  EXPECT_EQ(out[1], in[2]);
}

TEST(OpsOptim, AdamFirstStepWithGradScale) {
  // params, grads, exp_avgs, exp_avg_sqs, steps, lr, beta1, beta2,
  // weight_decay, eps, grad_scale
  const std::vector<std::vector<int64_t>> dims{{2}, {2}, {2}, {2}, {}, {}, {}, {}, {}, {}, {}};
  Builder b;
  ops::AdamConfig cfg;
  cfg.n = 1;
  cfg.grad_scale = true;
  std::string text = b.finish(ops::fused_adam(b, cfg, params(b, dims)));
  auto out = run_f32(text, {{1, -1}, {8, -2}, {0, 0}, {0, 0}, {1}, {0.1f}, {0.9f}, {0.999f}, {0}, {1e-8f}, {4}}, dims,
                     {2, 2, 2, 2});
  // The first bias-corrected step moves each parameter by lr against its
  // gradient's sign; the stored gradients are unscaled.
  EXPECT_NEAR(out[0][0], 0.9f, 1e-5);
  EXPECT_NEAR(out[0][1], -0.9f, 1e-5);
  EXPECT_NEAR(out[1][0], 0.2f, 1e-6);    // exp_avg = (1 - beta1) g
  EXPECT_NEAR(out[2][0], 0.004f, 1e-7);  // exp_avg_sq = (1 - beta2) g^2
  EXPECT_EQ(out[3], (std::vector<float>{2, -0.5f}));
}
