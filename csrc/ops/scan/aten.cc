// Scans: cumsum, cumprod, logcumsumexp and cummax / cummin (through their
// _cummax_helper / _cummin_helper). ATen entry points and their
// registration; the lowerings are scan.h.
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/cumprod_meta.h>
#include <ATen/ops/cumsum_meta.h>

#include "aten/library.h"
#include "ops/common/aten_common.h"
#include "ops/scan/scan.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

// `name`: the op's name (a literal); kind selects the lowering.
void scan_into(const at::Tensor& out, const at::Tensor& self, int64_t dim, ops::Scan kind, const char* name) {
  int64_t d = c10::maybe_wrap_dim(dim, self.dim());  // 0-d: 0 (the lowering treats it as [1])
  write_all(
      {out}, name, {read(self)},
      [](Builder& b, const Vals& in, ops::Scan k, int64_t dd, shlo::DType o) {
        return Vals{ops::scan(b, in[0], k, dd, o)};
      },
      kind, d, to_shlo(out.scalar_type()));
}

template <ops::Scan Kind>
struct Cum {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, std::optional<at::ScalarType>) const {
    scan_into(out, self, dim, Kind, Kind == ops::Scan::Sum ? "cumsum" : "cumprod");
  }
};
using Cumsum = Cum<ops::Scan::Sum>;
using Cumprod = Cum<ops::Scan::Prod>;

// The CPU's scan kernels walk out and self with a TensorIterator, which
// refuses any overlap between them but a full one; it checks before the
// meta function runs, hence these out= wrappers.
void check_scan_out_overlap(const at::Tensor& self, const at::Tensor& out) {
  at::assert_no_internal_overlap(out);
  if (!out.is_same(self)) at::assert_no_partial_overlap(out, self);
}
at::Tensor& cumsum_out(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  check_scan_out_overlap(self, out);
  return out_variant<at::meta::structured_cumsum>(out, Cumsum{}, self, dim, dtype);
}
at::Tensor& cumprod_out(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  check_scan_out_overlap(self, out);
  return out_variant<at::meta::structured_cumprod>(out, Cumprod{}, self, dim, dtype);
}

void check_logcumsumexp(const at::Tensor& self) {
  if (!self.is_complex()) check_floating(self, "logcumsumexp_tpu");
}
at::Tensor _logcumsumexp(const at::Tensor& self, int64_t dim) {
  check_logcumsumexp(self);
  at::Tensor out = empty(self.sizes(), self.scalar_type(), self.device());
  scan_into(out, self, dim, ops::Scan::LogAddExp, "logcumsumexp");
  return out;
}
at::Tensor& _logcumsumexp_out(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  check_logcumsumexp(self);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "logcumsumexp: Expected out tensor to have dtype ",
              self.scalar_type(), ", but got ", out.scalar_type(), " instead");
  at::native::resize_output(out, self.sizes());
  scan_into(out, self, dim, ops::Scan::LogAddExp, "logcumsumexp");
  return out;
}

// cummax / cummin's values and indices; the composite allocates both.
template <bool Max>
void cum_extreme_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  int64_t d = self.dim() == 0 ? 0 : dim;
  write_all(
      {values, indices}, Max ? "cummax" : "cummin", {read(self)},
      [](Builder& b, const Vals& in, int64_t dd) {
        auto [v, i] = ops::cum_extreme(b, in[0], dd, Max);
        return Vals{v, i};
      },
      d);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("_cummax_helper", &cum_extreme_helper<true>);
  m.impl("_cummin_helper", &cum_extreme_helper<false>);
  m.impl("_logcumsumexp", &_logcumsumexp);
  m.impl("_logcumsumexp.out", &_logcumsumexp_out);
  m.structured<at::meta::structured_cumprod>("cumprod", "cumprod_", nullptr, Cumprod{});
  m.impl("cumprod.out", &cumprod_out);
  m.structured<at::meta::structured_cumsum>("cumsum", "cumsum_", nullptr, Cumsum{});
  m.impl("cumsum.out", &cumsum_out);
}

}  // namespace tpu
