// Kernels added to raise OpInfo conformance (the `coverage` branch): ops that
// used to run through the CPU fallback. Lowerings live in ops/coverage.h.
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>

#include "aten/kernels.h"
#include "aten/structured.h"
#include "ops/coverage.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

std::string ints(at::IntArrayRef v) {
  std::string s = "[";
  for (int64_t x : v) s += std::to_string(x) + ",";
  return s + "]";
}

// Stores `v` into out (resized to v's shape first, as out= ops do).
at::Tensor& store_out(at::Tensor& out, engine::Ref v) {
  at::native::resize_output(out, v.type().shape);
  write(out, std::move(v));
  return out;
}

// ---- FFT

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
  return op("fft_c2c" + ints(dims) + std::to_string(norm) + (forward ? "f" : "b"), {read(self)}, type_of(self),
            [dims, norm, forward](Builder& b, const Vals& in) {
              return Vals{ops::fft_c2c(b, in[0], dims, norm, forward)};
            });
}

engine::Ref fft_r2c_ref(const at::Tensor& self, at::IntArrayRef dim, int64_t norm, bool onesided) {
  TORCH_CHECK(self.is_floating_point(), "_fft_r2c expects a floating point input tensor, but got ",
              self.scalar_type());
  TORCH_CHECK(self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble,
              "Unsupported dtype ", self.scalar_type());
  check_norm(norm);
  std::vector<int64_t> dims = fft_dims(self, dim);
  TORCH_CHECK(!dims.empty(), "_fft_r2c expects at least one dim");
  shlo::Type t = type_of(self);
  t.dtype = self.scalar_type() == at::kDouble ? shlo::DType::C128 : shlo::DType::C64;
  if (onesided) t.shape[dims.back()] = t.shape[dims.back()] / 2 + 1;
  return op("fft_r2c" + ints(dims) + std::to_string(norm) + (onesided ? "o" : "t"), {read(self)}, t,
            [dims, norm, onesided](Builder& b, const Vals& in) {
              return Vals{ops::fft_r2c(b, in[0], dims, norm, onesided)};
            });
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
  return op("fft_c2r" + ints(dims) + std::to_string(norm) + ":" + std::to_string(last_dim_size), {read(self)}, t,
            [dims, norm, last_dim_size](Builder& b, const Vals& in) {
              return Vals{ops::fft_c2r(b, in[0], dims, norm, last_dim_size)};
            });
}

// ---- conjugation

engine::Ref conj_ref(const at::Tensor& self) {
  engine::Ref v = read(self);
  if (!self.is_complex()) return v;
  return op("conj_physical", {v}, type_of(self), [](Builder& b, const Vals& in) { return Vals{ops::conj(b, in[0])}; });
}

}  // namespace

namespace cov {

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
at::Tensor& _fft_c2r_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                         c10::SymInt last_dim_size, at::Tensor& out) {
  return store_out(out, fft_c2r_ref(self, dim, normalization, last_dim_size.expect_int()));
}

at::Tensor conj_physical(const at::Tensor& self) { return wrap(conj_ref(self), self.device()); }
at::Tensor& conj_physical_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "conj_physical: expected out dtype ", self.scalar_type(),
              ", got ", out.scalar_type());
  return store_out(out, conj_ref(self));
}
at::Tensor& conj_physical_(at::Tensor& self) {
  if (self.is_complex()) write(self, conj_ref(self));
  return self;
}

}  // namespace cov

}  // namespace tpu
