// The elementwise family's ATen-side kernel shape, also used by the
// activation family's entry points: a node that reads its inputs, converts
// each to the op's compute dtype, broadcasts it to the output and applies
// one lowering function, and the compute dtype of a structured op's meta.
#pragma once

#include <ATen/TensorIterator.h>

#include <functional>
#include <type_traits>
#include <vector>

#include "aten/tensor.h"
#include "ops/elementwise/elementwise.h"

namespace tpu {

// Elementwise: reads `inputs`, converts each to `compute` and broadcasts it to
// `out`'s shape, applies fn(builder, args, attrs...) to them, converts the
// result to out's dtype and stores it into out. extra: more 0-d operands
// (scalars) passed after the inputs, unconverted. fn captures nothing.
// The inputs are borrowed: copying a tensor Python holds takes the GIL
// (torch keeps its Python object alive from a second reference on), about
// a tenth of a small op's host time.
using TensorRefs = c10::ArrayRef<std::reference_wrapper<const at::Tensor>>;
template <class F, class... A>
void pointwise(const at::Tensor& out, engine::OpName name, TensorRefs inputs, shlo::DType compute,
               c10::ArrayRef<engine::Ref> extra, F fn, A... attrs);

namespace detail {
// The node's lowering around fn: operand conversion and broadcasting.
// shape: what the inputs broadcast to, empty when they all have the
// output's shape already (the common case, which then holds no shape).
template <class F, class... A>
struct Pointwise {
  std::vector<shlo::Value> operator()(shlo::Builder& b, const std::vector<shlo::Value>& in, shlo::DType compute,
                                      shlo::DType out_t, size_t n_in, const shlo::Shape& shape, const A&... a) const {
    std::vector<shlo::Value> args;
    args.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      if (i >= n_in) {
        args.push_back(in[i]);
        continue;
      }
      shlo::Value x = ops::convert(b, in[i], compute);
      args.push_back(shape.empty() ? x : b.broadcast_to(x, shape));
    }
    return {ops::convert(b, F{}(b, args, a...), out_t)};
  }
};
}  // namespace detail

template <class F, class... A>
void pointwise(const at::Tensor& out, engine::OpName name, TensorRefs inputs, shlo::DType compute,
               c10::ArrayRef<engine::Ref> extra, F fn, A... attrs) {
  static_assert(std::is_empty_v<F>, "a pointwise function may not capture anything: pass attributes");
  (void)fn;
  std::vector<engine::Ref> refs;
  refs.reserve(inputs.size() + extra.size());
  for (const at::Tensor& t : inputs) refs.push_back(read(t));
  refs.insert(refs.end(), extra.begin(), extra.end());
  shlo::Type out_type{to_shlo(out.scalar_type()), shape_of(out.sizes())};
  shlo::DType out_t = out_type.dtype;
  shlo::Shape shape;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (refs[i].type().shape != out_type.shape) {
      shape = out_type.shape;
      break;
    }
  write(out, op1(name, std::move(refs), std::move(out_type), detail::Pointwise<F, A...>{}, compute, out_t,
                 inputs.size(), std::move(shape), std::move(attrs)...));
}

namespace ew {

// The dtype a structured elementwise op computes in (its meta's common dtype).
inline shlo::DType common(const at::TensorIteratorBase& m) { return to_shlo(m.common_dtype()); }

}  // namespace ew

}  // namespace tpu
