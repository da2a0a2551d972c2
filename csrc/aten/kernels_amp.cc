// PReLU, the one elementwise op on autocast's lower-precision list.
#include <ATen/TensorIterator.h>

#include "aten/kernels.h"
#include "aten/structured.h"
#include "aten/tensor.h"
#include "ops/amp/amp.h"
#include "ops/elementwise/elementwise.h"

namespace tpu {

namespace {

// The CPU kernels' TensorIterator: inputs of one dtype (no promotion),
// broadcast; outputs of that dtype.
struct PreluMeta : at::TensorIteratorBase {
  void meta(const at::Tensor& self, const at::Tensor& weight) {
    build(at::TensorIteratorConfig().add_output(maybe_get_output(0)).add_const_input(self).add_const_input(weight));
  }
};
struct PreluBackwardMeta : at::TensorIteratorBase {
  void meta(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& weight) {
    build(at::TensorIteratorConfig()
              .add_output(maybe_get_output(0))
              .add_output(maybe_get_output(1))
              .add_const_input(self)
              .add_const_input(weight)
              .add_const_input(grad));
  }
};

void check_prelu_dtype(at::ScalarType t) {
  TORCH_CHECK(at::isFloatingType(t), "prelu: expected a floating point tensor, got ", t);
}

}  // namespace

at::Tensor _prelu_kernel(const at::Tensor& self, const at::Tensor& weight) {
  Structured<PreluMeta> m;
  m.meta(self, weight);
  check_prelu_dtype(m.common_dtype());
  shlo::DType c = ops::opmath(to_shlo(m.common_dtype()));
  legacy_pointwise(m.outs[0], "prelu", {self, weight}, c, {},
                   [](shlo::Builder& b, const std::vector<shlo::Value>& v) { return ops::prelu(b, v[0], v[1]); });
  return m.outs[0];
}

std::tuple<at::Tensor, at::Tensor> _prelu_kernel_backward(const at::Tensor& grad, const at::Tensor& self,
                                                          const at::Tensor& weight) {
  Structured<PreluBackwardMeta> m;
  m.meta(grad, self, weight);
  check_prelu_dtype(m.common_dtype());
  at::Tensor gx = m.outs[0], gw = m.outs[1];
  shlo::DType d = to_shlo(m.common_dtype()), c = ops::opmath(d);
  shlo::Shape shape = shape_of(gx.sizes());
  legacy_write_all({gx, gw}, std::string("prelu_backward:") + shlo::dtype_name(c),
                   {read(grad), read(self), read(weight)},
                   [c, d, shape](shlo::Builder& b, const std::vector<shlo::Value>& v) {
                     auto in = [&](int i) { return b.broadcast_to(ops::convert(b, v[i], c), shape); };
                     std::vector<shlo::Value> r = ops::prelu_backward(b, in(0), in(1), in(2));
                     return std::vector<shlo::Value>{ops::convert(b, r[0], d), ops::convert(b, r[1], d)};
                   });
  return {gx, gw};
}

}  // namespace tpu
