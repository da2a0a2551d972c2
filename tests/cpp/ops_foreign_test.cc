// Foreign StableHLO modules (ops/foreign): cleaning, renaming and inlining
// text in the form JAX's exporter prints, then running it on the plugin.
#include <gtest/gtest.h>

#include "ops/foreign/foreign.h"
#include "test_env.h"

using shlo::Builder;
using shlo::DType;
using shlo::Type;
using shlo::Value;

namespace {

// The shape of jax.export's mlir_module() text: location aliases, module
// attributes, a public @main with argument / result attributes and a
// private helper it calls.
std::string exported(const std::string& scale) {
  return "#loc = loc(unknown)\n"
         "#loc1 = loc(\"x\")\n"
         "module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32} {\n"
         "  func.func public @main(%arg0: tensor<2x3xf32> loc(\"x\"), %arg1: tensor<i32> loc(\"n\")) -> "
         "(tensor<2x3xf32> {jax.result_info = \"result[0]\"}, tensor<i32> {jax.result_info = \"result[1]\"}) {\n"
         "    %cst = stablehlo.constant dense<" +
         scale +
         "> : tensor<f32> loc(#loc)\n"
         "    %0 = call @helper(%arg0, %cst) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc(#loc3)\n"
         "    %1 = stablehlo.add %arg1, %arg1 : tensor<i32> loc(\"add@x\")\n"
         "    return %0, %1 : tensor<2x3xf32>, tensor<i32> loc(#loc)\n"
         "  } loc(#loc)\n"
         "  func.func private @helper(%arg0: tensor<2x3xf32> loc(unknown), %arg1: tensor<f32> loc(unknown)) -> "
         "tensor<2x3xf32> {\n"
         "    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<2x3xf32> loc(#loc1)\n"
         "    %1 = stablehlo.multiply %arg0, %0 : tensor<2x3xf32> loc(#loc1)\n"
         "    return %1 : tensor<2x3xf32> loc(#loc)\n"
         "  } loc(#loc)\n"
         "} loc(#loc)\n"
         "#loc3 = loc(\"/some/file.py\":4:20 to :25)\n";
}

}  // namespace

TEST(OpsForeign, PrepareReadsTheSignatureAndRenamesEverySymbol) {
  ops::foreign::Module m = ops::foreign::prepare(exported("2.0"));
  ASSERT_EQ(m.inputs.size(), 2u);
  EXPECT_EQ(m.inputs[0], (Type{DType::F32, {2, 3}}));
  EXPECT_EQ(m.inputs[1], (Type{DType::S32, {}}));
  ASSERT_EQ(m.outputs.size(), 2u);
  EXPECT_EQ(m.outputs[0], (Type{DType::F32, {2, 3}}));
  EXPECT_EQ(m.outputs[1], (Type{DType::S32, {}}));
  EXPECT_EQ(m.entry, "jx_" + m.digest + "_main");
  EXPECT_EQ(m.functions.find("loc("), std::string::npos);
  EXPECT_EQ(m.functions.find("mhlo.num_partitions"), std::string::npos);
  EXPECT_EQ(m.functions.find("public"), std::string::npos);
  EXPECT_NE(m.functions.find("call @jx_" + m.digest + "_helper("), std::string::npos);
  EXPECT_NE(m.functions.find("func.func private @jx_" + m.digest + "_main("), std::string::npos);
}

TEST(OpsForeign, DigestFollowsTheComputationNotTheLocations) {
  std::string a = exported("2.0");
  std::string moved = a;
  moved.replace(moved.find("/some/file.py"), 13, "/other/place.py");
  EXPECT_EQ(ops::foreign::prepare(a).digest, ops::foreign::prepare(moved).digest);
  EXPECT_NE(ops::foreign::prepare(a).digest, ops::foreign::prepare(exported("3.0")).digest);
}

TEST(OpsForeign, BadTextIsAClearError) {
  auto message = [](const std::string& text) {
    try {
      ops::foreign::prepare(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("func.func @main() { }").find("start with 'module'"), std::string::npos);
  EXPECT_NE(message("module { func.func @f() { return } }").find("no @main"), std::string::npos);
  EXPECT_NE(message("module { func.func @main(%a: tensor<?xf32>) { return } }").find("dynamic"), std::string::npos);
  EXPECT_NE(message("module { func.func @main(%a: tensor<2xf32>) {").find("unbalanced"), std::string::npos);
  EXPECT_THROW(ops::foreign::find("0123"), std::invalid_argument);
}

TEST(OpsForeign, TwoModulesAndTwoCallsShareOneProgram) {
  // Two different modules, the first called twice: its functions are
  // defined once, and nothing collides although both define @main/@helper.
  auto two = ops::foreign::add(exported("2.0"));
  auto three = ops::foreign::add(exported("3.0"));
  Builder b;
  Value x = b.param(Type{DType::F32, {2, 3}});
  Value n = b.param(Type{DType::S32, {}});
  auto r1 = ops::foreign::call(b, {x, n}, two->digest);
  auto r2 = ops::foreign::call(b, {r1[0], r1[1]}, two->digest);
  auto r3 = ops::foreign::call(b, {r2[0], n}, three->digest);
  std::string text = b.finish({r3[0]});
  size_t first = text.find("@" + two->entry + "(");
  EXPECT_EQ(text.find("func.func private @" + two->entry + "(", first + 1), std::string::npos);
  std::vector<float> in{1, 2, 3, 4, 5, 6};
  auto& c = test_env::client();
  auto exe = c.compile(text);
  int32_t k = 5;
  auto bx = c.from_host(in.data(), PJRT_Buffer_Type_F32, {2, 3});
  auto bn = c.from_host(&k, PJRT_Buffer_Type_S32, {});
  auto outs = exe->execute({bx->get(), bn->get()});
  std::vector<float> got(6);
  outs[0]->to_host(got.data(), sizeof(float) * 6);
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(got[i], in[i] * 12.0f);
}
