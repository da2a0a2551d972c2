// The StableHLO builder: programs it prints compile and compute what they say.
#include <gtest/gtest.h>

#include "shlo/builder.h"
#include "test_env.h"

using shlo::Builder;
using shlo::DType;
using shlo::Type;
using shlo::Value;

namespace {

std::vector<float> run_f32(const std::string& text, const std::vector<std::vector<float>>& ins,
                           const std::vector<std::vector<int64_t>>& dims, size_t out_n) {
  return test_env::run_f32(text, ins, dims, {out_n})[0];
}

}  // namespace

TEST(Shlo, ElementwiseAndBroadcast) {
  Builder b;
  Value x = b.param(Type{DType::F32, {2, 3}});
  Value y = b.param(Type{DType::F32, {3}});
  Value r = b.mul(b.add(x, b.broadcast_to(y, {2, 3})), b.constant(DType::F32, 2.0, {2, 3}));
  auto out = run_f32(b.finish({r}), {{1, 2, 3, 4, 5, 6}, {10, 20, 30}}, {{2, 3}, {3}}, 6);
  EXPECT_EQ(out, (std::vector<float>{22, 44, 66, 28, 50, 72}));
}

TEST(Shlo, ReduceTransposeDot) {
  Builder b;
  Value x = b.param(Type{DType::F32, {2, 3}});
  Value s = b.reduce(x, b.zero(DType::F32), {1}, "add");        // [2]
  Value t = b.transpose(x, {1, 0});                             // [3,2]
  Value d = b.dot_general(x, t, {}, {}, {1}, {0}, DType::F32);  // [2,2]
  Value r = b.add(b.reshape(d, {4}), b.concatenate({s, s}, 0));
  auto out = run_f32(b.finish({r}), {{1, 2, 3, 4, 5, 6}}, {{2, 3}}, 4);
  EXPECT_EQ(out, (std::vector<float>{14 + 6, 32 + 15, 32 + 6, 77 + 15}));
}

TEST(Shlo, SortGatherScatter) {
  Builder b;
  Value x = b.param(Type{DType::F32, {4}});
  auto sorted = b.sort({x}, 0, [](Builder& bb, const std::vector<Value>& a) {
    return std::vector<Value>{bb.compare(shlo::Cmp::LT, a[0], a[1])};
  });
  Value idx = b.reshape(b.constant_i64({3, 0}), {2, 1});
  Value g = b.gather(sorted[0], idx, {}, {0}, {0}, 1, {1}, {2});
  Value upd = b.constant(DType::F32, 100, {2});
  Value sc = b.scatter(sorted[0], idx, upd, {}, {0}, {0}, 1, "add");
  Value r = b.concatenate({g, sc}, 0);
  auto out = run_f32(b.finish({r}), {{3, 1, 4, 2}}, {{4}}, 6);
  EXPECT_EQ(out, (std::vector<float>{4, 1, 101, 2, 3, 104}));
}

TEST(Shlo, ConstantsRoundTripBits) {
  Builder b;
  Value x = b.param(Type{DType::F32, {1}});
  Value bf = b.convert(b.constant(DType::BF16, 0.1, {1}), DType::F32);
  Value h = b.convert(b.constant(DType::F16, -0.3333, {1}), DType::F32);
  Value lo = b.reshape(b.convert(b.lowest(DType::S32), DType::F32), {1});
  Value r = b.concatenate({b.add(x, bf), h, lo}, 0);
  auto out = run_f32(b.finish({r}), {{0}}, {{1}}, 3);
  EXPECT_FLOAT_EQ(out[0], 0.10009765625f);
  EXPECT_NEAR(out[1], -0.3333f, 1e-3);
  EXPECT_EQ(out[2], -2147483648.0f);
}

TEST(Shlo, AliasedParamIsConsumedByTheProgram) {
  // A (param, result) alias compiles to a program that takes the input's
  // buffer for its result: the donated input is gone after the run.
  Builder b;
  Value x = b.param(Type{DType::F32, {4}});
  std::string text = b.finish({b.add(x, x)}, {{0, 0}});
  EXPECT_NE(text.find("tf.aliasing_output = 0 : i32"), std::string::npos);
  auto& c = test_env::client();
  auto exe = c.compile(text);
  std::vector<float> in{1, 2, 3, 4}, out(4);
  auto buf = c.from_host(in.data(), PJRT_Buffer_Type_F32, {4});
  auto r = exe->execute({buf->get()});
  r[0]->to_host(out.data(), 16);
  EXPECT_EQ(out, (std::vector<float>{2, 4, 6, 8}));
  EXPECT_THROW(buf->to_host(in.data(), 16), pjrt::Error);
}
