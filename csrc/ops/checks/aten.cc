// torch._assert_async on the tpu: a one-element tensor must be nonzero,
// checked like the other value checks (engine/checks.h): never waiting, as
// on CUDA, and raised at the next host read or synchronize.
#include "aten/library.h"
#include "aten/tensor.h"
#include "engine/checks.h"

namespace tpu {

namespace {

void assert_nonzero(const at::Tensor& self, std::string msg) {
  TORCH_CHECK(self.numel() != 0, "Boolean value of Tensor with no values is ambiguous");
  TORCH_CHECK(self.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
  engine::defer_check(cast(read(self.ne(0)), shlo::DType::S64),
                      [msg = std::move(msg)](const std::vector<int64_t>& v) { TORCH_CHECK(v[0] != 0, msg); });
}

void _assert_async(const at::Tensor& self) {
  assert_nonzero(self, "Expected Tensor with single nonzero value, but got zero");
}

void _assert_async_msg(const at::Tensor& self, c10::string_view assert_msg) {
  assert_nonzero(self, assert_msg.empty() ? "Assertion is failed" : std::string(assert_msg));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("_assert_async", &_assert_async);
  m.impl("_assert_async.msg", &_assert_async_msg);
}

}  // namespace tpu
