// The activation lowerings (csrc/ops/activation/activation.h) on the plugin,
// without torch: every activation and backward formula compiles for the
// float dtypes, relu also for integers, and relu keeps NaN as PyTorch does.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/activation/activation.h"
#include "test_env.h"

using shlo::Builder;
using shlo::DType;
using shlo::Type;
using shlo::Value;

TEST(OpsActivation, EveryActivationCompilesForFloats) {
#define OPS_CASE(e, n) ops::Activation::e,
  std::vector<ops::Activation> all = {OPS_ACTIVATION_LIST(OPS_CASE)};
#undef OPS_CASE
  for (ops::Activation op : all) {
    for (DType t : {DType::F32, DType::BF16}) {
      Builder b;
      Value x = b.param(Type{t, {3}});
      EXPECT_NO_THROW(test_env::client().compile(b.finish({ops::activation(b, op, x)}))) << ops::name(op);
    }
  }
}

TEST(OpsActivation, EveryBackwardFormulaCompilesForFloats) {
#define OPS_CASE(e, n) ops::ActivationGrad::e,
  std::vector<ops::ActivationGrad> all = {OPS_ACTIVATION_GRAD_LIST(OPS_CASE)};
#undef OPS_CASE
  for (ops::ActivationGrad op : all) {
    Builder b;
    Value g = b.param(Type{DType::BF16, {3}}), x = b.param(Type{DType::BF16, {3}});
    EXPECT_NO_THROW(test_env::client().compile(b.finish({ops::activation_grad(b, op, g, x)}))) << ops::name(op);
  }
}

TEST(OpsActivation, ReluTakesIntegersAndKeepsNaN) {
  for (DType t : {DType::S32, DType::U8}) {
    Builder b;
    Value x = b.param(Type{t, {3}});
    EXPECT_NO_THROW(test_env::client().compile(b.finish({ops::activation(b, ops::Activation::Relu, x)})));
  }
  Builder b;
  Value x = b.param(Type{DType::F32, {3}});
  auto& c = test_env::client();
  auto exe = c.compile(b.finish({ops::activation(b, ops::Activation::Relu, x)}));
  std::vector<float> in{std::numeric_limits<float>::quiet_NaN(), -1, 2}, out(3);
  auto buf = c.from_host(in.data(), PJRT_Buffer_Type_F32, {3});
  auto outs = exe->execute({buf->get()});
  outs[0]->to_host(out.data(), out.size() * sizeof(float));
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(out[1], 0);
  EXPECT_EQ(out[2], 2);
}
