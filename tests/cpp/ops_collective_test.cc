// Collective lowerings on a two-device client: both replicas launched at
// once, as the device transport does, and checked against the host's answer.
#include <gtest/gtest.h>

#include <cstdlib>

#include "ops/collective/collective.h"
#include "pjrt/runtime.h"

namespace {

using ops::Collective;
using ops::Reduction;

pjrt::Client& two_devices() {
  static std::unique_ptr<pjrt::Client> c = [] {
    pjrt::ClientOptions opts;
    opts.cpu_device_count = 2;
    return std::make_unique<pjrt::Client>(std::make_shared<pjrt::Api>(std::getenv("TORCH_PJRT_PLUGIN_PATH")), opts);
  }();
  return *c;
}

// Runs c over inputs[r] on device r (f32, 1-D) and returns each replica's result.
std::vector<std::vector<float>> run(const ops::CollectiveCall& c, const std::vector<std::vector<float>>& inputs) {
  pjrt::Client& cl = two_devices();
  const shlo::Type in{shlo::DType::F32, {static_cast<int64_t>(inputs[0].size())}};
  auto exe = cl.compile(ops::collective_program(c, {in}), {0, 1});
  const int64_t out_n = ops::collective_result(c, in).shape[0];
  std::vector<pjrt::BufferPtr> held;
  std::vector<std::vector<PJRT_Buffer*>> args;
  for (int r = 0; r < 2; ++r) {
    held.push_back(cl.from_host(inputs[r].data(), PJRT_Buffer_Type_F32, {in.shape[0]}, r));
    args.push_back({held.back()->get()});
  }
  std::vector<std::unique_ptr<pjrt::Event>> done;
  auto res = exe->execute_replicas(args, {0, 1}, &done);
  std::vector<std::vector<float>> out(2, std::vector<float>(out_n));
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(res[r][0]->device(), r);
    res[r][0]->to_host(out[r].data(), out_n * sizeof(float));
  }
  return out;
}

}  // namespace

TEST(OpsCollective, EachKindMatchesTheHost) {
  const std::vector<std::vector<float>> x{{1, 2, 3, 4}, {10, -20, 30, 0.5f}};
  ops::CollectiveCall c;
  c.group_size = 2;

  c.kind = Collective::AllReduce;
  c.reduction = Reduction::Sum;
  auto r = run(c, x);
  EXPECT_EQ(r[0], (std::vector<float>{11, -18, 33, 4.5f}));
  EXPECT_EQ(r[1], r[0]);
  c.reduction = Reduction::Avg;
  EXPECT_EQ(run(c, x)[1], (std::vector<float>{5.5f, -9, 16.5f, 2.25f}));
  c.reduction = Reduction::Max;
  EXPECT_EQ(run(c, x)[0], (std::vector<float>{10, 2, 30, 4}));

  c.kind = Collective::AllGather;
  r = run(c, x);
  EXPECT_EQ(r[1], (std::vector<float>{1, 2, 3, 4, 10, -20, 30, 0.5f}));

  c.kind = Collective::ReduceScatter;
  c.reduction = Reduction::Sum;
  r = run(c, x);
  EXPECT_EQ(r[0], (std::vector<float>{11, -18}));
  EXPECT_EQ(r[1], (std::vector<float>{33, 4.5f}));

  c.kind = Collective::AllToAll;
  r = run(c, x);
  EXPECT_EQ(r[0], (std::vector<float>{1, 2, 10, -20}));
  EXPECT_EQ(r[1], (std::vector<float>{3, 4, 30, 0.5f}));

  c.kind = Collective::Broadcast;
  c.root = 1;
  r = run(c, x);
  EXPECT_EQ(r[0], x[1]);
  EXPECT_EQ(r[1], x[1]);
}

TEST(OpsCollective, UnevenSplitsAreRefused) {
  ops::CollectiveCall c;
  c.kind = Collective::ReduceScatter;
  c.group_size = 2;
  EXPECT_THROW(ops::collective_result(c, shlo::Type{shlo::DType::F32, {3}}), std::invalid_argument);
}
