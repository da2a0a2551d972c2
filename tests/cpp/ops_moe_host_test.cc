// The experts layer's native routing (ops/moe/moe_host.h) inside an XLA:CPU
// program: pairs grouped by expert (counting sort, pair order kept within an
// expert, sentinel ids without a row), and results summed back per token in
// choice order, against plain loops.
#include <gtest/gtest.h>

#include <random>

#include "ops/moe/moe_host.h"
#include "test_env.h"

using shlo::Builder;
using shlo::DType;
using shlo::Type;
using shlo::Value;

namespace {

TEST(OpsMoeHost, DispatchGroupsPairsAndCombineSumsThemBack) {
  test_env::register_native(ops::kMoeDispatchTarget, &ops::moe_dispatch_handler);
  test_env::register_native(ops::kMoeCombineTarget, &ops::moe_combine_handler);
  const int64_t tokens = 9, k = 3, h = 5, experts = 4, pairs = tokens * k;
  // Expert 2 idle, ids -1 and 4 (outside [0, 4)) have no row.
  const std::vector<int> id = {0, 3, 1, 1, 0, -1, 3, 3, 4, 0, 1, 3, 1, 0, 3, 0, 3, 1, 3, 1, 0, 1, 0, -1, 1, 3, 0};
  std::mt19937 gen(11);
  std::normal_distribution<float> d;
  std::vector<float> x(tokens * h), w(pairs), fid(id.begin(), id.end());
  for (float& v : x) v = d(gen);
  for (float& v : w) v = d(gen);

  Builder b;
  Value px = b.param(Type{DType::F32, {tokens, h}});
  Value pid = b.param(Type{DType::F32, {tokens, k}});
  Value pw = b.param(Type{DType::F32, {tokens, k}});
  ops::MoeDispatch r = ops::moe_dispatch_host(b, px, b.convert(pid, DType::S32), experts);
  // Stand-in experts: 2 * row + 1 (a row without a pair would read 1).
  Value ys = b.add(b.mul(r.rows, b.constant(DType::F32, 2, {pairs, h})), b.constant(DType::F32, 1, {pairs, h}));
  Value out = ops::moe_combine_host(b, ys, r.slot, pw);
  auto got = test_env::run_f32(b.finish({b.reshape(r.rows, {pairs * h}), b.convert(r.counts, DType::F32),
                                         b.convert(r.slot, DType::F32), b.reshape(out, {tokens * h})}),
                               {x, fid, w}, {{tokens, h}, {tokens, k}, {tokens, k}},
                               {size_t(pairs * h), size_t(experts), size_t(pairs), size_t(tokens * h)});
  const std::vector<float>&rows = got[0], &counts = got[1], &slot = got[2], &y = got[3];

  std::vector<int> count(experts, 0);
  for (int e : id)
    if (e >= 0 && e < experts) ++count[e];
  int64_t row = 0;
  for (int64_t e = 0; e < experts; ++e) {
    EXPECT_EQ(counts[e], count[e]) << "expert " << e;
    for (int64_t q = 0; q < pairs; ++q)
      if (id[q] == e) {  // the expert's pairs in order, each with its token's row
        ASSERT_EQ(slot[q], row) << "pair " << q;
        for (int64_t i = 0; i < h; ++i) EXPECT_EQ(rows[row * h + i], x[(q / k) * h + i]);
        ++row;
      }
  }
  for (int64_t q = 0; q < pairs; ++q)
    if (id[q] < 0 || id[q] >= experts) EXPECT_EQ(slot[q], -1) << "pair " << q;
  for (int64_t i = row * h; i < pairs * h; ++i) EXPECT_EQ(rows[i], 0.0f);  // rows past the grouped ones

  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t i = 0; i < h; ++i) {
      float want = 0;
      for (int64_t j = 0; j < k; ++j)
        if (id[t * k + j] >= 0 && id[t * k + j] < experts) want += w[t * k + j] * (2 * x[t * h + i] + 1);
      EXPECT_NEAR(y[t * h + i], want, 1e-5f * (1 + std::abs(want))) << "token " << t;
    }
}

}  // namespace
