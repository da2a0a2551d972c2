// Matrix products (mm, bmm, addmm, baddbmm, addbmm, mv, addmv, dot, vdot),
// linalg_cross and _grouped_mm (the MoE grouped expert matmul): ATen entry
// points and their registration. PyTorch's structured meta functions give
// shapes and dtypes where it has them; the lowerings are linalg.h and
// grouped_mm.h.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/addmm_meta.h>
#include <ATen/ops/addmv_meta.h>
#include <ATen/ops/baddbmm_meta.h>
#include <ATen/ops/bmm_meta.h>
#include <ATen/ops/linalg_cross_meta.h>
#include <ATen/ops/mm_meta.h>

#include "aten/library.h"
#include "engine/runtime.h"
#include "ops/elementwise/elementwise.h"
#include "ops/linalg/grouped_mm.h"
#include "ops/linalg/grouped_rows_host.h"
#include "ops/linalg/linalg.h"

namespace tpu {

namespace {

// XLA:CPU programs call the grouped row kernel natively (grouped_rows_host.h).
[[maybe_unused]] const int kGroupedRowsNative =
    engine::add_native_function({ops::kGroupedRowsTarget, &ops::grouped_rows_handler, &ops::grouped_rows_host_calls});

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

void check_product_dtype(const char* name, const at::Tensor& t) {
  TORCH_CHECK(t.scalar_type() != at::kBool, "\"", name, "\" not implemented for 'Bool'");
  (void)to_shlo(t.scalar_type());
}

// beta and alpha as 0-d operands in the dtype the product accumulates in.
std::vector<engine::Ref> beta_alpha(const at::Tensor& like, const at::Scalar& beta, const at::Scalar& alpha) {
  // Integral products take float beta / alpha truncated, as the CPU kernels do.
  shlo::DType acc = ops::accumulate_dtype(to_shlo(like.scalar_type()));
  return {scalar_of(beta, acc), scalar_of(alpha, acc)};
}

// `self` must broadcast to the product's shape (PyTorch's expand error).
void check_expandable(const at::Tensor& self, at::IntArrayRef to) {
  (void)at::inferExpandGeometry_dimvector(self.sizes(), self.strides(), to);
}

// XLA:CPU multiplies many rows by a matrix stored [in, out] faster than by
// the transpose of one stored [out, in], as nn.Linear keeps its weight and
// reads it (weight.t()): at 1 thread, 64 x 512 x 32000 in 13.6 ms against
// 19.5 and 64 x 512 x 1408 in 0.72 against 1.63; for a few rows the
// transpose is as fast or faster. In inference such a right operand is read
// from a dense copy (dense_copy: one per weight and content, none for an
// activation); a weight that trains changes each step and is read as it is.
constexpr int64_t kManyRows = 16;

// Where programs call native functions, an f32 product of up to this many
// rows (decoding) reads the weight in the native kernel's panel form instead
// (grouped_rows_host.h): it streams the weight once per 8 rows at a core's
// full rate, where XLA's product packs the weight at each call. At 1 thread
// (NPROC=1) it is the faster for every such row count: 64 x 512 x 32000 in
// 20 ms against 23, 8 rows in 3.2 against 10.8, 8 x 512 x 1408 in 0.10
// against 0.46.
constexpr int64_t kNativeRows = 64;

// [in, out] -> the panels of that matrix, [out / P, in, P] (a view).
at::Tensor panels_of(const at::Tensor& rhs) {
  const int64_t p = ops::kHostPanel;
  return rhs.view({rhs.size(0), rhs.size(1) / p, p}).permute({1, 0, 2});
}

engine::Ref read_right(const at::Tensor& lhs, const at::Tensor& rhs) {
  const bool transposed =
      rhs.dim() == 2 && rhs.size(0) > 1 && rhs.size(1) > 1 && rhs.stride(0) == 1 && rhs.stride(1) >= rhs.size(0);
  const bool trains = at::GradMode::is_enabled() && rhs.requires_grad();
  if (transposed && !trains && lhs.dim() == 2 && rhs.is_privateuseone() && platform().weight_copies) {
    const bool native = rhs.scalar_type() == at::kFloat && rhs.size(1) % ops::kHostPanel == 0 && lhs.size(0) > 0 &&
                        lhs.size(0) <= kNativeRows && native_functions();
    if (native || lhs.size(0) >= kManyRows) {
      if (std::optional<engine::Ref> copy = dense_copy(native ? panels_of(rhs) : rhs)) return *copy;
    }
  }
  return read(rhs);
}

// ---- mm, bmm, addmm, baddbmm, addmv (structured)

struct Mm {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, const at::Tensor& mat2) const {
    check_product_dtype("mm", self);
    TORCH_CHECK(self.scalar_type() == mat2.scalar_type(),
                "expected m1 and m2 to have the same dtype, but got: ", self.dtype(), " != ", mat2.dtype());
    write_all({out}, "mm", {read(self), read_right(self, mat2)},
              [](Builder& b, const Vals& v) { return Vals{ops::mm(b, v[0], v[1])}; });
  }
};

struct Bmm {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, const at::Tensor& mat2) const {
    check_product_dtype("bmm", self);
    TORCH_CHECK(self.scalar_type() == mat2.scalar_type(), "expected scalar type ", self.scalar_type(), " but found ",
                mat2.scalar_type());
    write_all({out}, "bmm", {read(self), read(mat2)},
              [](Builder& b, const Vals& v) { return Vals{ops::bmm(b, v[0], v[1])}; });
  }
};

struct Addmm {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,
                  const at::Scalar& beta, const at::Scalar& alpha) const {
    // The CPU copies self into out first, which refuses a partial overlap.
    if (!out.is_same(self)) at::assert_no_partial_overlap(out, self);
    check_product_dtype("addmm", m1);
    check_expandable(self, out.sizes());
    auto ba = beta_alpha(m1, beta, alpha);
    write_all({out}, "addmm", {read(self), read(m1), read_right(m1, m2), ba[0], ba[1]},
              [](Builder& b, const Vals& v) { return Vals{ops::addmm(b, v[0], v[1], v[2], v[3], v[4])}; });
  }
};

struct Baddbmm {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                  const at::Scalar& beta, const at::Scalar& alpha) const {
    check_product_dtype("baddbmm", b1);
    check_expandable(self, out.sizes());
    auto ba = beta_alpha(b1, beta, alpha);
    write_all({out}, "baddbmm", {read(self), read(b1), read(b2), ba[0], ba[1]},
              [](Builder& b, const Vals& v) { return Vals{ops::baddbmm(b, v[0], v[1], v[2], v[3], v[4])}; });
  }
};

struct Addmv {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                  const at::Scalar& beta, const at::Scalar& alpha) const {
    check_product_dtype("addmv", mat);
    auto ba = beta_alpha(mat, beta, alpha);
    write_all({out}, "addmv", {read(self), read(mat), read(vec), ba[0], ba[1]},
              [](Builder& b, const Vals& v) { return Vals{ops::addmv(b, v[0], v[1], v[2], v[3], v[4])}; });
  }
};

// ---- addbmm, mv, dot, vdot (no meta functions)

// addbmm has no meta function in PyTorch: its checks, with the CPU's messages.
std::vector<int64_t> addbmm_shape(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2) {
  TORCH_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(b1.size(0) == b2.size(0), "batch1 and batch2 must have same number of batches, got ", b1.size(0), " and ",
              b2.size(0));
  TORCH_CHECK(b1.size(2) == b2.size(1), "Incompatible matrix sizes for bmm (", b1.size(1), "x", b1.size(2), " and ",
              b2.size(1), "x", b2.size(2), ")");
  TORCH_CHECK(self.scalar_type() == b1.scalar_type() && b1.scalar_type() == b2.scalar_type(),
              "expected all tensors to have the same dtype, but got ", self.scalar_type(), ", ", b1.scalar_type(),
              " and ", b2.scalar_type());
  check_product_dtype("addbmm", b1);
  std::vector<int64_t> shape{b1.size(1), b2.size(2)};
  check_expandable(self, shape);
  return shape;
}

void addbmm_into(const at::Tensor& out, const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  auto ba = beta_alpha(b1, beta, alpha);
  write_all({out}, "addbmm", {read(self), read(b1), read(b2), ba[0], ba[1]},
            [](Builder& b, const Vals& v) { return Vals{ops::addbmm(b, v[0], v[1], v[2], v[3], v[4])}; });
}

void check_out(const at::Tensor& out, const at::Tensor& like, at::IntArrayRef shape) {
  TORCH_CHECK(out.scalar_type() == like.scalar_type(), "Expected out tensor to have dtype ", like.scalar_type(),
              ", but got ", out.scalar_type(), " instead");
  TORCH_CHECK(out.device() == like.device(), "Expected out tensor to have device ", like.device(), ", but got ",
              out.device(), " instead");
  at::native::resize_output(out, shape);
}

void mv_check(const at::Tensor& self, const at::Tensor& vec) {
  TORCH_CHECK(self.dim() == 2 && vec.dim() == 1, "vector + matrix @ vector expected, got 1, ", self.dim(), ", ",
              vec.dim());
  TORCH_CHECK(self.size(1) == vec.size(0), "size mismatch, got input (", self.size(0), "), mat (", self.size(0), "x",
              self.size(1), "), vec (", vec.size(0), ")");
  TORCH_CHECK(self.scalar_type() == vec.scalar_type(), "addmv input tensors must have the same dtype, but got ",
              self.scalar_type(), ", ", self.scalar_type(), ", and ", vec.scalar_type());
  check_product_dtype("mv", self);
}

void mv_into(const at::Tensor& out, const at::Tensor& self, const at::Tensor& vec) {
  write_all({out}, "mv", {read(self), read(vec)},
            [](Builder& b, const Vals& v) { return Vals{ops::mv(b, v[0], v[1])}; });
}

void dot_check(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(), "D and ", other.dim(),
              "D tensors");
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), "dot : expected both vectors to have same dtype, but found ",
              self.scalar_type(), " and ", other.scalar_type());
  TORCH_CHECK(self.numel() == other.numel(), "inconsistent tensor size, expected tensor [", self.numel(), "] and src [",
              other.numel(), "] to have the same number of elements, but got ", self.numel(), " and ", other.numel(),
              " elements respectively");
  check_product_dtype("dot", self);
}

void dot_into(const at::Tensor& out, const at::Tensor& self, const at::Tensor& other, bool conj_self) {
  write_all(
      {out}, conj_self ? "vdot" : "dot", {read(self), read(other)},
      [](Builder& b, const Vals& v, bool conj) {
        Value x = v[0];
        if (conj) x = ops::conj(b, x);
        return Vals{ops::dot(b, x, v[1])};
      },
      conj_self);
}

at::Tensor addbmm(const at::Tensor& s, const at::Tensor& b1, const at::Tensor& b2, const at::Scalar& beta,
                  const at::Scalar& alpha) {
  at::Tensor out = empty(addbmm_shape(s, b1, b2), b1.scalar_type(), common_device({&s, &b1, &b2}));
  addbmm_into(out, s, b1, b2, beta, alpha);
  return out;
}
at::Tensor& addbmm_(at::Tensor& s, const at::Tensor& b1, const at::Tensor& b2, const at::Scalar& beta,
                    const at::Scalar& alpha) {
  auto shape = addbmm_shape(s, b1, b2);
  TORCH_CHECK(s.sizes() == at::IntArrayRef(shape), "output with shape ", s.sizes(),
              " doesn't match the broadcast shape ", at::IntArrayRef(shape));
  addbmm_into(s, s, b1, b2, beta, alpha);
  return s;
}
at::Tensor& addbmm_out(const at::Tensor& s, const at::Tensor& b1, const at::Tensor& b2, const at::Scalar& beta,
                       const at::Scalar& alpha, at::Tensor& out) {
  auto shape = addbmm_shape(s, b1, b2);
  check_out(out, b1, shape);
  addbmm_into(out, s, b1, b2, beta, alpha);
  return out;
}

at::Tensor mv(const at::Tensor& s, const at::Tensor& vec) {
  mv_check(s, vec);
  at::Tensor out = empty({s.size(0)}, s.scalar_type(), common_device({&s, &vec}));
  mv_into(out, s, vec);
  return out;
}
at::Tensor& mv_out(const at::Tensor& s, const at::Tensor& vec, at::Tensor& out) {
  mv_check(s, vec);
  check_out(out, s, {s.size(0)});
  mv_into(out, s, vec);
  return out;
}

at::Tensor dot(const at::Tensor& s, const at::Tensor& o) {
  dot_check(s, o);
  at::Tensor out = empty({}, s.scalar_type(), common_device({&s, &o}));
  dot_into(out, s, o, false);
  return out;
}
at::Tensor& dot_out(const at::Tensor& s, const at::Tensor& o, at::Tensor& out) {
  dot_check(s, o);
  check_out(out, s, {});
  dot_into(out, s, o, false);
  return out;
}
at::Tensor vdot(const at::Tensor& s, const at::Tensor& o) {
  dot_check(s, o);
  at::Tensor out = empty({}, s.scalar_type(), common_device({&s, &o}));
  dot_into(out, s, o, s.is_complex());
  return out;
}
at::Tensor& vdot_out(const at::Tensor& s, const at::Tensor& o, at::Tensor& out) {
  dot_check(s, o);
  check_out(out, s, {});
  dot_into(out, s, o, s.is_complex());
  return out;
}

// ---- linalg_cross

struct Cross {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other, int64_t dim) const {
    TORCH_CHECK(self.scalar_type() == other.scalar_type(),
                "linalg.cross: expected input and other to have the same "
                "dtype, but got ",
                self.scalar_type(), " and ", other.scalar_type());
    int64_t d = at::maybe_wrap_dim(dim, static_cast<int64_t>(out.dim()));
    shlo::DType t = to_shlo(out.scalar_type());
    write_all(
        {out}, "linalg_cross", {read_as(self, t), read_as(other, t)},
        [](Builder& b, const Vals& in, int64_t d, const shlo::Shape& shape) {
          return Vals{ops::cross(b, b.broadcast_to(in[0], shape), b.broadcast_to(in[1], shape), d)};
        },
        d, shape_of(out.sizes()));
  }
};

// ---- _grouped_mm

at::Tensor _grouped_mm(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& offs,
                       const std::optional<at::Tensor>& bias, std::optional<at::ScalarType> out_dtype) {
  TORCH_CHECK((a.dim() == 2 || a.dim() == 3) && (b.dim() == 2 || b.dim() == 3),
              "Multiplicands must be 2D or 3D but got mat_a.dim()=", a.dim(), " and mat_b.dim()=", b.dim());
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "grouped_mm: expected mat_a and mat_b of the same dtype, got ",
              a.scalar_type(), " and ", b.scalar_type());
  TORCH_CHECK(at::isFloatingType(a.scalar_type()) && a.scalar_type() != at::kDouble, "grouped_mm: unsupported dtype ",
              a.scalar_type(), " on the tpu");
  TORCH_CHECK(a.size(-1) == b.size(-2), "contraction dimension of mat_a and mat_b must match");
  TORCH_CHECK(!(bias.has_value() && bias->defined()), "grouped_mm: bias is not supported");
  at::ScalarType od = out_dtype.value_or(a.scalar_type());
  TORCH_CHECK(od == a.scalar_type() || od == at::kFloat, "grouped_mm: out_dtype must be the input dtype or float32");
  bool has_offs = offs.has_value() && offs->defined();
  shlo::Shape out;
  if (a.dim() == 3 && b.dim() == 3) {
    TORCH_CHECK(!has_offs, "grouped_mm: offs must not be given for 3D x 3D inputs");
    TORCH_CHECK(a.size(0) == b.size(0), "batched dimension has to match");
    out = {a.size(0), a.size(1), b.size(2)};
  } else {
    TORCH_CHECK(has_offs, "grouped_mm: offs is required when either input is 2D");
    TORCH_CHECK(offs->dim() == 1 && offs->scalar_type() == at::kInt, "grouped_mm: offs must be a 1D int32 tensor");
    if (a.dim() == 2 && b.dim() == 2) {
      out = {offs->size(0), a.size(0), b.size(1)};
    } else if (a.dim() == 2) {
      TORCH_CHECK(offs->size(0) == b.size(0), "matrix batch sizes have to match");
      out = {a.size(0), b.size(2)};
    } else {
      TORCH_CHECK(offs->size(0) == a.size(0), "matrix batch sizes have to match");
      out = {a.size(1), b.size(1)};
    }
  }
  std::vector<engine::Ref> in{read(a), read(b)};
  if (has_offs) in.push_back(read(*offs));
  shlo::DType o = to_shlo(od);
  engine::Ref r = op1(
      "grouped_mm", std::move(in), shlo::Type{o, out},
      [](Builder& bl, const Vals& v, bool has_offs, shlo::DType o) {
        return Vals{ops::grouped_mm(bl, v[0], v[1], has_offs ? &v[2] : nullptr, o)};
      },
      has_offs, o);
  return wrap(r, a.device());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("_grouped_mm", &_grouped_mm);
  m.impl("addbmm", &addbmm);
  m.impl("addbmm.out", &addbmm_out);
  m.impl("addbmm_", &addbmm_);
  m.structured<at::meta::structured_addmm>("addmm", "addmm_", "addmm.out", Addmm{});
  m.structured<at::meta::structured_addmv>("addmv", "addmv_", "addmv.out", Addmv{});
  m.structured<at::meta::structured_baddbmm>("baddbmm", "baddbmm_", "baddbmm.out", Baddbmm{});
  m.structured<at::meta::structured_bmm>("bmm", nullptr, "bmm.out", Bmm{});
  m.impl("dot", &dot);
  m.impl("dot.out", &dot_out);
  m.structured<at::meta::structured_linalg_cross>("linalg_cross", nullptr, "linalg_cross.out", Cross{});
  m.structured<at::meta::structured_mm>("mm", nullptr, "mm.out", Mm{});
  m.impl("mv", &mv);
  m.impl("mv.out", &mv_out);
  m.impl("vdot", &vdot);
  m.impl("vdot.out", &vdot_out);
}

}  // namespace tpu
