// Losses: nll_loss / nll_loss2d, mse_loss, huber_loss, smooth_l1_loss and
// binary_cross_entropy, forward and backward. ATen entry points and their
// registration; the lowerings are loss.h. Class targets and probabilities
// are checked on the device like the CPU checks them (data_checks.h).
#include <ATen/ExpandUtils.h>
#include <ATen/ops/mse_loss_meta.h>
#include <ATen/ops/nll_loss_backward_meta.h>
#include <ATen/ops/nll_loss_forward_meta.h>

#include "aten/data_checks.h"
#include "aten/library.h"
#include "engine/checks.h"
#include "ops/checks/checks.h"
#include "ops/common/aten_common.h"
#include "ops/loss/loss.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

at::OptionalTensorRef opt_ref(const std::optional<at::Tensor>& t) {
  return t.has_value() && t->defined() ? at::OptionalTensorRef(*t) : at::OptionalTensorRef();
}

std::vector<int64_t> broadcast_shape(const at::Tensor& a, const at::Tensor& b) {
  auto s = at::infer_size_dimvector(a.sizes(), b.sizes());
  return std::vector<int64_t>(s.begin(), s.end());
}

void check_reduction(int64_t reduction) {
  TORCH_CHECK(reduction >= 0 && reduction <= 2, "invalid reduction: ", reduction);
}

// ---- nll_loss, nll_loss2d

void check_target(const at::Tensor& target) {
  TORCH_CHECK(!at::isFloatingType(target.scalar_type()) && !target.is_complex() && target.scalar_type() != at::kBool,
              "expected scalar type Long but found ", target.scalar_type());
}

void nll_into(const at::Tensor& output, const at::Tensor& total_weight, const at::Tensor& self,
              const at::Tensor& target, const std::optional<at::Tensor>& weight, int64_t reduction,
              int64_t ignore_index) {
  check_reduction(reduction);
  check_target(target);
  check_floating(self, "nll_loss");
  // Class indices are read on the device; a bad one raises like the CPU's
  // loop at the next host read.
  check_first_in_range(target, 0, self.size(self.dim() == 1 ? 0 : 1), ignore_index,
                       [](int64_t t) { TORCH_CHECK_INDEX(false, "Target ", t, " is out of bounds."); });
  bool has_w = weight.has_value() && weight->defined();
  std::vector<engine::Ref> in{read(self), read(target), engine::scalar_i64(ignore_index)};
  if (has_w) in.push_back(read(*weight));
  write_all(
      {output, total_weight}, "nll_loss", std::move(in),
      [](Builder& b, const Vals& v, int64_t red, bool w_given) {
        std::optional<Value> w;
        if (w_given) w = v[3];
        auto [o, t] = ops::nll_loss(b, v[0], v[1], w, red, v[2]);
        return Vals{o, t};
      },
      reduction, has_w);
}

void nll_backward_into(const at::Tensor& grad_input, const at::Tensor& grad, const at::Tensor& self,
                       const at::Tensor& target, const std::optional<at::Tensor>& weight, int64_t reduction,
                       int64_t ignore_index, const at::Tensor& total_weight) {
  check_reduction(reduction);
  check_target(target);
  bool has_w = weight.has_value() && weight->defined();
  std::vector<engine::Ref> in{read(grad), read(self), read(target), engine::scalar_i64(ignore_index),
                              read(total_weight)};
  if (has_w) in.push_back(read(*weight));
  write_all(
      {grad_input}, "nll_loss_backward", std::move(in),
      [](Builder& b, const Vals& v, int64_t red, bool w_given) {
        std::optional<Value> w;
        if (w_given) w = v[5];
        return Vals{ops::nll_loss_backward(b, v[0], v[1], v[2], w, red, v[3], v[4])};
      },
      reduction, has_w);
}

// nll_loss_forward / nll_loss_backward: the meta functions take the weight
// as an OptionalTensorRef, the schemas as an optional Tensor, hence the
// wrappers.
std::tuple<at::Tensor, at::Tensor> nll_loss_forward(const at::Tensor& self, const at::Tensor& target,
                                                    const std::optional<at::Tensor>& weight, int64_t reduction,
                                                    c10::SymInt ignore_index) {
  Structured<at::meta::structured_nll_loss_forward> m;
  m.meta(self, target, opt_ref(weight), reduction, ignore_index.expect_int());
  nll_into(m.outs[0], m.outs[1], self, target, weight, reduction, ignore_index.expect_int());
  return {m.outs[0], m.outs[1]};
}
std::tuple<at::Tensor&, at::Tensor&> nll_loss_forward_output(const at::Tensor& self, const at::Tensor& target,
                                                             const std::optional<at::Tensor>& weight, int64_t reduction,
                                                             c10::SymInt ignore_index, at::Tensor& output,
                                                             at::Tensor& total_weight) {
  Structured<at::meta::structured_nll_loss_forward> m({output, total_weight});
  m.meta(self, target, opt_ref(weight), reduction, ignore_index.expect_int());
  nll_into(output, m.outs[1], self, target, weight, reduction, ignore_index.expect_int());
  return {output, total_weight};
}
at::Tensor nll_loss_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                             const std::optional<at::Tensor>& weight, int64_t reduction, c10::SymInt ignore_index,
                             const at::Tensor& total_weight) {
  Structured<at::meta::structured_nll_loss_backward> m;
  m.meta(grad, self, target, opt_ref(weight), reduction, ignore_index.expect_int(), total_weight);
  nll_backward_into(m.outs[0], grad, self, target, weight, reduction, ignore_index.expect_int(), total_weight);
  return m.outs[0];
}
at::Tensor& nll_loss_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                         const std::optional<at::Tensor>& weight, int64_t reduction,
                                         c10::SymInt ignore_index, const at::Tensor& total_weight,
                                         at::Tensor& grad_input) {
  Structured<at::meta::structured_nll_loss_backward> m({grad_input});
  m.meta(grad, self, target, opt_ref(weight), reduction, ignore_index.expect_int(), total_weight);
  nll_backward_into(grad_input, grad, self, target, weight, reduction, ignore_index.expect_int(), total_weight);
  return grad_input;
}

void check_nll2d(const at::Tensor& self, const at::Tensor& target, const std::optional<at::Tensor>& weight) {
  TORCH_CHECK(target.dim() == 3,
              "only batches of spatial targets supported (3D tensors) but got targets of dimension: ", target.dim());
  TORCH_CHECK(self.dim() == 4,
              "only batches of spatial inputs supported (4D tensors), but got input of dimension: ", self.dim());
  TORCH_CHECK(!weight.has_value() || !weight->defined() || weight->numel() == self.size(1),
              "weight tensor should be defined either for all or no classes");
  TORCH_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) && self.size(3) == target.size(2),
              "size mismatch (got input: ", self.sizes(), " , target: ", target.sizes());
}

std::tuple<at::Tensor, at::Tensor> nll_loss2d_forward(const at::Tensor& self, const at::Tensor& target,
                                                      const std::optional<at::Tensor>& weight, int64_t reduction,
                                                      c10::SymInt ignore_index) {
  check_nll2d(self, target, weight);
  at::Tensor output = empty(reduction == 0 ? target.sizes() : at::IntArrayRef{}, self.scalar_type(), self.device());
  at::Tensor total = empty({}, self.scalar_type(), self.device());
  nll_into(output, total, self, target, weight, reduction, ignore_index.expect_int());
  return {output, total};
}
std::tuple<at::Tensor&, at::Tensor&> nll_loss2d_forward_output(const at::Tensor& self, const at::Tensor& target,
                                                               const std::optional<at::Tensor>& weight,
                                                               int64_t reduction, c10::SymInt ignore_index,
                                                               at::Tensor& output, at::Tensor& total_weight) {
  check_nll2d(self, target, weight);
  resize_out(output, reduction == 0 ? target.sizes() : at::IntArrayRef{}, self.scalar_type(), "nll_loss2d");
  resize_out(total_weight, {}, self.scalar_type(), "nll_loss2d");
  nll_into(output, total_weight, self, target, weight, reduction, ignore_index.expect_int());
  return {output, total_weight};
}
at::Tensor nll_loss2d_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                               const std::optional<at::Tensor>& weight, int64_t reduction, c10::SymInt ignore_index,
                               const at::Tensor& total_weight) {
  check_nll2d(self, target, weight);
  at::Tensor grad_input = empty(self.sizes(), self.scalar_type(), self.device());
  nll_backward_into(grad_input, grad, self, target, weight, reduction, ignore_index.expect_int(), total_weight);
  return grad_input;
}
at::Tensor& nll_loss2d_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                           const std::optional<at::Tensor>& weight, int64_t reduction,
                                           c10::SymInt ignore_index, const at::Tensor& total_weight,
                                           at::Tensor& grad_input) {
  check_nll2d(self, target, weight);
  resize_out(grad_input, self.sizes(), self.scalar_type(), "nll_loss2d_backward");
  nll_backward_into(grad_input, grad, self, target, weight, reduction, ignore_index.expect_int(), total_weight);
  return grad_input;
}

// ---- mse_loss

struct MseLoss {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, const at::Tensor& target,
                  int64_t reduction) const {
    check_reduction(reduction);
    check_floating(out, "mse_loss");
    shlo::Shape shape = shape_of(at::infer_size(self.sizes(), target.sizes()));
    write_all(
        {out}, "mse_loss", {broadcast(read(self), shape), broadcast(read(target), shape)},
        [](Builder& b, const Vals& in, int64_t red, shlo::DType o) {
          return Vals{ops::mse_loss(b, in[0], in[1], red, o)};
        },
        reduction, to_shlo(out.scalar_type()));
  }
};

void mse_backward_into(const at::Tensor& grad_input, const at::Tensor& grad, const at::Tensor& self,
                       const at::Tensor& target, int64_t reduction) {
  check_reduction(reduction);
  shlo::Shape shape = shape_of(grad_input.sizes());
  write_all(
      {grad_input}, "mse_loss_backward", {read(grad), broadcast(read(self), shape), read(target)},
      [](Builder& b, const Vals& in, int64_t red, shlo::DType o) {
        return Vals{ops::mse_loss_backward(b, in[0], in[1], in[2], red, o)};
      },
      reduction, to_shlo(grad_input.scalar_type()));
}
at::Tensor mse_loss_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                             int64_t reduction) {
  at::Tensor gi = empty(at::infer_size(self.sizes(), target.sizes()), self.scalar_type(), self.device());
  mse_backward_into(gi, grad, self, target, reduction);
  return gi;
}
at::Tensor& mse_loss_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                         int64_t reduction, at::Tensor& grad_input) {
  resize_out(grad_input, at::infer_size(self.sizes(), target.sizes()), self.scalar_type(), "mse_loss_backward");
  mse_backward_into(grad_input, grad, self, target, reduction);
  return grad_input;
}

// ---- huber_loss, smooth_l1_loss

std::vector<int64_t> loss_out_shape(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  TORCH_CHECK(reduction >= 0 && reduction <= 2, "invalid reduction: ", reduction);
  if (reduction != 0) return {};
  return broadcast_shape(self, target);
}

template <ops::RobustLoss Kind>
engine::Ref robust_loss_ref(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double param) {
  constexpr bool huber = Kind == ops::RobustLoss::Huber;
  TORCH_CHECK(!self.is_complex(), huber ? "huber_loss" : "smooth_l1_loss", " does not support complex inputs");
  std::vector<int64_t> shape = broadcast_shape(self, target);
  shlo::DType t = to_shlo(at::result_type(self, target));
  shlo::Type ot{t, shape_of(loss_out_shape(self, target, reduction))};
  return op1(
      huber ? "huber_loss" : "smooth_l1_loss", {read_as(self, t), read_as(target, t)}, ot,
      [](Builder& b, const Vals& in, double p, int64_t red, const shlo::Shape& bs) {
        return Vals{ops::robust_loss(b, b.broadcast_to(in[0], bs), b.broadcast_to(in[1], bs), Kind, p, red)};
      },
      param, reduction, shape_of(shape));
}

template <ops::RobustLoss Kind>
engine::Ref robust_loss_backward_ref(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                     int64_t reduction, double param) {
  std::vector<int64_t> shape = broadcast_shape(self, target);
  TORCH_CHECK(at::IntArrayRef(shape) == self.sizes(), "loss backward: target of shape ", target.sizes(),
              " broadcasts beyond the input's shape ", self.sizes());
  shlo::DType t = to_shlo(self.scalar_type());
  return op1(
      Kind == ops::RobustLoss::Huber ? "huber_loss_backward" : "smooth_l1_loss_backward",
      {read_as(grad, t), read(self), read_as(target, t)}, type_of(self),
      [](Builder& b, const Vals& in, double p, int64_t red, const shlo::Shape& bs) {
        return Vals{ops::robust_loss_backward(b, in[0], in[1], b.broadcast_to(in[2], bs), Kind, p, red)};
      },
      param, reduction, shape_of(shape));
}

constexpr auto kHuber = ops::RobustLoss::Huber;
constexpr auto kSmoothL1 = ops::RobustLoss::SmoothL1;

at::Tensor huber_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double delta) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  return wrap(robust_loss_ref<kHuber>(self, target, reduction, delta), self.device());
}
at::Tensor& huber_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double delta,
                           at::Tensor& out) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  return store_out(out, robust_loss_ref<kHuber>(self, target, reduction, delta));
}
at::Tensor huber_loss_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                               int64_t reduction, double delta) {
  return wrap(robust_loss_backward_ref<kHuber>(grad, self, target, reduction, delta), self.device());
}
at::Tensor& huber_loss_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                    int64_t reduction, double delta, at::Tensor& grad_input) {
  return store_out(grad_input, robust_loss_backward_ref<kHuber>(grad, self, target, reduction, delta));
}
at::Tensor smooth_l1_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double beta) {
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  return wrap(robust_loss_ref<kSmoothL1>(self, target, reduction, beta), self.device());
}
at::Tensor& smooth_l1_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double beta,
                               at::Tensor& out) {
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  return store_out(out, robust_loss_ref<kSmoothL1>(self, target, reduction, beta));
}
at::Tensor smooth_l1_loss_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                   int64_t reduction, double beta) {
  return wrap(robust_loss_backward_ref<kSmoothL1>(grad, self, target, reduction, beta), self.device());
}
at::Tensor& smooth_l1_loss_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                        int64_t reduction, double beta, at::Tensor& grad_input) {
  return store_out(grad_input, robust_loss_backward_ref<kSmoothL1>(grad, self, target, reduction, beta));
}

// ---- binary_cross_entropy

// The CPU loop checks input then target at each element in turn and
// reports the first failure; answered by the device at the next host read.
void check_unit_range(const at::Tensor& self, const at::Tensor& target) {
  int64_t n = self.numel();
  if (n == 0) return;
  shlo::DType t = to_shlo(self.scalar_type());
  engine::Ref first = op1(
      "binary_cross_entropy_unit_range", {read(self), read_as(target, t), scalar_of(0, t), scalar_of(1, t)},
      shlo::Type{shlo::DType::S64, {2}}, [](Builder& b, const Vals& in) {
        return Vals{b.concatenate(
            {ops::first_outside_closed(b, in[0], in[2], in[3]), ops::first_outside_closed(b, in[1], in[2], in[3])}, 0)};
      });
  engine::defer_check(first, [n](const std::vector<int64_t>& at) {
    TORCH_CHECK(at[0] == n || at[0] > at[1], "all elements of input should be between 0 and 1");
    TORCH_CHECK(at[1] == n, "all elements of target should be between 0 and 1");
  });
}

// The loss (grad absent) or its gradient (grad given).
engine::Ref bce_ref(const std::optional<at::Tensor>& grad, const at::Tensor& self, const at::Tensor& target,
                    const std::optional<at::Tensor>& weight, int64_t reduction) {
  TORCH_CHECK(reduction >= 0 && reduction <= 2, "invalid reduction: ", reduction);
  TORCH_CHECK(self.sizes() == target.sizes(), "Using a target size (", target.sizes(),
              ") that is different to the "
              "input size (",
              self.sizes(), ") is deprecated. Please ensure they have the same size.");
  check_dtype("binary_cross_entropy", self.scalar_type(), Accepts::Float);
  bool has_w = weight.has_value() && weight->defined();
  if (has_w) (void)at::infer_size(weight->sizes(), self.sizes());
  if (!grad) check_unit_range(self, target);
  shlo::DType t = to_shlo(self.scalar_type());
  std::vector<engine::Ref> in{read(self), read_as(target, t)};
  if (has_w) in.push_back(read_as(*weight, t));
  if (grad) in.push_back(read_as(*grad, t));
  bool backward = grad.has_value();
  shlo::Type ot = backward || reduction == 0 ? type_of(self) : shlo::Type{t, {}};
  return op1(
      backward ? "binary_cross_entropy_backward" : "binary_cross_entropy", std::move(in), ot,
      [](Builder& b, const Vals& v, int64_t red, bool w_given, bool bwd) {
        std::optional<Value> w;
        if (w_given) w = v[2];
        if (!bwd) return Vals{ops::binary_cross_entropy(b, v[0], v[1], w, red)};
        return Vals{ops::binary_cross_entropy_backward(b, v.back(), v[0], v[1], w, red)};
      },
      reduction, has_w, backward);
}

at::Tensor binary_cross_entropy(const at::Tensor& self, const at::Tensor& target,
                                const std::optional<at::Tensor>& weight, int64_t reduction) {
  return wrap(bce_ref(std::nullopt, self, target, weight, reduction), self.device());
}
at::Tensor& binary_cross_entropy_out(const at::Tensor& self, const at::Tensor& target,
                                     const std::optional<at::Tensor>& weight, int64_t reduction, at::Tensor& out) {
  return store_out(out, bce_ref(std::nullopt, self, target, weight, reduction));
}
at::Tensor binary_cross_entropy_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                         const std::optional<at::Tensor>& weight, int64_t reduction) {
  return wrap(bce_ref(grad, self, target, weight, reduction), self.device());
}
at::Tensor& binary_cross_entropy_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                              const std::optional<at::Tensor>& weight, int64_t reduction,
                                              at::Tensor& grad_input) {
  return store_out(grad_input, bce_ref(grad, self, target, weight, reduction));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("binary_cross_entropy", &binary_cross_entropy);
  m.impl("binary_cross_entropy.out", &binary_cross_entropy_out);
  m.impl("binary_cross_entropy_backward", &binary_cross_entropy_backward);
  m.impl("binary_cross_entropy_backward.grad_input", &binary_cross_entropy_backward_out);
  m.impl("huber_loss", &huber_loss);
  m.impl("huber_loss.out", &huber_loss_out);
  m.impl("huber_loss_backward", &huber_loss_backward);
  m.impl("huber_loss_backward.out", &huber_loss_backward_out);
  m.structured<at::meta::structured_mse_loss>("mse_loss", nullptr, "mse_loss.out", MseLoss{});
  m.impl("mse_loss_backward", &mse_loss_backward);
  m.impl("mse_loss_backward.grad_input", &mse_loss_backward_grad_input);
  m.impl("nll_loss2d_backward", &nll_loss2d_backward);
  m.impl("nll_loss2d_backward.grad_input", &nll_loss2d_backward_grad_input);
  m.impl("nll_loss2d_forward", &nll_loss2d_forward);
  m.impl("nll_loss2d_forward.output", &nll_loss2d_forward_output);
  m.impl("nll_loss_backward", &nll_loss_backward);
  m.impl("nll_loss_backward.grad_input", &nll_loss_backward_grad_input);
  m.impl("nll_loss_forward", &nll_loss_forward);
  m.impl("nll_loss_forward.output", &nll_loss_forward_output);
  m.impl("smooth_l1_loss", &smooth_l1_loss);
  m.impl("smooth_l1_loss.out", &smooth_l1_loss_out);
  m.impl("smooth_l1_loss_backward", &smooth_l1_loss_backward);
  m.impl("smooth_l1_loss_backward.grad_input", &smooth_l1_loss_backward_out);
}

}  // namespace tpu
