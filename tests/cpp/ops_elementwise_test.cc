// The elementwise lowerings (csrc/ops/elementwise/elementwise.h) on the plugin, without
// torch: every unary and binary op compiles for the dtypes it serves, and the
// values with PyTorch-specific rules (NaN, signs, integer division and powers)
// come out as PyTorch defines them.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/elementwise/elementwise.h"
#include "test_env.h"

using shlo::Builder;
using shlo::DType;
using shlo::Type;
using shlo::Value;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

PJRT_Buffer_Type buffer_type(DType t) {
  switch (t) {
    case DType::F32:
      return PJRT_Buffer_Type_F32;
    case DType::BF16:
      return PJRT_Buffer_Type_BF16;
    case DType::S32:
      return PJRT_Buffer_Type_S32;
    case DType::S64:
      return PJRT_Buffer_Type_S64;
    case DType::PRED:
      return PJRT_Buffer_Type_PRED;
    default:
      return PJRT_Buffer_Type_INVALID;
  }
}

// Runs fn on 1-D inputs of dtype `in` and returns the result converted to T.
template <class T, class In>
std::vector<T> run(DType in, const std::vector<std::vector<In>>& inputs,
                   const std::function<Value(Builder&, const std::vector<Value>&)>& fn, DType out) {
  Builder b;
  std::vector<Value> params;
  for (const auto& v : inputs) params.push_back(b.param(Type{in, {static_cast<int64_t>(v.size())}}));
  Value r = b.convert(fn(b, params), out);
  auto& c = test_env::client();
  auto exe = c.compile(b.finish({r}));
  std::vector<pjrt::BufferPtr> bufs;
  std::vector<PJRT_Buffer*> raw;
  for (const auto& v : inputs) {
    bufs.push_back(c.from_host(v.data(), buffer_type(in), {static_cast<int64_t>(v.size())}));
    raw.push_back(bufs.back()->get());
  }
  auto outs = exe->execute(raw);
  std::vector<T> result(r.shape()[0]);
  outs[0]->to_host(result.data(), result.size() * sizeof(T));
  return result;
}

std::vector<float> unary_f32(ops::Unary op, const std::vector<float>& x) {
  return run<float, float>(
      DType::F32, {x}, [op](Builder& b, const std::vector<Value>& v) { return ops::unary(b, op, v[0]); }, DType::F32);
}

std::vector<int64_t> binary_s64(ops::Binary op, const std::vector<int64_t>& x, const std::vector<int64_t>& y) {
  return run<int64_t, int64_t>(
      DType::S64, {x, y}, [op](Builder& b, const std::vector<Value>& v) { return ops::binary(b, op, v[0], v[1]); },
      DType::S64);
}

std::vector<float> binary_f32(ops::Binary op, const std::vector<float>& x, const std::vector<float>& y) {
  return run<float, float>(
      DType::F32, {x, y}, [op](Builder& b, const std::vector<Value>& v) { return ops::binary(b, op, v[0], v[1]); },
      DType::F32);
}

void expect_same(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i << ": " << got[i];
    else if (std::isinf(want[i]))
      EXPECT_EQ(got[i], want[i]) << "at " << i;
    else
      EXPECT_NEAR(got[i], want[i], 1e-5f * std::max(1.0f, std::fabs(want[i]))) << "at " << i;
  }
}

}  // namespace

TEST(OpsElementwise, EveryUnaryOpCompilesForFloats) {
#define OPS_CASE(e, n) ops::Unary::e,
  std::vector<ops::Unary> all = {OPS_UNARY_LIST(OPS_CASE)};
#undef OPS_CASE
  for (ops::Unary op : all) {
    if (op == ops::Unary::BitwiseNot) continue;  // integers and bool only
    for (DType t : {DType::F32, DType::BF16}) {
      Builder b;
      Value x = b.param(Type{t, {3}});
      EXPECT_NO_THROW(test_env::client().compile(b.finish({ops::unary(b, op, x)}))) << ops::name(op);
    }
  }
}

TEST(OpsElementwise, EveryBinaryOpCompilesForFloats) {
#define OPS_CASE(e, n) ops::Binary::e,
  std::vector<ops::Binary> all = {OPS_BINARY_LIST(OPS_CASE)};
#undef OPS_CASE
  for (ops::Binary op : all) {
    if (op == ops::Binary::BitwiseAnd || op == ops::Binary::BitwiseOr || op == ops::Binary::BitwiseXor) continue;
    Builder b;
    Value x = b.param(Type{DType::BF16, {3}}), y = b.param(Type{DType::BF16, {3}});
    EXPECT_NO_THROW(test_env::client().compile(b.finish({ops::binary(b, op, x, y)}))) << ops::name(op);
  }
}

TEST(OpsElementwise, IntegerUnaryOpsCompile) {
  for (ops::Unary op : {ops::Unary::Abs, ops::Unary::BitwiseNot, ops::Unary::Ceil, ops::Unary::Floor, ops::Unary::Isinf,
                        ops::Unary::Isnan, ops::Unary::Isneginf, ops::Unary::Isposinf, ops::Unary::LogicalNot,
                        ops::Unary::Neg, ops::Unary::Round, ops::Unary::Sign, ops::Unary::Signbit, ops::Unary::Trunc}) {
    for (DType t : {DType::S32, DType::U8, DType::PRED}) {
      if (t == DType::PRED && (op == ops::Unary::Neg || op == ops::Unary::Abs)) continue;
      Builder b;
      Value x = b.param(Type{t, {3}});
      EXPECT_NO_THROW(test_env::client().compile(b.finish({ops::unary(b, op, x)}))) << ops::name(op);
    }
  }
  EXPECT_EQ(
      run<int32_t>(
          DType::S32, std::vector<std::vector<int32_t>>{{-5, 0, 7}},
          [](Builder& b, const std::vector<Value>& v) { return ops::unary(b, ops::Unary::Sign, v[0]); }, DType::S32),
      (std::vector<int32_t>{-1, 0, 1}));
}

TEST(OpsElementwise, UnaryFollowsPyTorch) {
  // sign(NaN) is 0; round is half to even; trunc and frac keep the sign.
  expect_same(unary_f32(ops::Unary::Sign, {kNaN, -0.0f, -3, 2}), {0, 0, -1, 1});
  expect_same(unary_f32(ops::Unary::Round, {0.5f, 1.5f, 2.5f, -2.5f}), {0, 2, 2, -2});
  expect_same(unary_f32(ops::Unary::Trunc, {-1.7f, 1.7f, -0.2f}), {-1, 1, 0});
  expect_same(unary_f32(ops::Unary::Frac, {-1.75f, 1.25f, kInf}), {-0.75f, 0.25f, kNaN});
  expect_same(unary_f32(ops::Unary::Digamma, {0.0f, -0.0f, 1.0f}), {-kInf, kInf, -0.5772157f});
  expect_same(unary_f32(ops::Unary::Exp2, {3, -1}), {8, 0.5f});
  expect_same(unary_f32(ops::Unary::Sinc, {0, 0.5f}), {1, 0.63661977f});
  auto nan_pred = run<uint8_t, float>(
      DType::F32, {{kNaN, 1, kInf}},
      [](Builder& b, const std::vector<Value>& v) { return ops::unary(b, ops::Unary::Isnan, v[0]); }, DType::PRED);
  EXPECT_EQ(nan_pred, (std::vector<uint8_t>{1, 0, 0}));
}

TEST(OpsElementwise, IntegerDivisionAndPowerFollowPython) {
  std::vector<int64_t> a{7, -7, 7, -7, 0}, b{2, 2, -2, -2, 3};
  EXPECT_EQ(binary_s64(ops::Binary::Remainder, a, b), (std::vector<int64_t>{1, 1, -1, -1, 0}));
  EXPECT_EQ(binary_s64(ops::Binary::Fmod, a, b), (std::vector<int64_t>{1, -1, 1, -1, 0}));
  auto floordiv = run<int64_t, int64_t>(
      DType::S64, {a, b}, [](Builder& bb, const std::vector<Value>& v) { return ops::div(bb, v[0], v[1], "floor"); },
      DType::S64);
  EXPECT_EQ(floordiv, (std::vector<int64_t>{3, -4, -4, 3, 0}));
  EXPECT_EQ(binary_s64(ops::Binary::Pow, {2, -1, -1, 1, 5, 3}, {10, -3, -2, -5, -1, 0}),
            (std::vector<int64_t>{1024, -1, 1, 1, 0, 1}));
}

TEST(OpsElementwise, FloatBinaryFollowsPyTorch) {
  // maximum propagates NaN from either side; fmax ignores it.
  expect_same(binary_f32(ops::Binary::Maximum, {kNaN, 1, 2}, {1, kNaN, 3}), {kNaN, kNaN, 3});
  expect_same(binary_f32(ops::Binary::Fmax, {kNaN, 1, 2}, {1, kNaN, 3}), {1, 1, 3});
  expect_same(binary_f32(ops::Binary::Remainder, {-5.5f, 5.5f, 3}, {2, -2, 0}), {0.5f, -0.5f, kNaN});
  expect_same(binary_f32(ops::Binary::Copysign, {2, 2, 2}, {-0.0f, 0.0f, -kNaN}), {-2, 2, -2});
  expect_same(binary_f32(ops::Binary::Xlogy, {0, 0, 2}, {0, kNaN, 1}), {0, kNaN, 0});
  expect_same(binary_f32(ops::Binary::Hypot, {3e30f, 0, kInf}, {4e30f, 0, kNaN}), {5e30f, 0, kInf});
  auto floordiv = run<float, float>(
      DType::F32, {{1, -1, 7.5f, 3}, {0.1f, 0.1f, -2, 0}},
      [](Builder& b, const std::vector<Value>& v) { return ops::div(b, v[0], v[1], "floor"); }, DType::F32);
  expect_same(floordiv, {9, -10, -4, kInf});
}
