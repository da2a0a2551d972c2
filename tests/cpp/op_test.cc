// Typed op nodes (engine/op.h): the key is the name and the attributes the
// lowering receives, nothing else; equal keys share one program; a name
// belongs to one call site.
#include "engine/op.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "engine/reads.h"
#include "engine/runtime.h"
#include "test_env.h"

namespace {

using engine::Vals;

// x * k + offset[i] for a compile-time k and a list of offsets.
engine::Ref scaled(engine::Ref x, int64_t k, std::vector<int64_t> offsets) {
  return engine::op1(
      "test_scaled", {x}, x.type(),
      [](shlo::Builder& b, const Vals& in, int64_t k, const std::vector<int64_t>& offs) {
        shlo::Value r = b.mul(in[0], b.constant(in[0].dtype(), static_cast<double>(k), in[0].shape()));
        for (int64_t o : offs) r = b.add(r, b.constant(in[0].dtype(), static_cast<double>(o), in[0].shape()));
        return Vals{r};
      },
      k, std::move(offsets));
}

std::vector<float> host(const engine::Ref& r, size_t n) {
  std::vector<float> out(n);
  engine::to_host(r, out.data(), n * 4);
  return out;
}

// A node's key, as a program built over it reads it.
engine::Key key_of(const engine::Ref& r) {
  engine::Key k;
  r.node->append_key(k);
  return k;
}

}  // namespace

TEST(Op, KeyIsTheNameAndEveryAttribute) {
  test_env::configure_engine();
  std::vector<float> in{1, 2};
  engine::Ref x = engine::from_host(in.data(), shlo::Type{shlo::DType::F32, {2}});
  engine::Ref a = scaled(x, 3, {1, 2});
  engine::Ref b = scaled(x, 3, {1});
  engine::Ref c = scaled(x, 4, {1, 2});
  EXPECT_EQ(key_of(a).str(), "test_scaled(3,[1,2,],)");
  EXPECT_NE(key_of(a), key_of(b));
  EXPECT_NE(key_of(a), key_of(c));
  EXPECT_STREQ(a.node->name, "test_scaled");
  EXPECT_EQ(host(a, 2), (std::vector<float>{6, 9}));
  EXPECT_EQ(host(b, 2), (std::vector<float>{4, 7}));
  EXPECT_EQ(host(c, 2), (std::vector<float>{7, 11}));

  // The same attributes again: the program is reused, not compiled.
  auto before = engine::Runtime::get().cache_stats();
  EXPECT_EQ(host(scaled(x, 3, {1, 2}), 2), (std::vector<float>{6, 9}));
  auto after = engine::Runtime::get().cache_stats();
  EXPECT_EQ(after.misses, before.misses);
}

TEST(Op, AttributesPrintExactly) {
  EXPECT_NE(engine::Key::op("f", 0.1),
            engine::Key::op("f", std::nextafter(0.1, 1.0)));  // one ulp apart lowers differently
  EXPECT_EQ(
      engine::Key::op("f", std::optional<int64_t>(), std::optional<int64_t>(0), shlo::DType::BF16, std::string("ab"))
          .str(),
      "f(-,?0,bf16,2\"ab,)");
}

TEST(Op, ANameBelongsToOneCallSite) {
  test_env::configure_engine();
  std::vector<float> in{1};
  engine::Ref x = engine::from_host(in.data(), shlo::Type{shlo::DType::F32, {1}});
  auto first = [&] {
    return engine::op1("test_one_site", {x}, x.type(), [](shlo::Builder&, const Vals& v) { return v; });
  };
  first();
  first();  // the same site again is fine
  EXPECT_THROW(engine::op1("test_one_site", {x}, x.type(), [](shlo::Builder&, const Vals& v) { return v; }),
               std::exception);
}
