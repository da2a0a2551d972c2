// The engine: deferred graphs materialize through the cache; equal graph
// structure shares one program whatever the scalar values.
#include <gtest/gtest.h>

#include <cstdlib>

#include "engine/graph.h"
#include "engine/launch.h"
#include "engine/op.h"
#include "engine/plan.h"
#include "engine/reads.h"
#include "engine/runtime.h"
#include "engine/timeline.h"
#include "test_env.h"

namespace {

engine::Ref affine(engine::Ref x, double scale) {
  engine::Ref s = engine::scalar(shlo::DType::F32, scale);
  return engine::op1("affine", {x, s}, x.type(), [](shlo::Builder& b, const std::vector<shlo::Value>& in) {
    shlo::Value sc = b.broadcast_in_dim(in[1], in[0].shape(), {});
    return std::vector<shlo::Value>{b.add(b.mul(in[0], sc), in[0])};
  });
}

std::vector<float> host(const engine::Ref& r, size_t n) {
  std::vector<float> out(n);
  engine::to_host(r, out.data(), n * 4);
  return out;
}

}  // namespace

TEST(Engine, LargestArrayReadsEveryTensorTypeOfAProgram) {
  EXPECT_EQ(engine::largest_array("func.func @main(%a: tensor<4x16xf32>) -> tensor<f32>"), 64);
  EXPECT_EQ(engine::largest_array("%0 = stablehlo.dot %a, %b : (tensor<3x5xbf16>, tensor<5x7xbf16>) -> "
                                  "tensor<3x7xbf16>"),
            35);
  EXPECT_EQ(engine::largest_array("tensor<i1> tensor<2x?x8xi64>"), 16);  // dynamic: 1
  EXPECT_EQ(engine::largest_array("tensor<f32>"), 1);
  EXPECT_EQ(engine::largest_array("ML\xefR bytecode"), -1);
}

TEST(Engine, MaterializesAChainAndCachesByStructure) {
  test_env::configure_engine();
  std::vector<float> in{1, 2, 3, 4};
  engine::Ref x = engine::from_host(in.data(), shlo::Type{shlo::DType::F32, {4}});
  engine::Ref y = affine(affine(x, 2.0), 0.5);  // (x*2+x)*0.5 + (x*2+x)
  EXPECT_FALSE(y.node->materialized());
  EXPECT_EQ(host(y, 4), (std::vector<float>{4.5, 9, 13.5, 18}));
  EXPECT_TRUE(y.node->materialized());
  EXPECT_TRUE(y.node->inputs.empty());  // the graph behind it is released

  auto before = engine::Runtime::get().cache_stats();
  engine::Ref z = affine(affine(x, 3.0), 7.0);  // same structure, new scalars
  auto v = host(z, 4);
  EXPECT_FLOAT_EQ(v[0], (1 * 3 + 1) * 7 + (1 * 3 + 1));
  auto after = engine::Runtime::get().cache_stats();
  EXPECT_EQ(after.misses, before.misses);
  EXPECT_EQ(after.hits, before.hits + 1);
}

TEST(Engine, SharedSubgraphIsComputedOnce) {
  test_env::configure_engine();
  std::vector<float> in{1, -1};
  engine::Ref x = engine::from_host(in.data(), shlo::Type{shlo::DType::F32, {2}});
  engine::Ref a = affine(x, 1.0);
  engine::Ref b = affine(a, 1.0);
  engine::Ref c = affine(a, 2.0);
  engine::materialize({b, c});
  EXPECT_TRUE(b.node->materialized() && c.node->materialized());
  EXPECT_EQ(host(b, 2), (std::vector<float>{4, -4}));
  EXPECT_EQ(host(c, 2), (std::vector<float>{6, -6}));
}

// A host read computes what it needs and leaves the rest of the pending
// graph to a program launched behind it, unless the two share work.
TEST(Engine, AReadSplitsOffPendingWorkItSharesNothingWith) {
  test_env::configure_engine();
  std::vector<float> in{1, 2};
  const shlo::Type t{shlo::DType::F32, {2}};
  engine::Ref x = engine::from_host(in.data(), t), y = engine::from_host(in.data(), t);
  engine::Ref inner = affine(x, 2.0), read = affine(inner, 0.5);
  // Same scales as the read's: equal scalars share one constant, which is no
  // data of either side.
  engine::Ref other = affine(affine(y, 2.0), 0.5);
  engine::Ref on_x = affine(x, 3.0), on_y = affine(y, 3.0);  // checks of data each side reads
  engine::Ref uses_inner = affine(inner, 4.0);

  std::vector<engine::Ref> with, apart;
  ASSERT_TRUE(
      engine::split_for_read(read, {inner, other, on_x, on_y}, {on_x.node.get(), on_y.node.get()}, with, apart));
  auto nodes = [](const std::vector<engine::Ref>& v) {
    std::vector<const engine::Node*> n;
    for (const auto& r : v) n.push_back(r.node.get());
    return n;
  };
  EXPECT_EQ(nodes(with), (std::vector<const engine::Node*>{inner.node.get(), on_x.node.get()}));
  EXPECT_EQ(nodes(apart), (std::vector<const engine::Node*>{other.node.get(), on_y.node.get()}));

  // on_x is no check here: it reads x beside the read's program but shares
  // none of its work, so it goes apart.
  with.clear();
  apart.clear();
  ASSERT_TRUE(engine::split_for_read(read, {on_x}, {}, with, apart));
  EXPECT_TRUE(with.empty());
  EXPECT_EQ(nodes(apart), (std::vector<const engine::Node*>{on_x.node.get()}));

  // A value built on part of the read's work would need it twice.
  with.clear();
  apart.clear();
  EXPECT_FALSE(engine::split_for_read(read, {other, uses_inner}, {}, with, apart));

  engine::materialize({read, other, on_x, on_y, uses_inner});
  EXPECT_EQ(host(read, 2), (std::vector<float>{4.5, 9}));
  EXPECT_EQ(host(uses_inner, 2), (std::vector<float>{15, 30}));
}

TEST(Engine, LoweringErrorsNameTheOp) {
  test_env::configure_engine();
  std::vector<float> in{1};
  engine::Ref x = engine::from_host(in.data(), shlo::Type{shlo::DType::F32, {1}});
  engine::Ref bad = engine::op1("bad_op", {x}, shlo::Type{shlo::DType::F32, {2}},
                                [](shlo::Builder&, const std::vector<shlo::Value>& in) { return in; });
  try {
    engine::materialize({bad});
    FAIL();
  } catch (const pjrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad_op"), std::string::npos);
  }
}

// Whether an input can be donated depends on who else holds it; a program
// cached for one answer serves the other instead of a second compile.
TEST(Engine, ACachedDonationVariantServesACallThatDonatesDifferently) {
  test_env::configure_engine();
  const shlo::Type type{shlo::DType::F32, {3}};
  std::vector<float> in{1, 2, 3};
  auto probe = [&](const char* key, bool keep_input) {
    engine::Ref x = engine::from_host(in.data(), type);
    engine::Ref y = engine::op1(key, {x}, type, [](shlo::Builder& b, const std::vector<shlo::Value>& v) {
      return std::vector<shlo::Value>{b.add(v[0], v[0])};
    });
    engine::Ref kept = keep_input ? x : engine::Ref{};
    x = engine::Ref{};  // without `kept`, only y reads x: its buffer can be reused
    auto before = engine::Runtime::get().cache_stats();
    engine::materialize({y});
    auto after = engine::Runtime::get().cache_stats();
    EXPECT_EQ(host(y, 3), (std::vector<float>{2, 4, 6}));
    if (keep_input) EXPECT_EQ(host(kept, 3), in);
    return after.misses - before.misses;
  };
  // Donating first, then a call that must keep its input: it runs the
  // donating program on a copy.
  probe("donation_probe_a", false);
  EXPECT_EQ(probe("donation_probe_a", true), 0);
  // Keeping first, then a call that could donate: the plain program serves.
  probe("donation_probe_b", true);
  EXPECT_EQ(probe("donation_probe_b", false), 0);

  // Of two inputs, the first held elsewhere: the program donates the second
  // alone. A later call keeping both runs that program on a copy.
  auto pair_probe = [&](bool keep_second) {
    engine::Ref a = engine::from_host(in.data(), type), b = engine::from_host(in.data(), type);
    engine::Ref y =
        engine::op1("donation_probe_c", {a, b}, type, [](shlo::Builder& bl, const std::vector<shlo::Value>& v) {
          return std::vector<shlo::Value>{bl.add(v[0], v[1])};
        });
    engine::Ref kept = keep_second ? b : engine::Ref{};
    b = engine::Ref{};
    auto before = engine::Runtime::get().cache_stats();
    engine::materialize({y});
    auto after = engine::Runtime::get().cache_stats();
    EXPECT_EQ(host(y, 3), (std::vector<float>{2, 4, 6}));
    EXPECT_EQ(host(a, 3), in);
    if (keep_second) EXPECT_EQ(host(kept, 3), in);
    return after.misses - before.misses;
  };
  pair_probe(false);
  EXPECT_EQ(pair_probe(true), 0);
}

TEST(Engine, TimelineRecordsProgramsAndTransfersOnlyWhileOn) {
  test_env::configure_engine();
  const shlo::Type type{shlo::DType::F32, {5}};
  std::vector<float> in{1, 2, 3, 4, 5};
  auto run = [&](const char* key) {
    engine::Ref x = engine::from_host(in.data(), type);
    engine::Ref y = engine::op1(key, {x}, type, [](shlo::Builder& b, const std::vector<shlo::Value>& v) {
      return std::vector<shlo::Value>{b.mul(v[0], v[0])};
    });
    engine::materialize({y});
    return host(y, 5);
  };
  run("timeline_probe_off");
  engine::synchronize();
  engine::timeline::start();
  EXPECT_TRUE(engine::timeline::stop().empty());  // nothing ran while on

  engine::timeline::start();
  const int64_t t0 = engine::timeline::now_ns();
  {
    engine::timeline::CorrelationScope op(42);
    EXPECT_EQ(run("timeline_probe_on"), (std::vector<float>{1, 4, 9, 16, 25}));
  }
  engine::quiesce();
  const int64_t t1 = engine::timeline::now_ns();
  auto spans = engine::timeline::stop();
  int executes = 0, uploads = 0, downloads = 0, builds = 0;
  for (const auto& s : spans) {
    EXPECT_LE(t0, s.start_ns);
    EXPECT_LE(s.start_ns, s.end_ns);
    EXPECT_LE(s.end_ns, t1);
    EXPECT_EQ(s.correlation, 42u);
    switch (s.kind) {
      case engine::timeline::Kind::Execute:
        ++executes;
        EXPECT_NE(s.name.find("timeline_probe_on"), std::string::npos) << s.name;
        break;
      case engine::timeline::Kind::HostToDevice:
        ++uploads;
        EXPECT_EQ(s.bytes, 20);
        break;
      case engine::timeline::Kind::DeviceToHost:
        ++downloads;
        EXPECT_EQ(s.bytes, 20);
        break;
      case engine::timeline::Kind::Compile:
      case engine::timeline::Kind::Load:
        ++builds;
        break;
      default:
        break;
    }
  }
  EXPECT_EQ(executes, 1);
  EXPECT_EQ(uploads, 1);
  EXPECT_EQ(downloads, 1);
  EXPECT_EQ(builds, 1);
  run("timeline_probe_after");  // off again: records nothing
  engine::timeline::start();
  EXPECT_TRUE(engine::timeline::stop().empty());
}
