// The runtime against the real plugin: load, upload, compile, run, download.
#include <gtest/gtest.h>

#include "pjrt/runtime.h"
#include "test_env.h"

TEST(Pjrt, LoadsPluginAndReportsVersions) {
  auto& c = test_env::client();
  EXPECT_EQ(c.api().major(), PJRT_API_MAJOR);
  EXPECT_EQ(c.platform(), "cpu");
  EXPECT_EQ(c.device_count(), 1u);
}

TEST(Pjrt, RoundTripsHostData) {
  auto& c = test_env::client();
  std::vector<int32_t> in{1, -2, 3, 4, 5, 6};
  auto b = c.from_host(in.data(), PJRT_Buffer_Type_S32, {2, 3});
  EXPECT_EQ(b->dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(b->element_type(), PJRT_Buffer_Type_S32);
  std::vector<int32_t> out(6);
  b->to_host(out.data(), out.size() * 4);
  EXPECT_EQ(in, out);
}

TEST(Pjrt, CompileErrorIsAnException) {
  auto& c = test_env::client();
  EXPECT_THROW(c.compile("module { this is not mlir }"), pjrt::Error);
}

TEST(Pjrt, MissingPluginNamesThePath) {
  try {
    pjrt::Api api("/nonexistent/plugin.so");
    FAIL();
  } catch (const pjrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/plugin.so"), std::string::npos);
  }
}

TEST(Pjrt, SerializedExecutableRuns) {
  auto& c = test_env::client();
  const char* text =
      "module @m {\n func.func public @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
      "  %0 = stablehlo.add %a, %a : tensor<3xf32>\n  return %0 : tensor<3xf32>\n }\n}\n";
  auto exe = c.compile(text);
  auto again = c.deserialize(exe->serialize());
  std::vector<float> in{1, 2, 3}, out(3);
  auto b = c.from_host(in.data(), PJRT_Buffer_Type_F32, {3});
  auto r = again->execute({b->get()});
  r[0]->to_host(out.data(), 12);
  EXPECT_EQ(out, (std::vector<float>{2, 4, 6}));
}
