// torch.optim's fused=True steps on the tpu: _fused_adam_, _fused_adamw_
// and _fused_sgd_ (float and tensor lr). Each call records one node that
// updates every parameter, state and (with a grad scale) gradient of the
// group; the lowering is optim.h. Nothing reads back to the host: the step
// count, lr tensor, grad scale and found_inf stay device operands.
#include "aten/library.h"
#include "aten/tensor.h"
#include "ops/optim/optim.h"

namespace tpu {

namespace {

void check_list(at::TensorList ts, at::TensorList params, const char* op, const char* name) {
  TORCH_CHECK(ts.size() == params.size(), op, ": expected ", params.size(), " ", name, ", got ", ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    const at::Tensor& t = ts[i];
    const at::Tensor& p = params[i];
    TORCH_CHECK(t.device() == p.device(), op, ": ", name, "[", i, "] is on ", t.device(), ", its parameter on ",
                p.device());
    TORCH_CHECK(t.layout() == at::kStrided, op, ": ", name, "[", i, "] must be a strided tensor");
    TORCH_CHECK(at::isFloatingType(t.scalar_type()), op, ": ", name, "[", i, "] must be floating point, got ",
                t.scalar_type());
    TORCH_CHECK(t.sizes() == p.sizes(), op, ": ", name, "[", i, "] has shape ", shape_str(t.sizes()),
                ", its parameter ", shape_str(p.sizes()));
  }
}

void add_reads(std::vector<engine::Ref>& in, at::TensorList ts) {
  for (const at::Tensor& t : ts) in.push_back(read(t));
}

void add_outs(std::vector<at::Tensor>& outs, at::TensorList ts) { outs.insert(outs.end(), ts.begin(), ts.end()); }

void check_amp_tensor(const std::optional<at::Tensor>& t, const at::Tensor& ref, const char* op, const char* name) {
  if (!t || !t->defined()) return;
  TORCH_CHECK(t->numel() == 1 && t->scalar_type() == at::kFloat, op, ": ", name, " must be a 1-element float tensor");
  TORCH_CHECK(t->device() == ref.device(), op, ": ", name, " is on ", t->device(), ", the parameters on ",
              ref.device());
}

bool given(const std::optional<at::Tensor>& t) { return t && t->defined(); }

// The tensors of `lists` as flat 1-D views where every tensor of a parameter
// is contiguous (the update is elementwise, so only the element order
// matters). A write of a whole storage then keeps the program's output
// buffer as it is; a multi-dimensional write goes through a reshape that
// strict mode launches as a program of its own, a copy per tensor.
std::vector<std::vector<at::Tensor>> flat(std::initializer_list<at::TensorList> lists, size_t n) {
  std::vector<bool> ok(n, true);
  for (at::TensorList l : lists)
    for (size_t i = 0; i < l.size(); ++i) ok[i] = ok[i] && l[i].is_contiguous();
  std::vector<std::vector<at::Tensor>> out;
  for (at::TensorList l : lists) {
    std::vector<at::Tensor>& o = out.emplace_back();
    for (size_t i = 0; i < l.size(); ++i) o.push_back(ok[i] ? l[i].view({-1}) : l[i]);
  }
  return out;
}

engine::Ref wide(double v) { return engine::scalar(wide_float(), v); }

void adam_step(const char* op, bool adamw, at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
               at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList state_steps, engine::Ref lr,
               double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
               const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  if (params.empty()) return;
  check_list(params, params, op, "params");
  check_list(grads, params, op, "grads");
  check_list(exp_avgs, params, op, "exp_avgs");
  check_list(exp_avg_sqs, params, op, "exp_avg_sqs");
  if (amsgrad)
    check_list(max_exp_avg_sqs, params, op, "max_exp_avg_sqs");
  else
    TORCH_CHECK(max_exp_avg_sqs.empty(), op, ": max_exp_avg_sqs must be empty without amsgrad");
  TORCH_CHECK(state_steps.size() == params.size(), op, ": expected ", params.size(), " state_steps, got ",
              state_steps.size());
  for (size_t i = 0; i < state_steps.size(); ++i)
    TORCH_CHECK(state_steps[i].numel() == 1 && state_steps[i].device() == params[i].device(), op, ": state_steps[", i,
                "] must be a 1-element tensor on ", params[i].device());
  check_amp_tensor(grad_scale, params[0], op, "grad_scale");
  check_amp_tensor(found_inf, params[0], op, "found_inf");

  ops::AdamConfig cfg{static_cast<int64_t>(params.size()),
                      adamw,
                      amsgrad,
                      maximize,
                      weight_decay != 0,
                      given(grad_scale),
                      given(found_inf)};
  auto f = flat({params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs}, params.size());
  const auto &p = f[0], &g = f[1], &m = f[2], &v = f[3], &vmax = f[4];
  std::vector<engine::Ref> in;
  for (const std::vector<at::Tensor>* ts : {&p, &g, &m, &v, &vmax}) add_reads(in, *ts);
  add_reads(in, state_steps);
  for (engine::Ref r : {lr, wide(beta1), wide(beta2), wide(weight_decay), wide(eps)}) in.push_back(std::move(r));
  if (cfg.grad_scale) in.push_back(read(*grad_scale));
  if (cfg.found_inf) in.push_back(read(*found_inf));
  std::vector<at::Tensor> outs;
  for (const std::vector<at::Tensor>* ts : {&p, &m, &v, &vmax}) add_outs(outs, *ts);
  if (cfg.grad_scale) add_outs(outs, g);
  write_all(
      outs, "fused_adam", std::move(in),
      [](shlo::Builder& b, const std::vector<shlo::Value>& v, const ops::AdamConfig& c) {
        return ops::fused_adam(b, c, v);
      },
      cfg);
}

template <bool AdamW>
void fused_adam_(at::TensorList self, at::TensorList grads, at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                 at::TensorList max_exp_avg_sqs, at::TensorList state_steps, double lr, double beta1, double beta2,
                 double weight_decay, double eps, bool amsgrad, bool maximize,
                 const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  adam_step(AdamW ? "_fused_adamw_" : "_fused_adam_", AdamW, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
            state_steps, wide(lr), beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

template <bool AdamW>
void fused_adam_tensor_lr_(at::TensorList self, at::TensorList grads, at::TensorList exp_avgs,
                           at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList state_steps,
                           const at::Tensor& lr, double beta1, double beta2, double weight_decay, double eps,
                           bool amsgrad, bool maximize, const std::optional<at::Tensor>& grad_scale,
                           const std::optional<at::Tensor>& found_inf) {
  const char* op = AdamW ? "_fused_adamw_" : "_fused_adam_";
  TORCH_CHECK(lr.numel() == 1, op, ": lr must be a 1-element tensor");
  adam_step(op, AdamW, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
            read_as(lr.dim() == 0 ? lr : lr.reshape({}), wide_float()), beta1, beta2, weight_decay, eps, amsgrad,
            maximize, grad_scale, found_inf);
}

void sgd_step(at::TensorList params, at::TensorList grads, at::TensorList momentum_buffers, engine::Ref lr,
              double weight_decay, double momentum, double dampening, bool nesterov, bool maximize, bool is_first_step,
              const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  const char* op = "_fused_sgd_";
  if (params.empty()) return;
  check_list(params, params, op, "params");
  check_list(grads, params, op, "grads");
  bool has_momentum = momentum != 0;
  if (has_momentum)
    check_list(momentum_buffers, params, op, "momentum_buffer_list");
  else
    TORCH_CHECK(momentum_buffers.empty(), op, ": momentum_buffer_list must be empty without momentum");
  check_amp_tensor(grad_scale, params[0], op, "grad_scale");
  check_amp_tensor(found_inf, params[0], op, "found_inf");

  ops::SgdConfig cfg{static_cast<int64_t>(params.size()),
                     has_momentum,
                     nesterov,
                     maximize,
                     weight_decay != 0,
                     is_first_step,
                     given(grad_scale),
                     given(found_inf)};
  auto f = flat({params, grads, momentum_buffers}, params.size());
  const auto &p = f[0], &g = f[1], &buf = f[2];
  std::vector<engine::Ref> in;
  add_reads(in, p);
  add_reads(in, g);
  add_reads(in, buf);
  for (engine::Ref r : {lr, wide(weight_decay), wide(momentum), wide(dampening)}) in.push_back(std::move(r));
  if (cfg.grad_scale) in.push_back(read(*grad_scale));
  if (cfg.found_inf) in.push_back(read(*found_inf));
  std::vector<at::Tensor> outs;
  add_outs(outs, p);
  add_outs(outs, buf);
  if (cfg.grad_scale) add_outs(outs, g);
  write_all(
      outs, "fused_sgd", std::move(in),
      [](shlo::Builder& b, const std::vector<shlo::Value>& v, const ops::SgdConfig& c) {
        return ops::fused_sgd(b, c, v);
      },
      cfg);
}

void _fused_sgd_(at::TensorList self, at::TensorList grads, at::TensorList momentum_buffer_list, double weight_decay,
                 double momentum, double lr, double dampening, bool nesterov, bool maximize, bool is_first_step,
                 const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  sgd_step(self, grads, momentum_buffer_list, wide(lr), weight_decay, momentum, dampening, nesterov, maximize,
           is_first_step, grad_scale, found_inf);
}

void _fused_sgd_tensor_lr_(at::TensorList self, at::TensorList grads, at::TensorList momentum_buffer_list,
                           double weight_decay, double momentum, const at::Tensor& lr, double dampening, bool nesterov,
                           bool maximize, bool is_first_step, const std::optional<at::Tensor>& grad_scale,
                           const std::optional<at::Tensor>& found_inf) {
  TORCH_CHECK(lr.numel() == 1, "_fused_sgd_: lr must be a 1-element tensor");
  sgd_step(self, grads, momentum_buffer_list, read_as(lr.dim() == 0 ? lr : lr.reshape({}), wide_float()), weight_decay,
           momentum, dampening, nesterov, maximize, is_first_step, grad_scale, found_inf);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("_fused_adam_", &fused_adam_<false>);
  m.impl("_fused_adam_.tensor_lr", &fused_adam_tensor_lr_<false>);
  m.impl("_fused_adamw_", &fused_adam_<true>);
  m.impl("_fused_adamw_.tensor_lr", &fused_adam_tensor_lr_<true>);
  m.impl("_fused_sgd_", &_fused_sgd_);
  m.impl("_fused_sgd_.tensor_lr", &_fused_sgd_tensor_lr_);
}

}  // namespace tpu
