// The runtime against the real plugin: load, upload, compile, run, download.
#include <gtest/gtest.h>

#include <cmath>

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

// XLA:CPU's memory is the host's: a computed buffer is copied out directly
// (the plugin's own copy would queue behind any running program).
TEST(Pjrt, AComputedBufferIsReadInPlaceOnHostMemory) {
  auto& c = test_env::client();
  ASSERT_TRUE(c.api().host_memory());
  std::vector<int32_t> in{7, -2, 3, 4, 5, 6};
  auto b = c.from_host(in.data(), PJRT_Buffer_Type_S32, {3, 2});
  b->await_ready("test");
  std::vector<int32_t> out(6, 0);
  ASSERT_TRUE(b->read_in_place(out.data(), out.size() * 4));
  EXPECT_EQ(in, out);
  EXPECT_FALSE(b->read_in_place(out.data(), 8));  // not the whole buffer: the general path says why
  const bool flags[3] = {true, false, true};
  auto p = c.from_host(flags, PJRT_Buffer_Type_PRED, {3});
  p->await_ready("test");
  bool got[3] = {false, true, false};
  ASSERT_TRUE(p->read_in_place(got, 3));
  EXPECT_TRUE(got[0] && !got[1] && got[2]);
}

// Releasing the last handle of a buffer donated to a queued program returns
// at once (XLA:CPU's own destroy waits for that program to start), as does
// one it only reads; the program still reads both, and its result is read
// in place when computed.
TEST(Pjrt, ReleasingABufferDonatedToAQueuedProgramDoesNotWait) {
  auto& c = test_env::client();
  const char* slow =
      "module @m {\n func.func public @main(%a: tensor<1536x1536xf32>) -> tensor<1536x1536xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0] : (tensor<1536x1536xf32>, "
      "tensor<1536x1536xf32>) -> tensor<1536x1536xf32>\n"
      "  %1 = stablehlo.dot_general %0, %a, contracting_dims = [1] x [0] : (tensor<1536x1536xf32>, "
      "tensor<1536x1536xf32>) -> tensor<1536x1536xf32>\n"
      "  return %1 : tensor<1536x1536xf32>\n }\n}\n";
  const char* sum =
      "module @m {\n func.func public @main(%a: tensor<1536x1536xf32>, %b: tensor<3xf32> {tf.aliasing_output = 0 : "
      "i32}, %c: tensor<3xf32>) -> tensor<3xf32> {\n"
      "  %0 = stablehlo.slice %a [0:1, 0:3] : (tensor<1536x1536xf32>) -> tensor<1x3xf32>\n"
      "  %1 = stablehlo.reshape %0 : (tensor<1x3xf32>) -> tensor<3xf32>\n"
      "  %2 = stablehlo.multiply %1, %1 : tensor<3xf32>\n"
      "  %3 = stablehlo.add %2, %b : tensor<3xf32>\n"
      "  %4 = stablehlo.multiply %3, %c : tensor<3xf32>\n  return %4 : tensor<3xf32>\n }\n}\n";
  auto long_exe = c.compile(slow), short_exe = c.compile(sum);
  std::vector<float> zeros(1536 * 1536, 0.0f), in{1, 2, 3}, scale{2, 3, -1}, out(3);
  auto a = c.from_host(zeros.data(), PJRT_Buffer_Type_F32, {1536, 1536});
  auto b = c.from_host(in.data(), PJRT_Buffer_Type_F32, {3});
  auto k = c.from_host(scale.data(), PJRT_Buffer_Type_F32, {3});
  for (auto* x : {&a, &b, &k}) (*x)->await_ready("test");
  std::unique_ptr<pjrt::Event> running;
  auto first = long_exe->execute({a->get()}, {}, false, &running);
  // Queued behind the first, consuming b (donated: its memory is the result's).
  // k is only read (destroyed where released: XLA:CPU does not wait).
  auto second = short_exe->execute({first[0]->get(), b->get(), k->get()}, {0, 2}, true);
  b->set_donated(true);
  b.reset();  // the last handles, while the program reading them waits
  k.reset();
  EXPECT_FALSE(running->ready()) << "a release waited for the running program";
  // Read in place once computed (the plugin's own copy would queue on its
  // workers behind whatever runs there).
  ASSERT_TRUE(second[0]->read_in_place(out.data(), 12));
  EXPECT_EQ(out, (std::vector<float>{2, 6, -3}));
  pjrt::flush_releases();
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

// Options set for one compile (the engine's compile tiers) reach the
// compiler: a valid override compiles and runs; a value of the wrong kind
// for a known option is refused, so the encoding is read, not ignored.
TEST(Pjrt, CompileOptionOverridesApplyToOneProgram) {
  auto& c = test_env::client();
  const char* text =
      "module @m {\n func.func public @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
      "  %0 = stablehlo.multiply %a, %a : tensor<3xf32>\n  %1 = stablehlo.exponential %0 : tensor<3xf32>\n"
      "  return %1 : tensor<3xf32>\n }\n}\n";
  std::vector<float> in{0.5f, -1, 1.5f};
  auto b = c.from_host(in.data(), PJRT_Buffer_Type_F32, {3});
  for (const auto& overrides : std::vector<std::vector<pjrt::OptionOverride>>{
           {},
           {{"xla_cpu_use_fusion_emitters", false}},
           {{"xla_cpu_use_fusion_emitters", false}, {"xla_backend_optimization_level", int64_t{0}}}}) {
    auto exe = c.compile(text, {}, overrides);
    std::vector<float> out(3);
    exe->execute({b->get()})[0]->to_host(out.data(), 12);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(out[i], std::exp(in[i] * in[i]), 1e-6f * out[i]);
  }
  EXPECT_THROW(c.compile(text, {}, {{"xla_backend_optimization_level", true}}), pjrt::Error);
}

// With several devices one compile serves each of them: the program runs on
// the device asked for, its outputs live there, and memory is counted there.
TEST(Pjrt, APortableProgramRunsOnTheDeviceAskedFor) {
  pjrt::ClientOptions opts;
  opts.cpu_device_count = 2;
  pjrt::Client c(std::make_shared<pjrt::Api>(std::getenv("TORCH_PJRT_PLUGIN_PATH")), opts);
  ASSERT_EQ(c.device_count(), 2u);
  auto exe = c.compile(
      "module @m {\n func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.multiply %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n }\n}\n");
  std::vector<float> in{1, 2, 3, 4}, out(4);
  const int64_t before = pjrt::live_bytes(1);
  auto b = c.from_host(in.data(), PJRT_Buffer_Type_F32, {4}, /*device=*/1);
  EXPECT_EQ(b->device(), 1);
  EXPECT_EQ(pjrt::live_bytes(1), before + 16);
  auto r = exe->execute({b->get()}, {}, false, nullptr, pjrt::Launch{c.device(1), 1});
  PJRT_Buffer_Device_Args where{};
  where.struct_size = PJRT_Buffer_Device_Args_STRUCT_SIZE;
  where.buffer = r[0]->get();
  c.api().check(c.api().raw()->PJRT_Buffer_Device(&where), "PJRT_Buffer_Device");
  EXPECT_EQ(where.device, c.device(1));
  EXPECT_EQ(r[0]->device(), 1);
  r[0]->to_host(out.data(), 16);
  EXPECT_EQ(out, (std::vector<float>{1, 4, 9, 16}));

  auto moved = c.copy_to_device(*r[0], 0);
  where.buffer = moved->get();
  c.api().check(c.api().raw()->PJRT_Buffer_Device(&where), "PJRT_Buffer_Device");
  EXPECT_EQ(where.device, c.device(0));
  moved->to_host(out.data(), 16);
  EXPECT_EQ(out, (std::vector<float>{1, 4, 9, 16}));
}
