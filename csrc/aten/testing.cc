// Ops that exist to test the device's error paths from Python: an op whose
// program fails to compile, to check where and how each eager mode reports it.
#include <torch/library.h>

#include "aten/library.h"
#include "aten/tensor.h"

namespace tpu {
namespace {

at::Tensor failing_op(const at::Tensor& self) {
  engine::Ref r =
      op1("failing_op", {read(self)}, type_of(self), [](shlo::Builder& b, const std::vector<shlo::Value>& in) {
        // Not a StableHLO op: the plugin's compiler rejects the program.
        return std::vector<shlo::Value>{b.op1("stablehlo.no_such_op", {in[0]}, in[0].type)};
      });
  return wrap(r, self.device());
}

}  // namespace
}  // namespace tpu

TORCH_LIBRARY_FRAGMENT(torch_pjrt, m) { m.def("_failing_op(Tensor self) -> Tensor"); }
TORCH_LIBRARY_IMPL(torch_pjrt, PrivateUse1, m) { tpu::Kernels(m).impl("_failing_op", &tpu::failing_op); }
