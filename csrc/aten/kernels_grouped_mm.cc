// _grouped_mm (the MoE grouped expert matmul) as one native node.
#include "aten/kernels.h"
#include "aten/tensor.h"
#include "ops/linalg/grouped_mm.h"

namespace tpu {

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
  engine::Ref r =
      legacy_op("grouped_mm", std::move(in), shlo::Type{o, out},
                [has_offs, o](shlo::Builder& bl, const std::vector<shlo::Value>& v) {
                  return std::vector<shlo::Value>{ops::grouped_mm(bl, v[0], v[1], has_offs ? &v[2] : nullptr, o)};
                });
  return wrap(r, a.device());
}

}  // namespace tpu
