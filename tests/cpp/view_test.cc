// Views as math: random strided reads and writes over a flat storage agree
// with direct element indexing.
#include "ops/view/view.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/op.h"
#include "test_env.h"

namespace {

// The view's fields as its program key prints them (for failure messages).
std::string describe(const ops::StridedView& v) { return engine::Key().add(v).str(); }

struct Case {
  std::vector<int64_t> sizes, strides;
  int64_t offset, n;
};

Case random_case(std::mt19937& rng) {
  std::uniform_int_distribution<int> rank_d(0, 4), size_d(1, 4), stride_d(0, 7);
  Case c;
  int rank = rank_d(rng);
  int64_t extent = 1;
  for (int i = 0; i < rank; ++i) {
    c.sizes.push_back(size_d(rng));
    int64_t s = stride_d(rng);
    c.strides.push_back(s);
    extent += (c.sizes.back() - 1) * s;
  }
  c.offset = std::uniform_int_distribution<int>(0, 5)(rng);
  c.n = c.offset + extent + std::uniform_int_distribution<int>(0, 3)(rng);
  return c;
}

int64_t flat_index(const Case& c, int64_t linear) {
  int64_t idx = c.offset;
  for (int i = static_cast<int>(c.sizes.size()) - 1; i >= 0; --i) {
    idx += (linear % c.sizes[i]) * c.strides[i];
    linear /= c.sizes[i];
  }
  return idx;
}

std::vector<float> run(const std::string& text, const std::vector<std::vector<float>>& f32_args, int64_t offset,
                       size_t out_n) {
  auto& client = test_env::client();
  auto exe = client.compile(text);
  std::vector<pjrt::BufferPtr> bufs;
  std::vector<PJRT_Buffer*> raw;
  bufs.push_back(client.from_host(f32_args[0].data(), PJRT_Buffer_Type_F32, {(int64_t)f32_args[0].size()}));
  bufs.push_back(client.from_host(&offset, PJRT_Buffer_Type_S64, {}));
  for (size_t i = 1; i < f32_args.size(); ++i)
    bufs.push_back(client.from_host(f32_args[i].data(), PJRT_Buffer_Type_F32, {}));
  for (auto& b : bufs) raw.push_back(b->get());
  auto outs = exe->execute(raw);
  std::vector<float> out(out_n);
  if (out_n) outs[0]->to_host(out.data(), out_n * 4);
  return out;
}

}  // namespace

TEST(Views, RandomStridedReadsMatchIndexing) {
  std::mt19937 rng(std::random_device{}());
  for (int trial = 0; trial < 40; ++trial) {
    Case c = random_case(rng);
    ops::StridedView v{c.sizes, c.strides, c.n, false};
    v.fits = c.offset + v.span() <= c.n;
    std::vector<float> storage(c.n);
    for (int64_t i = 0; i < c.n; ++i) storage[i] = static_cast<float>(i * 10 + 1);
    shlo::Builder b;
    shlo::Value flat = b.param(shlo::Type{shlo::DType::F32, {c.n}});
    shlo::Value off = b.param(shlo::Type{shlo::DType::S64, {}});
    shlo::Value r = ops::read_view(b, flat, off, v);
    int64_t numel = shlo::numel(c.sizes);
    auto got = run(b.finish({b.reshape(r, {numel})}), {storage}, c.offset, numel);
    for (int64_t i = 0; i < numel; ++i)
      ASSERT_EQ(got[i], storage[flat_index(c, i)]) << "trial " << trial << " " << describe(v) << " off " << c.offset;
  }
}

TEST(Views, RandomStridedWritesMatchIndexing) {
  std::mt19937 rng(std::random_device{}());
  for (int trial = 0; trial < 40; ++trial) {
    Case c = random_case(rng);
    // Writes need non-overlapping views (PyTorch rejects overlapping in-place
    // writes); make the strides those of a permuted contiguous layout.
    std::vector<int64_t> order(c.sizes.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
    std::shuffle(order.begin(), order.end(), rng);
    int64_t st = 1 + std::uniform_int_distribution<int>(0, 1)(rng);
    for (int64_t d : order) {
      c.strides[d] = st;
      st *= c.sizes[d] + std::uniform_int_distribution<int>(0, 1)(rng);
    }
    int64_t extent = 1;
    for (size_t i = 0; i < c.sizes.size(); ++i) extent += (c.sizes[i] - 1) * c.strides[i];
    c.n = c.offset + extent + 2;
    ops::StridedView v{c.sizes, c.strides, c.n, false};
    v.fits = c.offset + v.span() <= c.n;
    int64_t numel = shlo::numel(c.sizes);
    std::vector<float> storage(c.n, -1.f), value(numel);
    for (int64_t i = 0; i < numel; ++i) value[i] = static_cast<float>(i + 1);
    shlo::Builder b;
    shlo::Value flat = b.param(shlo::Type{shlo::DType::F32, {c.n}});
    shlo::Value off = b.param(shlo::Type{shlo::DType::S64, {}});
    shlo::Value val = b.constant(shlo::DType::F32, 0, c.sizes);
    // value = iota + 1 in row-major order of the view
    shlo::Value io = b.reshape(b.iota(shlo::Type{shlo::DType::F32, {numel}}, 0), c.sizes);
    val = b.add(io, b.constant(shlo::DType::F32, 1, c.sizes));
    shlo::Value r = ops::write_view(b, flat, off, val, v);
    auto got = run(b.finish({r}), {storage}, c.offset, c.n);
    std::vector<float> expect(storage);
    for (int64_t i = 0; i < numel; ++i) expect[flat_index(c, i)] = value[i];
    ASSERT_EQ(got, expect) << "trial " << trial << " " << describe(v) << " off " << c.offset;
  }
}
