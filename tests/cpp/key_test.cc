// Cache keys (engine/key.h): one encoding for every key, equal exactly when
// the values it was built from are equal; floating point values by their
// bits.
#include "engine/key.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace {

struct Window {
  int64_t size, stride;
  std::vector<int64_t> pads;
  auto fields() const { return std::tie(size, stride, pads); }
};

double with_bits(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}

}  // namespace

TEST(Key, EqualAttributesGiveEqualKeys) {
  using engine::Key;
  auto make = [] {
    return Key::op("pool", int64_t{3}, 0.5, shlo::DType::F32, std::vector<int64_t>{1, 2}, std::optional<double>(),
                   Window{2, 1, {0, 1}}, shlo::Type{shlo::DType::BF16, {4, 8}}, std::string("mean"), true);
  };
  EXPECT_EQ(make(), make());
  EXPECT_EQ(make().str(), make().str());
  EXPECT_EQ(Key::op("relu"), Key("relu"));
  EXPECT_EQ(Key::op("f", 1, 2).str(), "f(1,2,)");
  // Composite keys: the same values appended the same way.
  Key a, b;
  a.add(shlo::Type{shlo::DType::F32, {2, 3}}).mark('|').append(Key::op("f", 0.25));
  b.add(shlo::Type{shlo::DType::F32, {2, 3}}).mark('|').append(Key::op("f", 0.25));
  EXPECT_EQ(a, b);
}

TEST(Key, DifferentAttributesGiveDifferentKeys) {
  using engine::Key;
  EXPECT_NE(Key::op("f", 1), Key::op("g", 1));
  EXPECT_NE(Key::op("f", 1), Key::op("f", 2));
  EXPECT_NE(Key::op("f", int64_t{12}), Key::op("f", int64_t{1}, int64_t{2}));
  EXPECT_NE(Key::op("f", std::vector<int64_t>{1, 2}), Key::op("f", std::vector<int64_t>{12}));
  EXPECT_NE(Key::op("f", std::vector<std::vector<int64_t>>{{1}, {2}}),
            Key::op("f", std::vector<std::vector<int64_t>>{{1, 2}}));
  EXPECT_NE(Key::op("f", std::string("a,b")), Key::op("f", std::string("a"), std::string("b")));
  EXPECT_NE(Key::op("f", std::optional<int64_t>()), Key::op("f", std::optional<int64_t>(0)));
  EXPECT_NE(Key::op("f", shlo::Type{shlo::DType::F32, {2, 3}}), Key::op("f", shlo::Type{shlo::DType::F32, {23}}));
  EXPECT_NE(Key::op("f", Window{2, 1, {0}}), Key::op("f", Window{2, 1, {1}}));
}

TEST(Key, FloatsAreExact) {
  using engine::Key;
  // The last bit.
  for (double x : {1.0, 0.1, 1.0000001, -3.5e-300, 6.02e23}) {
    const double next = std::nextafter(x, std::numeric_limits<double>::infinity());
    EXPECT_NE(Key::op("f", x), Key::op("f", next)) << x;
    EXPECT_EQ(Key::op("f", x), Key::op("f", x)) << x;
  }
  // Past the sixth decimal, where a printed decimal would round them together.
  EXPECT_NE(Key::op("f", 1.0000001), Key::op("f", 1.0000002));
  EXPECT_NE(Key::op("f", 1e-7), Key::op("f", 2e-7));
  EXPECT_NE(Key::op("f", 1.0f), Key::op("f", std::nextafter(1.0f, 2.0f)));
  // Signed zeros lower differently (1/x, copysign, atan2).
  EXPECT_NE(Key::op("f", 0.0), Key::op("f", -0.0));
  EXPECT_NE(Key::op("f", 0.0f), Key::op("f", -0.0f));
  // A NaN is equal to itself bit for bit (its program is found again) and
  // distinct from other NaNs and from the infinities.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(Key::op("f", nan), Key::op("f", nan));
  EXPECT_NE(Key::op("f", nan), Key::op("f", -nan));
  EXPECT_NE(Key::op("f", with_bits(0x7ff8000000000001ull)), Key::op("f", with_bits(0x7ff8000000000002ull)));
  EXPECT_NE(Key::op("f", nan), Key::op("f", std::numeric_limits<double>::infinity()));
  EXPECT_NE(Key::op("f", std::numeric_limits<double>::infinity()),
            Key::op("f", -std::numeric_limits<double>::infinity()));
  // A float attribute is the double of the same value.
  EXPECT_EQ(Key::op("f", 0.5f), Key::op("f", 0.5));
}

TEST(Key, ComplexNumbersAreExactInBothParts) {
  using engine::Key;
  using C = std::complex<double>;
  EXPECT_EQ(Key().add(C(1.5, -2.0)), Key().add(C(1.5, -2.0)));
  EXPECT_NE(Key().add(C(1.0000001, 0)), Key().add(C(1.0000002, 0)));
  EXPECT_NE(Key().add(C(1, 1.0000001)), Key().add(C(1, 1.0000002)));
  EXPECT_NE(Key().add(C(0.0, 0.0)), Key().add(C(0.0, -0.0)));
  EXPECT_NE(Key().add(C(1, 2)), Key().add(C(2, 1)));
}
