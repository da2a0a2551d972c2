#include "aten/structured.h"

#include <cstdint>

#include "ops/elementwise/elementwise.h"

namespace tpu {

namespace {

// Whether integer v is held exactly by dtype d (floats: within the range
// where every integer is exact in f32, so host and device round alike).
bool fits(shlo::DType d, int64_t v) {
  using D = shlo::DType;
  auto within = [v](int64_t lo, int64_t hi) { return v >= lo && v <= hi; };
  switch (d) {
    case D::PRED:
      return within(0, 1);
    case D::S8:
      return within(-128, 127);
    case D::S16:
      return within(-32768, 32767);
    case D::S32:
      return within(INT32_MIN, INT32_MAX);
    case D::U8:
      return within(0, 255);
    case D::U16:
      return within(0, 65535);
    case D::U32:
      return within(0, UINT32_MAX);
    case D::F16:
    case D::BF16:
    case D::F32:
    case D::F64:
      return within(-(int64_t{1} << 24), int64_t{1} << 24);
    default:
      return false;
  }
}

}  // namespace

engine::Ref scalar_of(const at::Scalar& s, shlo::DType d) {
  // A complex op takes the scalar whole (f64 parts only for complex128).
  if (shlo::is_complex(d)) {
    if (s.isComplex()) return complex_scalar(s.toComplexDouble(), d);
    if (s.isFloatingPoint()) return complex_scalar(s.toDouble(), d);
  }
  // Floats travel as f32 unless the op is f64 (TPUs have no f64); a float
  // dtype takes the value rounded on the host exactly as a device conversion
  // from f32 would round it, and stays one cached operand (no conversion op
  // in the program).
  if (s.isFloatingPoint() || s.isComplex()) {
    double v = s.to<double>();
    if (shlo::is_float(d)) return engine::scalar(d, v);
    return cast(engine::scalar(shlo::DType::F32, v), d);
  }
  if (s.isBoolean()) return cast(engine::scalar(shlo::DType::PRED, s.toBool()), d);
  // Integers: directly in d when d holds them exactly (no conversion op),
  // else converted on the device (wrapping like the CPU's casts).
  int64_t v = s.toLong();
  if (d == shlo::DType::S64) return engine::scalar_i64(v);
  if (fits(d, v)) return engine::scalar(d, static_cast<double>(v));
  return cast(engine::scalar_i64(v), d);
}

}  // namespace tpu
