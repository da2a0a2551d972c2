// Fills (fill_, zero_), ranges (arange, linspace, logspace), eye and
// tril_indices / triu_indices: ATen entry points and their registration.
// The range lowerings are factories.h; their parameters are runtime
// operands, rounded on the host the way PyTorch's CPU kernels round them.
#include <ATen/AccumulateType.h>
#include <ATen/Dispatch.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/RangeUtils.h>

#include <cmath>

#include "aten/device.h"
#include "aten/library.h"
#include "aten/tensor.h"
#include "ops/factories/factories.h"

namespace tpu {

namespace {

using Vals = std::vector<shlo::Value>;

// Resizes a range factory's out= tensor to n elements, warning like PyTorch
// when a non-empty out had another size.
void resize_range_out(at::Tensor& out, int64_t n) {
  if (out.numel() == n) {
    // As the CPU's kernels: each element is written once (an expanded
    // out would get one value for many).
    at::assert_no_internal_overlap(out);
    return;
  }
  if (out.numel() > 0)
    TORCH_WARN("The number of elements in the out tensor of shape ", out.sizes(), " is ", out.numel(),
               " which does not match the computed number of elements ", n,
               ". Note that this may occur as a result of rounding error. "
               "The out tensor will be resized to a tensor of shape (",
               n, ",).");
  out.resize_({n});
}

// Stores a range's 1-D value into out, which PyTorch lets keep another
// shape of the same numel (filled in row-major order).
void write_range(const at::Tensor& out, engine::Ref v) {
  if (out.dim() != 1) {
    shlo::Shape shape = shape_of(out.sizes());
    v = op1(
        "range_reshape", {v}, shlo::Type{v.type().dtype, shape},
        [](shlo::Builder& b, const Vals& in, const shlo::Shape& shape) { return Vals{b.reshape(in[0], shape)}; },
        shape);
  }
  write(out, v);
}

// The (start, end, step) operands of linspace / logspace, rounded the way
// PyTorch's CPU kernels round them, in the dtype the lowering computes in.
struct RangeParams {
  engine::Ref start, end, step;
};

engine::Ref range_scalar(double v, shlo::DType c) { return engine::scalar(c, v); }

// Host side of tril_indices / triu_indices: the index pairs are a pure
// function of (row, col, offset), so they are computed here and uploaded.
at::Tensor tri_indices(int64_t row, int64_t col, int64_t offset, bool lower, std::optional<at::ScalarType> dtype,
                       std::optional<at::Layout> layout, std::optional<at::Device> device) {
  TORCH_CHECK(row >= 0, "row must be non-negative, got", row);
  TORCH_CHECK(col >= 0, "col must be non-negative, got", col);
  if (layout.has_value()) TORCH_CHECK(*layout == at::kStrided, "only support layout=torch.strided, got", *layout);
  at::ScalarType st = dtype.value_or(at::kLong);
  TORCH_CHECK(st == at::kLong || st == at::kInt, "\"", lower ? "tril_indices" : "triu_indices",
              "\" not implemented for '", at::toString(st), "'");
  std::vector<int64_t> rs, cs;
  for (int64_t r = 0; r < row; ++r) {
    int64_t lo = lower ? 0 : std::max<int64_t>(0, r + offset);
    int64_t hi = lower ? std::min<int64_t>(col, std::max<int64_t>(0, r + offset + 1)) : col;
    for (int64_t c = lo; c < hi; ++c) {
      rs.push_back(r);
      cs.push_back(c);
    }
  }
  int64_t n = static_cast<int64_t>(rs.size());
  rs.insert(rs.end(), cs.begin(), cs.end());
  c10::Device dev = device_or_current(device);
  at::Tensor out = at::empty({2, n}, at::TensorOptions().dtype(st).device(dev));
  if (n == 0) return out;
  engine::Ref v = engine::from_host(rs.data(), shlo::Type{shlo::DType::S64, {2, n}}, dev.index());
  write(out, v);
  return out;
}

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  shlo::DType d = to_shlo(self.scalar_type());
  engine::Ref s;
  if (value.isComplex()) {
    c10::complex<double> z = value.toComplexDouble();
    if (shlo::is_complex(d)) {
      s = complex_scalar(z, d);
    } else {
      // Like the CPU: a real tensor takes a complex value only without an imaginary part.
      TORCH_CHECK(z.imag() == 0, "value cannot be converted to type ", self.scalar_type(), " without overflow");
      s = engine::scalar(wide_float(), z.real());
    }
  } else {
    s = value.isFloatingPoint() ? engine::scalar(wide_float(), value.toDouble())
        : value.isBoolean()     ? engine::scalar(shlo::DType::PRED, value.toBool())
                                : engine::scalar_i64(value.toLong());
  }
  write(self, broadcast(cast(s, d), shape_of(self.sizes())));
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
  write(self, broadcast(cast(read(value), to_shlo(self.scalar_type())), shape_of(self.sizes())));
  return self;
}

at::Tensor& zero_(at::Tensor& self) { return fill_scalar(self, 0); }

at::Tensor& arange_start_out(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step, at::Tensor& out) {
  int64_t n = 0;
  engine::Ref first, stride;
  // Same dtype coverage, bounds checks and length as PyTorch. Values are
  // start + step * i in int64 for integer results, f64 for f64 and f32
  // otherwise (like CUDA; PyTorch's CPU kernel uses f64 for f32 results, so
  // non-integral float steps may differ from it in the last bit).
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "arange_tpu", [&] {
    n = at::native::compute_arange_size<scalar_t>(start, end, step);
    using acc_t = at::acc_type<scalar_t, false>;
    if constexpr (std::is_integral_v<scalar_t>) {
      first = engine::scalar_i64(start.to<int64_t>());
      stride = engine::scalar_i64(step.to<int64_t>());
    } else {
      shlo::DType c = std::is_same_v<scalar_t, double> ? shlo::DType::F64 : shlo::DType::F32;
      first = engine::scalar(c, static_cast<double>(start.to<acc_t>()));
      stride = engine::scalar(c, static_cast<double>(step.to<acc_t>()));
    }
  });
  resize_range_out(out, n);
  if (n == 0) return out;
  shlo::DType d = to_shlo(out.scalar_type());
  write_range(out, op1(
                       "arange", {first, stride}, shlo::Type{d, {n}},
                       [](shlo::Builder& b, const Vals& in, int64_t n, shlo::DType d) {
                         return Vals{ops::arange(b, in[0], in[1], n, d)};
                       },
                       n, d));
  return out;
}

at::Tensor& linspace_out(const at::Scalar& start, const at::Scalar& end, int64_t steps, at::Tensor& out) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  resize_range_out(out, steps);
  if (steps == 0) return out;
  if (steps == 1) return out.fill_(start);
  if (out.is_complex()) {
    // A complex step times a real index scales both parts alike: each part
    // is the real linspace between the ends' parts.
    const c10::complex<double> s = start.toComplexDouble(), e = end.toComplexDouble();
    at::TensorOptions part = out.options().dtype(at::toRealValueType(out.scalar_type()));
    at::Tensor re = at::empty({steps}, part), im = at::empty({steps}, part);
    at::linspace_out(re, s.real(), e.real(), steps);
    at::linspace_out(im, s.imag(), e.imag(), steps);
    // out may have any shape of `steps` elements, filled in its index order.
    at::Tensor parts = at::view_as_real(out);
    parts.select(-1, 0).copy_(re.view(out.sizes()));
    parts.select(-1, 1).copy_(im.view(out.sizes()));
    return out;
  }
  RangeParams p;
  // Mirrors PyTorch's CPU kernel: start and end in the result type, the step
  // in that type too for floats (f64 for integers).
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "linspace_tpu", [&] {
    using step_t = std::conditional_t<std::is_integral_v<scalar_t>, double, scalar_t>;
    const scalar_t s = start.to<scalar_t>();
    const scalar_t e = end.to<scalar_t>();
    const step_t step = (static_cast<step_t>(e) - static_cast<step_t>(s)) / (steps - 1);
    // f32 results compute in f64 (see ops::linspace), half types in f32.
    shlo::DType c =
        std::is_same_v<scalar_t, at::Half> || std::is_same_v<scalar_t, at::BFloat16> ? shlo::DType::F32 : wide_float();
    p = {range_scalar(static_cast<double>(s), c), range_scalar(static_cast<double>(e), c),
         range_scalar(static_cast<double>(step), c)};
  });
  shlo::DType d = to_shlo(out.scalar_type());
  write_range(out, op1(
                       "linspace", {p.start, p.end, p.step}, shlo::Type{d, {steps}},
                       [](shlo::Builder& b, const Vals& in, int64_t steps, shlo::DType d) {
                         return Vals{ops::linspace(b, in[0], in[1], in[2], steps, d)};
                       },
                       steps, d));
  return out;
}

at::Tensor& logspace_out(const at::Scalar& start, const at::Scalar& end, int64_t steps, double base, at::Tensor& out) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  resize_range_out(out, steps);
  if (steps == 0) return out;
  if (steps == 1) return out.fill_(std::pow(base, start.to<double>()));
  if (out.is_complex()) {
    // As the CPU computes it: the exponents are the linspace between the
    // ends in out's dtype, raised in double precision.
    at::Tensor e = at::linspace(start, end, steps, out.options());
    at::ScalarType wide = f64_supported() ? at::kComplexDouble : at::kComplexFloat;
    out.copy_(at::pow(base, e.to(wide)).view(out.sizes()));
    return out;
  }
  RangeParams p;
  shlo::DType d = to_shlo(out.scalar_type());
  shlo::DType c = d == shlo::DType::F64 || !shlo::is_float(d) ? wide_float() : shlo::DType::F32;
  // Mirrors PyTorch's CPU kernel: start and end in the result type, the
  // exponent step in f64.
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "logspace_tpu", [&] {
    const scalar_t s = start.to<scalar_t>();
    const scalar_t e = end.to<scalar_t>();
    const double step = static_cast<double>(e - s) / (steps - 1);
    p = {range_scalar(static_cast<double>(s), c), range_scalar(static_cast<double>(e), c), range_scalar(step, c)};
  });
  write_range(out, op1(
                       "logspace", {p.start, p.end, p.step, range_scalar(base, c)}, shlo::Type{d, {steps}},
                       [](shlo::Builder& b, const Vals& in, int64_t steps, shlo::DType d) {
                         return Vals{ops::logspace(b, in[0], in[1], in[2], in[3], steps, d)};
                       },
                       steps, d));
  return out;
}

at::Tensor& eye_m_out(c10::SymInt n_, c10::SymInt m_, at::Tensor& out) {
  int64_t n = n_.guard_int(__FILE__, __LINE__), m = m_.guard_int(__FILE__, __LINE__);
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
  // Only a size change may restride out (a same-shaped view is written through).
  if (out.sizes() != at::IntArrayRef({n, m})) out.resize_({n, m});
  if (out.numel() == 0) return out;
  shlo::DType d = to_shlo(out.scalar_type());
  write(out, op1(
                 "eye", {}, shlo::Type{d, {n, m}},
                 [](shlo::Builder& b, const Vals&, int64_t n, int64_t m, shlo::DType d) {
                   return Vals{ops::eye(b, n, m, d)};
                 },
                 n, m, d));
  return out;
}

at::Tensor& eye_out(c10::SymInt n, at::Tensor& out) { return eye_m_out(n, n, out); }

at::Tensor tril_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout, std::optional<at::Device> device,
                        std::optional<bool> pin_memory) {
  return tri_indices(row, col, offset, true, dtype, layout, device);
}

at::Tensor triu_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout> layout, std::optional<at::Device> device,
                        std::optional<bool> pin_memory) {
  return tri_indices(row, col, offset, false, dtype, layout, device);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("arange.start_out", &arange_start_out);
  m.impl("eye.m_out", &eye_m_out);
  m.impl("eye.out", &eye_out);
  m.impl("fill_.Scalar", &fill_scalar);
  m.impl("fill_.Tensor", &fill_tensor);
  m.impl("linspace.out", &linspace_out);
  m.impl("logspace.out", &logspace_out);
  m.impl("tril_indices", &tril_indices);
  m.impl("triu_indices", &triu_indices);
  m.impl("zero_", &zero_);
}

}  // namespace tpu
