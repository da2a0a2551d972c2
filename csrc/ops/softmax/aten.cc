// softmax / log_softmax and their backward: ATen entry points and their
// registration. PyTorch's structured meta functions give the result's
// shape and dtype (half_to_float included); the lowering is softmax.h.
#include <ATen/ops/_log_softmax_backward_data_meta.h>
#include <ATen/ops/_log_softmax_meta.h>
#include <ATen/ops/_softmax_backward_data_meta.h>
#include <ATen/ops/_softmax_meta.h>

#include "aten/library.h"
#include "ops/common/aten_common.h"
#include "ops/softmax/softmax.h"

namespace tpu {

namespace {

using shlo::Builder;
using Vals = std::vector<shlo::Value>;

template <bool Log>
struct Softmax {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, bool) const {
    check_floating(self, Log ? "log_softmax" : "softmax");
    write_all(
        {out}, Log ? "log_softmax" : "softmax", {read(self)},
        [](Builder& b, const Vals& in, int64_t d, shlo::DType o) { return Vals{ops::softmax(b, in[0], d, Log, o)}; },
        c10::maybe_wrap_dim(dim, self.dim()), to_shlo(out.scalar_type()));
  }
};

template <bool Log>
struct SoftmaxBackward {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& grad, const at::Tensor& output, int64_t dim,
                  at::ScalarType) const {
    check_floating(grad, Log ? "log_softmax_backward" : "softmax_backward");
    write_all(
        {out}, Log ? "log_softmax_backward" : "softmax_backward", {read(grad), read(output)},
        [](Builder& b, const Vals& in, int64_t d, shlo::DType o) {
          return Vals{ops::softmax_backward(b, in[0], in[1], d, Log, o)};
        },
        c10::maybe_wrap_dim(dim, grad.dim()), to_shlo(out.scalar_type()));
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.structured<at::meta::structured__log_softmax>("_log_softmax", nullptr, "_log_softmax.out", Softmax<true>{});
  m.structured<at::meta::structured__log_softmax_backward_data>(
      "_log_softmax_backward_data", nullptr, "_log_softmax_backward_data.out", SoftmaxBackward<true>{});
  m.structured<at::meta::structured__softmax>("_softmax", nullptr, "_softmax.out", Softmax<false>{});
  m.structured<at::meta::structured__softmax_backward_data>("_softmax_backward_data", nullptr,
                                                            "_softmax_backward_data.out", SoftmaxBackward<false>{});
}

}  // namespace tpu
