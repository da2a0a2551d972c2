// Indexing and sorting lowerings (ops/indexing, ops/sort) compiled and run on
// the plugin: the PyTorch semantics they promise, on small fixed inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/indexing/indexing.h"
#include "ops/sort/sort.h"
#include "test_env.h"

using shlo::Builder;
using shlo::DType;
using shlo::Type;
using shlo::Value;

namespace {

// Runs a one-result program on an f32 input and an s64 input; returns the
// result as doubles (read as f32 or s64 by out_dtype).
std::vector<double> run(const std::string& text, const std::vector<float>& x, const std::vector<int64_t>& xdims,
                        const std::vector<int64_t>& idx, const std::vector<int64_t>& idims, DType out_dtype,
                        size_t out_n) {
  auto& c = test_env::client();
  auto exe = c.compile(text);
  auto bx = c.from_host(x.data(), PJRT_Buffer_Type_F32, xdims);
  auto bi = c.from_host(idx.data(), PJRT_Buffer_Type_S64, idims);
  auto outs = exe->execute({bx->get(), bi->get()});
  std::vector<double> r(out_n);
  if (out_dtype == DType::F32) {
    std::vector<float> f(out_n);
    outs[0]->to_host(f.data(), out_n * 4);
    for (size_t i = 0; i < out_n; ++i) r[i] = f[i];
  } else {
    std::vector<int64_t> v(out_n);
    outs[0]->to_host(v.data(), out_n * 8);
    for (size_t i = 0; i < out_n; ++i) r[i] = static_cast<double>(v[i]);
  }
  return r;
}

}  // namespace

TEST(OpsIndexing, GatherAndScatterAlongDim) {
  Builder b;
  Value x = b.param(Type{DType::F32, {2, 3}});
  Value i = b.param(Type{DType::S64, {2, 2}});
  Value g = ops::gather_dim(b, x, 1, i);  // [[x02, x00], [x11, x11]]
  Value s = ops::scatter_dim(b, b.constant(DType::F32, 0, {2, 3}), 1, i, x, ops::Combine::Add);
  Value r = b.concatenate({b.reshape(g, {4}), b.reshape(s, {6})}, 0);
  auto out = run(b.finish({r}), {1, 2, 3, 4, 5, 6}, {2, 3}, {2, 0, 1, 1}, {2, 2}, DType::F32, 10);
  // scatter_add reads src over the index's extent: row 1 adds x10 + x11 into column 1.
  EXPECT_EQ(out, (std::vector<double>{3, 1, 5, 5, 2, 0, 1, 0, 9, 0}));
}

TEST(OpsIndexing, AdvancedIndexWrapsNegativesAndPlacesDims) {
  Builder b;
  Value x = b.param(Type{DType::F32, {2, 3}});
  Value i = b.param(Type{DType::S64, {2}});
  // x[:, i] with i = [-1, 0]: result [2, 2].
  Value r = ops::advanced_index(b, x, {1}, {i}, {2});
  auto out = run(b.finish({r}), {1, 2, 3, 4, 5, 6}, {2, 3}, {-1, 0}, {2}, DType::F32, 4);
  EXPECT_EQ(out, (std::vector<double>{3, 1, 6, 4}));
}

TEST(OpsIndexing, IndexPutAccumulateSumsDuplicates) {
  Builder b;
  Value x = b.param(Type{DType::F32, {3}});
  Value i = b.param(Type{DType::S64, {4}});
  Value v = b.constant(DType::F32, 1, {4});
  Value r = ops::advanced_index_put(b, x, {0}, {i}, {4}, v, true);
  auto out = run(b.finish({r}), {10, 20, 30}, {3}, {0, 2, 0, -3}, {4}, DType::F32, 3);
  EXPECT_EQ(out, (std::vector<double>{13, 20, 31}));
}

TEST(OpsSort, StableWithNanLargest) {
  Builder b;
  Value x = b.param(Type{DType::F32, {6}});
  b.param(Type{DType::S64, {1}});
  auto [asc_v, asc_i] = ops::sort(b, x, 0, false);
  auto [desc_v, desc_i] = ops::sort(b, x, 0, true);
  Value r = b.concatenate({asc_i, desc_i}, 0);
  float nan = std::nanf("");
  auto out = run(b.finish({r}), {2, nan, 1, 2, nan, 0}, {6}, {0}, {1}, DType::S64, 12);
  // Ties keep their order both ways; NaN sorts above every number.
  EXPECT_EQ(out, (std::vector<double>{5, 2, 0, 3, 1, 4, 1, 4, 0, 3, 2, 5}));
}

TEST(OpsSort, MedianTopkAndPrefixSum) {
  Builder b;
  Value x = b.param(Type{DType::F32, {2, 4}});
  b.param(Type{DType::S64, {1}});
  auto [mv, mi] = ops::median(b, x, 1, false);  // lower median per row
  auto [tv, ti] = ops::topk(b, x, 2, 1, true);
  Value ps = ops::prefix_sum(b, b.reshape(x, {8}));
  Value r = b.concatenate({b.reshape(mv, {2}), b.reshape(tv, {4}), ps}, 0);
  auto out = run(b.finish({r}), {4, 1, 3, 2, 5, 8, 6, 7}, {2, 4}, {0}, {1}, DType::F32, 14);
  EXPECT_EQ(out, (std::vector<double>{2, 6, 4, 3, 8, 7, 4, 5, 8, 10, 15, 23, 29, 36}));
}

TEST(OpsSort, NonzeroStaticPadsWithFill) {
  Builder b;
  Value x = b.param(Type{DType::F32, {2, 2}});
  Value fill = b.reshape(b.slice(b.param(Type{DType::S64, {1}}), {0}, {1}, {1}), {});
  Value r = ops::nonzero_static(b, x, 3, fill);
  auto out = run(b.finish({r}), {0, 3, 5, 0}, {2, 2}, {-1}, {1}, DType::S64, 6);
  EXPECT_EQ(out, (std::vector<double>{0, 1, 1, 0, -1, -1}));
}
