// Binary arithmetic: add, sub, mul, div.
#include <ATen/ops/add_meta.h>
#include <ATen/ops/div_meta.h>
#include <ATen/ops/mul_meta.h>
#include <ATen/ops/sub_meta.h>

#include "aten/kernels.h"
#include "aten/structured.h"
#include "ops/elementwise.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

template <class M>
void add_impl(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
              const at::Scalar& alpha) {
  shlo::DType c = to_shlo(m.common_dtype());
  pointwise(out, "add", {self, other}, c, {scalar_of(alpha, c)},
            [](Builder& b, const Vals& v) { return ops::add(b, v[0], v[1], v[2]); });
}

template <class M>
void sub_impl(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
              const at::Scalar& alpha) {
  shlo::DType c = to_shlo(m.common_dtype());
  pointwise(out, "sub", {self, other}, c, {scalar_of(alpha, c)},
            [](Builder& b, const Vals& v) { return ops::sub(b, v[0], v[1], v[2]); });
}

template <class M>
void mul_impl(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other) {
  shlo::DType c = to_shlo(m.common_dtype());
  if (c == shlo::DType::PRED)
    return pointwise(out, "mul", {self, other}, c, {},
                     [](Builder& b, const Vals& v) { return b.op1("stablehlo.and", {v[0], v[1]}, v[0].type); });
  pointwise(out, "mul", {self, other}, c, {}, [](Builder& b, const Vals& v) { return b.mul(v[0], v[1]); });
}

template <class M>
void div_impl(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other) {
  shlo::DType c = to_shlo(m.common_dtype());
  pointwise(out, "div", {self, other}, c, {}, [](Builder& b, const Vals& v) { return ops::div(b, v[0], v[1]); });
}

template <class M>
void div_mode_impl(M& m, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
                   std::optional<c10::string_view> mode) {
  shlo::DType c = to_shlo(m.common_dtype());
  std::string md = mode.has_value() ? std::string(*mode) : "";
  pointwise(out, "div" + md, {self, other}, c, {},
            [md](Builder& b, const Vals& v) { return ops::div(b, v[0], v[1], md); });
}

using MAdd = at::meta::structured_add_Tensor;
using MSub = at::meta::structured_sub_Tensor;
using MMul = at::meta::structured_mul_Tensor;
using MDiv = at::meta::structured_div_Tensor;
using MDivMode = at::meta::structured_div_Tensor_mode;

}  // namespace

at::Tensor add_Tensor(const at::Tensor& s, const at::Tensor& o, const at::Scalar& a) {
  return functional<MAdd>(add_impl<Structured<MAdd>>, s, o, a);
}
at::Tensor& add__Tensor(at::Tensor& s, const at::Tensor& o, const at::Scalar& a) {
  return inplace<MAdd>(s, add_impl<Structured<MAdd>>, o, a);
}
at::Tensor& add_out(const at::Tensor& s, const at::Tensor& o, const at::Scalar& a, at::Tensor& out) {
  return out_variant<MAdd>(out, add_impl<Structured<MAdd>>, s, o, a);
}

at::Tensor sub_Tensor(const at::Tensor& s, const at::Tensor& o, const at::Scalar& a) {
  return functional<MSub>(sub_impl<Structured<MSub>>, s, o, a);
}
at::Tensor& sub__Tensor(at::Tensor& s, const at::Tensor& o, const at::Scalar& a) {
  return inplace<MSub>(s, sub_impl<Structured<MSub>>, o, a);
}
at::Tensor& sub_out(const at::Tensor& s, const at::Tensor& o, const at::Scalar& a, at::Tensor& out) {
  return out_variant<MSub>(out, sub_impl<Structured<MSub>>, s, o, a);
}

at::Tensor mul_Tensor(const at::Tensor& s, const at::Tensor& o) {
  return functional<MMul>(mul_impl<Structured<MMul>>, s, o);
}
at::Tensor& mul__Tensor(at::Tensor& s, const at::Tensor& o) { return inplace<MMul>(s, mul_impl<Structured<MMul>>, o); }
at::Tensor& mul_out(const at::Tensor& s, const at::Tensor& o, at::Tensor& out) {
  return out_variant<MMul>(out, mul_impl<Structured<MMul>>, s, o);
}

at::Tensor div_Tensor(const at::Tensor& s, const at::Tensor& o) {
  return functional<MDiv>(div_impl<Structured<MDiv>>, s, o);
}
at::Tensor& div__Tensor(at::Tensor& s, const at::Tensor& o) { return inplace<MDiv>(s, div_impl<Structured<MDiv>>, o); }
at::Tensor& div_out(const at::Tensor& s, const at::Tensor& o, at::Tensor& out) {
  return out_variant<MDiv>(out, div_impl<Structured<MDiv>>, s, o);
}
at::Tensor div_Tensor_mode(const at::Tensor& s, const at::Tensor& o, std::optional<c10::string_view> md) {
  return functional<MDivMode>(div_mode_impl<Structured<MDivMode>>, s, o, md);
}
at::Tensor& div__Tensor_mode(at::Tensor& s, const at::Tensor& o, std::optional<c10::string_view> md) {
  return inplace<MDivMode>(s, div_mode_impl<Structured<MDivMode>>, o, md);
}
at::Tensor& div_out_mode(const at::Tensor& s, const at::Tensor& o, std::optional<c10::string_view> md,
                         at::Tensor& out) {
  return out_variant<MDivMode>(out, div_mode_impl<Structured<MDivMode>>, s, o, md);
}

}  // namespace tpu
