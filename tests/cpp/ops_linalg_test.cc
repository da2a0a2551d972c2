// Matrix product and attention lowerings: the programs compile and compute
// PyTorch's results on small hand-checked inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/attention/attention.h"
#include "ops/linalg/linalg.h"
#include "test_env.h"

using shlo::Builder;
using shlo::DType;
using shlo::Type;
using shlo::Value;

namespace {

using test_env::run_f32;

const float kNaN = std::numeric_limits<float>::quiet_NaN();

}  // namespace

TEST(OpsLinalg, AddmmBetaZeroIgnoresNaN) {
  Builder b;
  Value self = b.param(Type{DType::F32, {2}});
  Value x = b.param(Type{DType::F32, {2, 2}});
  Value y = b.param(Type{DType::F32, {2, 2}});
  Value beta = b.param(Type{DType::F32, {}});
  Value alpha = b.param(Type{DType::F32, {}});
  Value r = b.reshape(ops::addmm(b, self, x, y, beta, alpha), {4});
  std::string text = b.finish({r});
  auto out = run_f32(text, {{kNaN, 1}, {1, 2, 3, 4}, {1, 0, 0, 1}, {0}, {2}}, {{2}, {2, 2}, {2, 2}, {}, {}}, {4});
  EXPECT_EQ(out[0], (std::vector<float>{2, 4, 6, 8}));
  // The same program with beta != 0 adds the broadcast row (NaN included).
  out = run_f32(text, {{kNaN, 1}, {1, 2, 3, 4}, {1, 0, 0, 1}, {0.5f}, {1}}, {{2}, {2, 2}, {2, 2}, {}, {}}, {4});
  EXPECT_TRUE(std::isnan(out[0][0]));
  EXPECT_EQ(out[0][1], 2.5f);
  EXPECT_EQ(out[0][3], 4.5f);
}

TEST(OpsLinalg, Bf16ProductsAccumulateInF32) {
  Builder b;
  Value px = b.param(Type{DType::F32, {1, 256}});
  Value py = b.param(Type{DType::F32, {256, 1}});
  Value x = b.convert(px, DType::BF16), y = b.convert(py, DType::BF16);
  Value r = b.reshape(b.convert(ops::mm(b, x, y), DType::F32), {1});
  // 256 * (1 + 2^-7) = 258: exact in bf16, but a bf16 running sum stalls at 256.
  auto out = run_f32(b.finish({r}), {std::vector<float>(256, 1), std::vector<float>(256, 1 + 1 / 128.f)},
                     {{1, 256}, {256, 1}}, {1});
  EXPECT_EQ(out[0][0], 258.f);
}

TEST(OpsLinalg, AttentionCausalGqa) {
  // 2 query heads share 1 kv head; L = S = 2, E = 1; scale 1.
  Builder b;
  Value q = b.param(Type{DType::F32, {2, 2, 1}});
  Value k = b.param(Type{DType::F32, {1, 2, 1}});
  Value v = b.param(Type{DType::F32, {1, 2, 1}});
  Value scale = b.param(Type{DType::F32, {}});
  auto r = ops::attention_forward(b, q, k, v, std::nullopt, scale, ops::AttentionSpec{true});
  auto out = run_f32(b.finish({b.reshape(r[0], {4}), b.reshape(r[1], {4})}), {{0, 1, 2, 0}, {0, 1}, {10, 20}, {1}},
                     {{2, 2, 1}, {1, 2, 1}, {1, 2, 1}, {}}, {4, 4});
  // Row 0 sees key 0 only; row 1 of head 0: scores (0, 1); of head 1: (0, 0).
  float p = 1 / (1 + std::exp(-1.f));
  EXPECT_FLOAT_EQ(out[0][0], 10);
  EXPECT_NEAR(out[0][1], 10 * (1 - p) + 20 * p, 1e-5);
  EXPECT_FLOAT_EQ(out[0][2], 10);
  EXPECT_NEAR(out[0][3], 15, 1e-5);
  EXPECT_NEAR(out[1][1], std::log(1 + std::exp(1.f)), 1e-5);
  EXPECT_NEAR(out[1][3], std::log(2.f), 1e-5);
}

TEST(OpsLinalg, AttentionBackwardMatchesFiniteDifferences) {
  const std::vector<int64_t> qs{1, 2, 3}, ks{1, 3, 3}, ms{1, 3};  // heads, length, dim
  std::vector<float> q{0.1f, -0.4f, 0.3f, 0.7f, 0.2f, -0.5f};
  std::vector<float> k{0.3f, 0.1f, -0.2f, -0.6f, 0.4f, 0.5f, 0.2f, -0.1f, 0.3f};
  std::vector<float> v{1, 2, 3, -1, 0.5f, 2, 0.3f, -2, 1}, mask{0.2f, -0.3f, 0.6f};
  std::vector<float> g{0.5f, -1, 2, 0.3f, 1.5f, -0.7f};  // d loss / d out
  auto forward = [&](const std::vector<float>& qq, const std::vector<float>& mm) {
    Builder b;
    Value pq = b.param(Type{DType::F32, qs}), pk = b.param(Type{DType::F32, ks}), pv = b.param(Type{DType::F32, ks});
    Value pm = b.param(Type{DType::F32, ms}), pg = b.param(Type{DType::F32, qs}), sc = b.param(Type{DType::F32, {}});
    auto r = ops::attention_forward(b, pq, pk, pv, pm, sc, ops::AttentionSpec{});
    Value loss = b.reduce(b.mul(r[0], pg), b.zero(DType::F32), {0, 1, 2}, "add");
    return run_f32(b.finish({b.reshape(loss, {1})}), {qq, k, v, mm, g, {0.8f}}, {qs, ks, ks, ms, qs, {}}, {1})[0][0];
  };
  Builder b;
  Value pq = b.param(Type{DType::F32, qs}), pk = b.param(Type{DType::F32, ks}), pv = b.param(Type{DType::F32, ks});
  Value pm = b.param(Type{DType::F32, ms}), pg = b.param(Type{DType::F32, qs}), sc = b.param(Type{DType::F32, {}});
  auto fwd = ops::attention_forward(b, pq, pk, pv, pm, sc, ops::AttentionSpec{});
  auto grads =
      ops::attention_backward(b, pg, pq, pk, pv, pm, fwd[1], sc, ops::AttentionSpec{}, {true, false, false, true});
  auto out = run_f32(b.finish({b.reshape(grads[0], {6}), b.reshape(grads[1], {3})}), {q, k, v, mask, g, {0.8f}},
                     {qs, ks, ks, ms, qs, {}}, {6, 3});
  const float h = 1e-2f;
  for (size_t i = 0; i < q.size(); ++i) {
    auto up = q, down = q;
    up[i] += h;
    down[i] -= h;
    EXPECT_NEAR(out[0][i], (forward(up, mask) - forward(down, mask)) / (2 * h), 2e-3) << "dq " << i;
  }
  for (size_t i = 0; i < mask.size(); ++i) {
    auto up = mask, down = mask;
    up[i] += h;
    down[i] -= h;
    EXPECT_NEAR(out[1][i], (forward(q, up) - forward(q, down)) / (2 * h), 2e-3) << "dmask " << i;
  }
}

// A product whose much larger operand lies in memory for the other side of the
// matrix kernel (a linear layer's weight [out, in] read as x @ W.T) swaps
// its operands and transposes the smaller result back, and computes the
// same values; one whose larger operand lies for its own side, or whose
// operands are of like size, is left as written.
TEST(OpsLinalg, TheLargerOperandIsReadAsItLies) {
  const int64_t m = 2, k = 3, n = 16;
  std::vector<float> x(m * k), w(n * k);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * static_cast<float>(i) - 1;
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.25f * static_cast<float>((i * 7) % 11) - 1;
  std::vector<float> want(m * n, 0);  // x @ w.T
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t c = 0; c < k; ++c) want[i * n + j] += x[i * k + c] * w[j * k + c];

  for (bool batched : {false, true}) {
    Builder b;
    shlo::Shape xs{m, k}, ws{n, k};
    if (batched) xs.insert(xs.begin(), 1), ws.insert(ws.begin(), 1);
    Value px = b.param(Type{DType::F32, xs}), pw = b.param(Type{DType::F32, ws});
    Value r = batched ? ops::bmm(b, px, b.transpose(pw, {0, 2, 1})) : ops::mm(b, px, b.transpose(pw, {1, 0}));
    std::string text = b.finish({b.reshape(r, {m * n})});
    EXPECT_NE(text.find("optimization_barrier"), std::string::npos) << batched;
    auto out = run_f32(text, {x, w}, {xs, ws}, {m * n});
    for (int64_t i = 0; i < m * n; ++i) EXPECT_FLOAT_EQ(out[0][i], want[i]) << batched << " " << i;
  }

  // Operands of like size (training's products): left as written.
  {
    Builder b;
    Value px = b.param(Type{DType::F32, {n, k}}), pw = b.param(Type{DType::F32, {n, k}});
    std::string text = b.finish({b.reshape(ops::mm(b, px, b.transpose(pw, {1, 0})), {n * n})});
    EXPECT_EQ(text.find("optimization_barrier"), std::string::npos);
  }

  // W stored [in, out]: already the rhs's order, no swap.
  Builder b;
  Value px = b.param(Type{DType::F32, {m, k}}), pw = b.param(Type{DType::F32, {k, n}});
  std::string text = b.finish({b.reshape(ops::mm(b, px, pw), {m * n})});
  EXPECT_EQ(text.find("optimization_barrier"), std::string::npos);
  std::vector<float> wt(k * n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t c = 0; c < k; ++c) wt[c * n + j] = w[j * k + c];
  auto out = run_f32(text, {x, wt}, {{m, k}, {k, n}}, {m * n});
  for (int64_t i = 0; i < m * n; ++i) EXPECT_FLOAT_EQ(out[0][i], want[i]) << i;
}
