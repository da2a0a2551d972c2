// Range factories and eye (ops/factories): exact values.
#include "ops/factories/factories.h"

#include <gtest/gtest.h>

#include "test_env.h"

using shlo::Builder;
using shlo::DType;
using shlo::Value;

TEST(Factories, RangesAreExact) {
  Builder b;
  Value ar = ops::arange(b, b.constant(DType::S64, -3), b.constant(DType::S64, 2), 4, DType::F32);
  Value eye = b.reshape(ops::eye(b, 2, 3, DType::F32), {6});
  Value lin = ops::linspace(b, b.constant(DType::F64, 0.0), b.constant(DType::F64, 1.0), b.constant(DType::F64, 0.25),
                            5, DType::F32);
  auto out = test_env::run_f32(b.finish({b.concatenate({ar, eye, lin}, 0)}), {}, {}, {15})[0];
  EXPECT_EQ(out, (std::vector<float>{-3, -1, 1, 3, 1, 0, 0, 0, 1, 0, 0, 0.25f, 0.5f, 0.75f, 1}));
}
