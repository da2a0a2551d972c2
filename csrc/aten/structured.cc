#include "aten/structured.h"

#include "ops/elementwise/elementwise.h"

namespace tpu {

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
