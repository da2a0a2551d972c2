// torch.fft's native ops (_fft_c2c, _fft_r2c, _fft_c2r): ATen entry points
// and their registration. The lowering is fft.h.
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>

#include <algorithm>

#include "aten/library.h"
#include "ops/common/aten_common.h"
#include "ops/fft/fft.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

// Wrapped dims, in the caller's order (r2c / c2r treat the last one specially).
std::vector<int64_t> fft_dims(const at::Tensor& self, at::IntArrayRef dim) {
  std::vector<int64_t> dims;
  for (int64_t d : dim) {
    int64_t w = at::maybe_wrap_dim(d, self.dim());
    TORCH_CHECK(std::find(dims.begin(), dims.end(), w) == dims.end(), "FFT dims must be unique");
    dims.push_back(w);
  }
  return dims;
}

void check_norm(int64_t normalization) {
  TORCH_CHECK(normalization >= 0 && normalization <= 2, "Invalid normalization mode: ", normalization);
}

engine::Ref fft_c2c_ref(const at::Tensor& self, at::IntArrayRef dim, int64_t norm, bool forward) {
  TORCH_CHECK(self.is_complex(), "_fft_c2c expects a complex input tensor, but got ", self.scalar_type());
  check_norm(norm);
  std::vector<int64_t> dims = fft_dims(self, dim);
  return op1(
      "fft_c2c", {read(self)}, type_of(self),
      [](Builder& b, const Vals& in, const std::vector<int64_t>& dims, int64_t norm, bool forward) {
        return Vals{ops::fft_c2c(b, in[0], dims, norm, forward)};
      },
      dims, norm, forward);
}

engine::Ref fft_r2c_ref(const at::Tensor& self, at::IntArrayRef dim, int64_t norm, bool onesided) {
  TORCH_CHECK(self.is_floating_point(), "_fft_r2c expects a floating point input tensor, but got ", self.scalar_type());
  TORCH_CHECK(self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble, "Unsupported dtype ",
              self.scalar_type());
  check_norm(norm);
  std::vector<int64_t> dims = fft_dims(self, dim);
  TORCH_CHECK(!dims.empty(), "_fft_r2c expects at least one dim");
  shlo::Type t = type_of(self);
  t.dtype = self.scalar_type() == at::kDouble ? shlo::DType::C128 : shlo::DType::C64;
  if (onesided) t.shape[dims.back()] = t.shape[dims.back()] / 2 + 1;
  return op1(
      "fft_r2c", {read(self)}, t,
      [](Builder& b, const Vals& in, const std::vector<int64_t>& dims, int64_t norm, bool onesided) {
        return Vals{ops::fft_r2c(b, in[0], dims, norm, onesided)};
      },
      dims, norm, onesided);
}

engine::Ref fft_c2r_ref(const at::Tensor& self, at::IntArrayRef dim, int64_t norm, int64_t last_dim_size) {
  TORCH_CHECK(self.is_complex(), "_fft_c2r expects a complex input tensor, but got ", self.scalar_type());
  check_norm(norm);
  std::vector<int64_t> dims = fft_dims(self, dim);
  TORCH_CHECK(!dims.empty(), "_fft_c2r expects at least one dim");
  TORCH_CHECK(last_dim_size >= 1, "Invalid number of data points (", last_dim_size, ") specified");
  shlo::Type t = type_of(self);
  t.dtype = self.scalar_type() == at::kComplexDouble ? shlo::DType::F64 : shlo::DType::F32;
  t.shape[dims.back()] = last_dim_size;
  return op1(
      "fft_c2r", {read(self)}, t,
      [](Builder& b, const Vals& in, const std::vector<int64_t>& dims, int64_t norm, int64_t last_dim_size) {
        return Vals{ops::fft_c2r(b, in[0], dims, norm, last_dim_size)};
      },
      dims, norm, last_dim_size);
}

at::Tensor _fft_c2c(const at::Tensor& self, c10::SymIntArrayRef dim, int64_t normalization, bool forward) {
  return wrap(fft_c2c_ref(self, C10_AS_INTARRAYREF_SLOW(dim), normalization, forward), self.device());
}
at::Tensor& _fft_c2c_out(const at::Tensor& self, c10::SymIntArrayRef dim, int64_t normalization, bool forward,
                         at::Tensor& out) {
  return store_out(out, fft_c2c_ref(self, C10_AS_INTARRAYREF_SLOW(dim), normalization, forward));
}
at::Tensor _fft_r2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, bool onesided) {
  return wrap(fft_r2c_ref(self, dim, normalization, onesided), self.device());
}
at::Tensor& _fft_r2c_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, bool onesided,
                         at::Tensor& out) {
  return store_out(out, fft_r2c_ref(self, dim, normalization, onesided));
}
at::Tensor _fft_c2r(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, c10::SymInt last_dim_size) {
  return wrap(fft_c2r_ref(self, dim, normalization, last_dim_size.expect_int()), self.device());
}
at::Tensor& _fft_c2r_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization, c10::SymInt last_dim_size,
                         at::Tensor& out) {
  return store_out(out, fft_c2r_ref(self, dim, normalization, last_dim_size.expect_int()));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("_fft_c2c", &_fft_c2c);
  m.impl("_fft_c2c.out", &_fft_c2c_out);
  m.impl("_fft_c2r", &_fft_c2r);
  m.impl("_fft_c2r.out", &_fft_c2r_out);
  m.impl("_fft_r2c", &_fft_r2c);
  m.impl("_fft_r2c.out", &_fft_r2c_out);
}

}  // namespace tpu
