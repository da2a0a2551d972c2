// Native ops mixed precision needs on the tpu: GradScaler's unscale-and-
// check and loss-scale update (results stay on the device, no host sync, as
// on CUDA). PReLU, the one elementwise op on autocast's lower-precision
// list, is in ops/activation.
#include <ATen/TensorIterator.h>

#include "aten/kernels.h"
#include "aten/structured.h"
#include "aten/tensor.h"
#include "ops/amp/amp.h"

namespace tpu {

namespace {

void check_one_float(const at::Tensor& t, const char* name) {
  TORCH_CHECK(t.numel() == 1, name, " must be a 1-element tensor.");
  TORCH_CHECK(t.scalar_type() == at::kFloat, name, " must be a float tensor.");
}

void check_on_device(const at::Tensor& t, const at::Tensor& ref, const char* name) {
  TORCH_CHECK(t.device() == ref.device(), name, " must be on ", ref.device(), " (found ", t.device(), ")");
}

}  // namespace

void _amp_foreach_non_finite_check_and_unscale_(at::TensorList self, at::Tensor& found_inf,
                                                const at::Tensor& inv_scale) {
  check_one_float(inv_scale, "inv_scale");
  check_one_float(found_inf, "found_inf");
  check_on_device(inv_scale, found_inf, "inv_scale");
  if (self.empty()) return;
  std::vector<engine::Ref> in;
  std::vector<at::Tensor> outs;
  for (const at::Tensor& g : self) {
    check_on_device(g, found_inf, "every scaled gradient");
    TORCH_CHECK(g.layout() == at::kStrided, "one of scaled_grads was not a strided tensor.");
    TORCH_CHECK(at::isFloatingType(g.scalar_type()), "_amp_foreach_non_finite_check_and_unscale_: gradients must ",
                "be floating point, got ", g.scalar_type());
    in.push_back(read(g));
    outs.push_back(g);
  }
  in.push_back(read(found_inf));
  in.push_back(read(inv_scale));
  outs.push_back(found_inf);
  size_t n = self.size();
  legacy_write_all(outs, "amp_unscale:" + std::to_string(n), std::move(in),
                   [n](shlo::Builder& b, const std::vector<shlo::Value>& v) {
                     std::vector<shlo::Value> grads(v.begin(), v.begin() + n);
                     return ops::unscale_and_check(b, grads, v[n], v[n + 1]);
                   });
}

at::Tensor& _amp_update_scale_(at::Tensor& self, at::Tensor& growth_tracker, const at::Tensor& found_inf,
                               double growth_factor, double backoff_factor, int64_t growth_interval) {
  TORCH_CHECK(growth_tracker.numel() == 1, "growth_tracker must be a 1-element tensor.");
  TORCH_CHECK(growth_tracker.scalar_type() == at::kInt, "growth_tracker must be an int tensor.");
  check_one_float(self, "current_scale");
  check_one_float(found_inf, "found_inf");
  check_on_device(growth_tracker, self, "growth_tracker");
  check_on_device(found_inf, self, "found_inf");
  // Factors are f32 operands (the scale is f32; TPUs have no f64), values
  // never in the key.
  legacy_write_all({self, growth_tracker}, "amp_update_scale",
                   {read(self), read(growth_tracker), read(found_inf), engine::scalar(shlo::DType::F32, growth_factor),
                    engine::scalar(shlo::DType::F32, backoff_factor),
                    engine::scalar(shlo::DType::S32, static_cast<double>(growth_interval))},
                   [](shlo::Builder& b, const std::vector<shlo::Value>& v) {
                     return ops::update_scale(b, v[0], v[1], v[2], v[3], v[4], v[5]);
                   });
  return self;
}

}  // namespace tpu
