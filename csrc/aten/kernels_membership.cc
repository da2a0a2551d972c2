// isin: membership tests (generate()'s stopping criteria use it).
#include <ATen/ops/isin_meta.h>

#include "aten/kernels.h"
#include "aten/structured.h"
#include "ops/sort/membership.h"

namespace tpu {

namespace {

void isin_impl(const at::Tensor& out, const at::Tensor& elements, const at::Tensor& test, bool invert) {
  // The Scalar_Tensor meta allocates a placeholder shape; the result has
  // the elements' shape.
  at::native::resize_output(out, elements.sizes());
  shlo::DType common = to_shlo(at::result_type(elements, test));
  engine::Ref x = cast(read(elements), common), t = cast(read(test), common);
  write(out, legacy_op(std::string("isin") + (invert ? ":invert" : ""), {x, t},
                       shlo::Type{shlo::DType::PRED, shape_of(out.sizes())},
                       [invert](shlo::Builder& b, const std::vector<shlo::Value>& in) {
                         return std::vector<shlo::Value>{ops::isin(b, in[0], in[1], invert)};
                       }));
}

at::Tensor scalar_tensor_on(const at::Scalar& s, const at::Tensor& like) {
  return at::scalar_tensor(s, like.options().dtype(s.type()));
}

}  // namespace

at::Tensor& isin_Tensor_Tensor_out(const at::Tensor& e, const at::Tensor& t, bool assume_unique, bool invert,
                                   at::Tensor& out) {
  Structured<at::meta::structured_isin_Tensor_Tensor> m({out});
  m.meta(e, t, assume_unique, invert);
  isin_impl(out, e, t, invert);
  return out;
}

at::Tensor isin_Tensor_Tensor(const at::Tensor& e, const at::Tensor& t, bool assume_unique, bool invert) {
  Structured<at::meta::structured_isin_Tensor_Tensor> m;
  m.meta(e, t, assume_unique, invert);
  isin_impl(m.outs[0], e, t, invert);
  return m.outs[0];
}

at::Tensor isin_Tensor_Scalar(const at::Tensor& e, const at::Scalar& t, bool assume_unique, bool invert) {
  Structured<at::meta::structured_isin_Tensor_Scalar> m;
  m.meta(e, t, assume_unique, invert);
  isin_impl(m.outs[0], e, scalar_tensor_on(t, e), invert);
  return m.outs[0];
}

at::Tensor isin_Scalar_Tensor(const at::Scalar& e, const at::Tensor& t, bool assume_unique, bool invert) {
  Structured<at::meta::structured_isin_Scalar_Tensor> m;
  m.meta(e, t, assume_unique, invert);
  isin_impl(m.outs[0], scalar_tensor_on(e, t), t, invert);
  return m.outs[0];
}

}  // namespace tpu
