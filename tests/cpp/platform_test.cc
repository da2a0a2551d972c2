// The platform policy (engine/platform.h): plugin names map to one enum,
// and each platform's rules come from the one table.
#include "engine/platform.h"

#include <gtest/gtest.h>

#include "engine/runtime.h"
#include "test_env.h"

namespace {

using pjrt::Platform;

TEST(Platform, NamesMapToOneEnum) {
  EXPECT_EQ(pjrt::platform_named("cpu"), Platform::Cpu);
  EXPECT_EQ(pjrt::platform_named("Host"), Platform::Cpu);
  EXPECT_EQ(pjrt::platform_named("CUDA"), Platform::Gpu);
  EXPECT_EQ(pjrt::platform_named("rocm"), Platform::Gpu);
  EXPECT_EQ(pjrt::platform_named("tpu"), Platform::Tpu);
  EXPECT_EQ(pjrt::platform_named("/opt/plugin.so"), Platform::Other);
  for (Platform p : {Platform::Cpu, Platform::Gpu, Platform::Tpu, Platform::Other})
    EXPECT_EQ(pjrt::platform_named(pjrt::platform_label(p)), p);
}

TEST(Platform, PolicyTable) {
  const auto& cpu = engine::policy_for(Platform::Cpu);
  EXPECT_TRUE(cpu.f64 && cpu.host_memory && cpu.host_functions && cpu.weight_copies && cpu.xnnpack_off);
  EXPECT_FALSE(cpu.native_bf16);
  const auto& tpu = engine::policy_for(Platform::Tpu);
  EXPECT_FALSE(tpu.f64 || tpu.host_memory || tpu.host_functions || tpu.weight_copies || tpu.xnnpack_off);
  EXPECT_TRUE(tpu.native_bf16);
  const auto& gpu = engine::policy_for(Platform::Gpu);
  EXPECT_TRUE(gpu.f64 && gpu.native_bf16);
  EXPECT_FALSE(gpu.host_memory || gpu.host_functions || gpu.weight_copies);
}

TEST(Platform, RunningPluginAndOverride) {
  test_env::configure_engine();
  EXPECT_EQ(engine::platform_policy().platform, engine::Runtime::get().client().kind());
  engine::set_platform_override(Platform::Tpu);
  EXPECT_FALSE(engine::platform_policy().f64);
  EXPECT_FALSE(engine::platform_policy().host_functions);
  engine::set_platform_override(Platform::Cpu);
  EXPECT_FALSE(engine::platform_policy().host_functions);  // never under an override
  engine::set_platform_override(std::nullopt);
  EXPECT_EQ(engine::platform_policy().platform, engine::Runtime::get().client().kind());
  EXPECT_FALSE(engine::platform_overridden());
}

}  // namespace
