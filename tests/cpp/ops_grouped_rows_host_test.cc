// The native grouped row kernel (ops/linalg/grouped_rows_host.h) inside an
// XLA:CPU program: each group's rows through its own panel-major matrix,
// against a plain loop, for uneven groups, idle ones, negative counts and
// counts that run past the rows.
#include <gtest/gtest.h>

#include <random>

#include "ops/linalg/grouped_rows_host.h"
#include "pjrt/ffi.h"
#include "test_env.h"

using shlo::Builder;
using shlo::DType;
using shlo::Type;
using shlo::Value;

namespace {

// x [rows, k] grouped by counts through w [groups, k, n] (plain layout).
std::vector<float> reference(const std::vector<float>& x, const std::vector<int>& counts, const std::vector<float>& w,
                             int64_t rows, int64_t k, int64_t n) {
  std::vector<float> y(rows * n, 0.f);
  int64_t start = 0;
  for (size_t g = 0; g < counts.size(); ++g) {
    int64_t c = std::min<int64_t>(std::max(counts[g], 0), rows - start);
    for (int64_t r = start; r < start + c; ++r)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t i = 0; i < k; ++i) s += double(x[r * k + i]) * w[(g * k + i) * n + j];
        y[r * n + j] = static_cast<float>(s);
      }
    start += c;
  }
  return y;
}

void check(const std::vector<int>& counts, int64_t rows, int64_t k, int64_t n) {
  test_env::register_native(ops::kGroupedRowsTarget, &ops::grouped_rows_handler);
  const int64_t groups = counts.size(), p = ops::kHostPanel;
  std::mt19937 gen(7);
  std::normal_distribution<float> d;
  std::vector<float> x(rows * k), w(groups * k * n), panels(w.size()), fcounts(counts.begin(), counts.end());
  for (float& v : x) v = d(gen);
  for (float& v : w) v = d(gen);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j) panels[((g * (n / p) + j / p) * k + i) * p + j % p] = w[(g * k + i) * n + j];
  Builder b;
  Value px = b.param(Type{DType::F32, {rows, k}});
  Value pc = b.param(Type{DType::F32, {groups}});
  Value pw = b.param(Type{DType::F32, {groups, n / p, k, p}});
  Value y = ops::grouped_rows_host(b, px, b.convert(pc, DType::S32), pw);
  auto out = test_env::run_f32(b.finish({b.reshape(y, {rows * n})}), {x, fcounts, panels},
                               {{rows, k}, {groups}, {groups, n / p, k, p}}, {size_t(rows * n)});
  std::vector<float> ref = reference(x, counts, w, rows, k, n);
  for (int64_t i = 0; i < rows * n; ++i) ASSERT_NEAR(out[0][i], ref[i], 1e-4f * (1 + std::abs(ref[i]))) << "at " << i;
}

}  // namespace

TEST(OpsGroupedRowsHost, UnevenGroupsAndTails) {
  // Blocks of 8 rows and every tail length, an idle group, rows past the
  // last group (zeros).
  check({3, 0, 17, 1, 7, 8, 2}, 40, 5, 64);
}

TEST(OpsGroupedRowsHost, NegativeCountsAndCountsPastTheRows) { check({-4, 6, 30, 5}, 20, 33, 32); }

TEST(OpsGroupedRowsHost, LargeProductsSplitOverThePool) {
  // 134M multiply-adds: pieces of panels that XLA's pool threads share
  // with the calling one, where the pool has more than one.
  // A pool thread takes a piece only when it is free before the calling
  // thread has done them all: on a loaded machine one product may run
  // alone, so the split must show within a few.
  const int64_t before = ops::grouped_rows_host_pieces_elsewhere();
  for (int i = 0; i < 5 && ops::grouped_rows_host_pieces_elsewhere() == before; ++i)
    check({9, 0, 30, 25}, 64, 512, 4096);
  if (pjrt::ffi::host_pool_threads() > 1) EXPECT_GT(ops::grouped_rows_host_pieces_elsewhere(), before);
}
