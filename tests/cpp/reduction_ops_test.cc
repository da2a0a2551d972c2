// Reduction / scan / norm lowerings (csrc/ops) run on the XLA:CPU plugin,
// without torch: the semantics PyTorch users rely on that XLA does not give
// for free (NaN-propagating extremes, first-index argmax, long scans).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/norm/norm.h"
#include "ops/reduction/reduction.h"
#include "ops/scan/scan.h"
#include "test_env.h"

using shlo::Builder;
using shlo::DType;
using shlo::Type;
using shlo::Value;

namespace {

// Runs a one-input f32 program; returns output `which` as raw bytes.
template <class T>
std::vector<T> run(const std::string& text, const std::vector<float>& in, const std::vector<int64_t>& dims,
                   size_t out_n, int which = 0) {
  auto& c = test_env::client();
  auto exe = c.compile(text);
  auto buf = c.from_host(in.data(), PJRT_Buffer_Type_F32, dims);
  auto outs = exe->execute({buf->get()});
  std::vector<T> out(out_n);
  outs[which]->to_host(out.data(), out_n * sizeof(T));
  return out;
}

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST(ReductionOps, MaxPropagatesNanAndArgmaxTakesFirstIndex) {
  Builder b;
  Value x = b.param(Type{DType::F32, {3, 4}});
  Value m = ops::reduce(b, x, ops::Reduce::Max, {1}, false, DType::F32);
  auto [v, i] = ops::arg_reduce(b, x, 1, false, true);
  std::string text = b.finish({m, i, v});
  std::vector<float> in{1, 3, 3, 2, /**/ 1, kNan, 5, kNan, /**/ -kInf, -kInf, -kInf, -kInf};
  auto maxes = run<float>(text, in, {3, 4}, 3, 0);
  auto idx = run<int64_t>(text, in, {3, 4}, 3, 1);
  EXPECT_EQ(maxes[0], 3);
  EXPECT_TRUE(std::isnan(maxes[1]));
  EXPECT_EQ(maxes[2], -kInf);
  EXPECT_EQ(idx, (std::vector<int64_t>{1, 1, 0}));
}

TEST(ReductionOps, LongScansMatchSerialSums) {
  const int64_t n = 1000;
  Builder b;
  Value x = b.param(Type{DType::F32, {n}});
  std::string text = b.finish({ops::scan(b, x, ops::Scan::Sum, 0, DType::F32)});
  std::vector<float> in(n);
  for (int64_t k = 0; k < n; ++k) in[k] = static_cast<float>(k);
  auto out = run<float>(text, in, {n}, n);
  for (int64_t k = 0; k < n; k += 37) EXPECT_EQ(out[k], static_cast<float>(k * (k + 1) / 2)) << k;
}

TEST(ReductionOps, LogCumSumExpKeepsInfinities) {
  Builder b;
  Value x = b.param(Type{DType::F32, {5}});
  std::string text = b.finish({ops::scan(b, x, ops::Scan::LogAddExp, 0, DType::F32)});
  auto out = run<float>(text, {-kInf, -kInf, 0, kInf, 1}, {5}, 5);
  EXPECT_EQ(out[0], -kInf);
  EXPECT_EQ(out[1], -kInf);
  EXPECT_FLOAT_EQ(out[2], 0);
  EXPECT_EQ(out[3], kInf);
  EXPECT_EQ(out[4], kInf);
}

TEST(ReductionOps, LayerNormNormalizesTrailingDims) {
  Builder b;
  Value x = b.param(Type{DType::F32, {2, 4}});
  Value eps = b.constant(DType::F32, 0);
  ops::LayerNormOut r = ops::layer_norm(b, x, 1, std::nullopt, std::nullopt, eps, DType::F32);
  std::string text = b.finish({r.out, r.mean});
  std::vector<float> in{1, 2, 3, 4, 10, 10, 20, 20};
  auto y = run<float>(text, in, {2, 4}, 8, 0);
  auto mean = run<float>(text, in, {2, 4}, 2, 1);
  EXPECT_FLOAT_EQ(mean[0], 2.5f);
  EXPECT_FLOAT_EQ(mean[1], 15);
  EXPECT_NEAR(y[0], -1.5f / std::sqrt(1.25f), 1e-6);
  EXPECT_NEAR(y[7], 1.0f, 1e-6);
}
