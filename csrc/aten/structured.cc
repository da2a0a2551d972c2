#include "aten/structured.h"

#include "ops/elementwise/elementwise.h"

namespace tpu {

void legacy_pointwise(const at::Tensor& out, const std::string& key, const std::vector<at::Tensor>& inputs,
                      shlo::DType compute, const std::vector<engine::Ref>& extra, PointwiseFn fn) {
  shlo::Shape shape = shape_of(out.sizes());
  shlo::DType out_t = to_shlo(out.scalar_type());
  std::vector<engine::Ref> refs;
  for (const at::Tensor& t : inputs) refs.push_back(read(t));
  size_t n_in = refs.size();
  for (const engine::Ref& e : extra) refs.push_back(e);
  std::string k = key + ":" + shlo::dtype_name(compute) + ">" + shlo::dtype_name(out_t);
  engine::Ref r = legacy_op(k, refs, shlo::Type{out_t, shape},
                            [fn, shape, compute, out_t, n_in](shlo::Builder& b, const std::vector<shlo::Value>& in) {
                              std::vector<shlo::Value> args;
                              for (size_t i = 0; i < in.size(); ++i) {
                                shlo::Value v = in[i];
                                if (i < n_in) v = b.broadcast_to(ops::convert(b, v, compute), shape);
                                args.push_back(v);
                              }
                              return std::vector<shlo::Value>{ops::convert(b, fn(b, args), out_t)};
                            });
  write(out, r);
}

engine::Ref scalar_of(const at::Scalar& s, shlo::DType d) {
  // A complex op takes the scalar whole (f64 parts only for complex128).
  if (shlo::is_complex(d)) {
    if (s.isComplex()) return complex_scalar(s.toComplexDouble(), d);
    if (s.isFloatingPoint()) return complex_scalar(s.toDouble(), d);
  }
  // Floats travel as f32 unless the op is f64 (TPUs have no f64).
  if (s.isFloatingPoint() || s.isComplex())
    return cast(engine::scalar(d == shlo::DType::F64 ? d : shlo::DType::F32, s.to<double>()), d);
  if (s.isBoolean()) return cast(engine::scalar(shlo::DType::PRED, s.toBool()), d);
  return cast(engine::scalar_i64(s.toLong()), d);
}

}  // namespace tpu
