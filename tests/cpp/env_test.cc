// The environment table (engine/env.h): an unset variable reads as the
// table's fallback, a set one as its value, and an undeclared name is an
// error, so a default lives in one place.
#include "engine/env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace {

// Sets a variable for one scope and restores what it was.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* was = getenv(name)) {
      had_ = true;
      was_ = was;
    }
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, was_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string was_;
};

const char* fallback(const char* name) {
  for (const auto& v : engine::env::all())
    if (std::strcmp(v.name, name) == 0) return v.fallback;
  return nullptr;
}

TEST(Env, UnsetReadsTheTablesFallback) {
  ScopedEnv a("TORCH_PJRT_FUSED_MAX_NODES", nullptr), b("TORCH_PJRT_EAGER_MODE", nullptr);
  EXPECT_EQ(engine::env::positive("TORCH_PJRT_FUSED_MAX_NODES"), std::stoll(fallback("TORCH_PJRT_FUSED_MAX_NODES")));
  EXPECT_STREQ(engine::env::value("TORCH_PJRT_EAGER_MODE"), fallback("TORCH_PJRT_EAGER_MODE"));
  EXPECT_EQ(engine::env::get("TORCH_PJRT_EAGER_MODE"), nullptr);
}

TEST(Env, SetValuesWin) {
  ScopedEnv a("TORCH_PJRT_FUSED_MAX_NODES", "17"), b("TORCH_PJRT_EAGER_MODE", "fused");
  EXPECT_EQ(engine::env::positive("TORCH_PJRT_FUSED_MAX_NODES"), 17);
  EXPECT_STREQ(engine::env::value("TORCH_PJRT_EAGER_MODE"), "fused");
  // Not a positive number: the fallback.
  ScopedEnv c("TORCH_PJRT_CACHE_ENTRIES", "-3");
  EXPECT_EQ(engine::env::positive("TORCH_PJRT_CACHE_ENTRIES"), std::stoll(fallback("TORCH_PJRT_CACHE_ENTRIES")));
  EXPECT_EQ(engine::env::positive("TORCH_PJRT_CACHE_MAPPINGS", 99), 99);
}

TEST(Env, FlagsFollowTheirDefaults) {
  {
    ScopedEnv a("TORCH_PJRT_DONATE", nullptr), b("TORCH_PJRT_LOG_RECOMPILES", nullptr),
        c("TORCH_PJRT_EXIT_REPORT", nullptr);
    EXPECT_TRUE(engine::env::flag("TORCH_PJRT_DONATE"));           // "1"
    EXPECT_FALSE(engine::env::flag("TORCH_PJRT_LOG_RECOMPILES"));  // "0"
    EXPECT_FALSE(engine::env::flag("TORCH_PJRT_EXIT_REPORT"));     // "unset"
  }
  ScopedEnv a("TORCH_PJRT_DONATE", "0"), b("TORCH_PJRT_LOG_RECOMPILES", "yes");
  EXPECT_FALSE(engine::env::flag("TORCH_PJRT_DONATE"));
  EXPECT_TRUE(engine::env::flag("TORCH_PJRT_LOG_RECOMPILES"));
}

TEST(Env, CountsTakeZeroAndRefuseOtherText) {
  {
    ScopedEnv a("TORCH_PJRT_QUICK_COMPILE_ELEMENTS", nullptr);
    EXPECT_EQ(engine::env::count("TORCH_PJRT_QUICK_COMPILE_ELEMENTS"),
              std::stoll(fallback("TORCH_PJRT_QUICK_COMPILE_ELEMENTS")));
  }
  {
    ScopedEnv a("TORCH_PJRT_QUICK_COMPILE_ELEMENTS", "0");
    EXPECT_EQ(engine::env::count("TORCH_PJRT_QUICK_COMPILE_ELEMENTS"), 0);
  }
  for (const char* bad : {"-1", "4k", "x"}) {
    ScopedEnv a("TORCH_PJRT_QUICK_COMPILE_ELEMENTS", bad);
    EXPECT_THROW(engine::env::count("TORCH_PJRT_QUICK_COMPILE_ELEMENTS"), std::invalid_argument) << bad;
  }
}

TEST(Env, UndeclaredNamesAreErrors) {
  EXPECT_THROW(engine::env::get("TORCH_PJRT_NO_SUCH_THING"), std::logic_error);
  EXPECT_THROW(engine::env::positive("TORCH_PJRT_NO_SUCH_THING"), std::logic_error);
  // A default that is no number cannot be read as one.
  ScopedEnv a("TORCH_PJRT_CACHE_MAPPINGS", nullptr);
  EXPECT_THROW(engine::env::positive("TORCH_PJRT_CACHE_MAPPINGS"), std::logic_error);
}

}  // namespace
