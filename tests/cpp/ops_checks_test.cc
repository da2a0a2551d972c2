// Lowerings of deferred device checks (ops/checks) compiled and run on the
// plugin: the answers the host reads back to raise the CPU's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/checks/checks.h"
#include "test_env.h"

using shlo::Builder;
using shlo::DType;
using shlo::Type;
using shlo::Value;

namespace {

// Runs a one-input program (s64 or f32 elements) with an s64 result.
template <class T>
std::vector<int64_t> run(const std::string& text, const std::vector<T>& x, const std::vector<int64_t>& dims,
                         size_t out_n) {
  auto& c = test_env::client();
  auto exe = c.compile(text);
  auto bx = c.from_host(x.data(), std::is_same_v<T, float> ? PJRT_Buffer_Type_F32 : PJRT_Buffer_Type_S64, dims);
  auto outs = exe->execute({bx->get()});
  std::vector<int64_t> r(out_n);
  outs[0]->to_host(r.data(), out_n * sizeof(int64_t));
  return r;
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST(OpsChecks, FirstOutsideReportsTheFirstInOrderAndSkipsTheIgnoredValue) {
  auto program = [](int64_t skip) {
    Builder b;
    Value x = b.param(Type{DType::S64, {2, 3}});
    Value r = ops::first_outside(b, x, 0, 5, skip);
    return b.finish({r});
  };
  std::vector<int64_t> x{1, -100, 7, 2, -3, 9};
  EXPECT_EQ(run(program(-100), x, {2, 3}, 2), (std::vector<int64_t>{2, 7}));
  EXPECT_EQ(run(program(0), x, {2, 3}, 2), (std::vector<int64_t>{1, -100}));
  EXPECT_EQ(run(program(-100), std::vector<int64_t>{0, 4, -100, 1, 2, 3}, {2, 3}, 2)[0], 6);  // none
}

TEST(OpsChecks, FirstOutsideClosedCountsNaNAsOutside) {
  Builder b;
  Value x = b.param(Type{DType::F32, {4}});
  Value r = ops::first_outside_closed(b, x, b.constant(DType::F32, 0), b.constant(DType::F32, 1));
  std::string text = b.finish({r});
  EXPECT_EQ(run(text, std::vector<float>{0, 1, kNaN, 2}, {4}, 1)[0], 2);
  EXPECT_EQ(run(text, std::vector<float>{0, 1, 0.5f, -0.5f}, {4}, 1)[0], 3);
  EXPECT_EQ(run(text, std::vector<float>{0, 1, 0.5f, 0.25f}, {4}, 1)[0], 4);
}

TEST(OpsChecks, ProbabilityFaults) {
  Builder b;
  Value p = b.param(Type{DType::F32, {3, 2}});
  std::string text = b.finish({ops::probability_faults(b, p)});
  // {first bad element, whether it is +inf, first all-zero row}
  EXPECT_EQ(run(text, std::vector<float>{1, 0, 0, 0, 1, -1}, {3, 2}, 3), (std::vector<int64_t>{5, 0, 1}));
  EXPECT_EQ(run(text, std::vector<float>{1, kInf, 0, 1, kNaN, 1}, {3, 2}, 3), (std::vector<int64_t>{1, 1, 3}));
  EXPECT_EQ(run(text, std::vector<float>{1, 2, 0.5f, 0, 0, 3}, {3, 2}, 3), (std::vector<int64_t>{6, 0, 3}));
}
