// Scaled dot product attention: the overrideable fused SDPA backend
// (_fused_sdp_choice picks it, forward and backward as one node each) and its
// registration. Inputs it does not take go to PyTorch's math decomposition.
// The lowering is attention.h.
#include <ATen/ExpandUtils.h>
#include <ATen/SDPBackend.h>
#include <ATen/native/transformers/attention.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "aten/library.h"
#include "ops/attention/attention.h"
#include "ops/linalg/linalg.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

// Whether the fused kernel takes these inputs; anything else goes to the
// math decomposition, which also raises PyTorch's errors for bad input.
bool fused_attention_fits(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const std::optional<at::Tensor>& mask, double dropout_p, bool enable_gqa) {
  if (dropout_p > 0) return false;  // dropout draws from the math path's at::dropout
  if (q.is_nested() || k.is_nested() || v.is_nested()) return false;
  int64_t r = q.dim();
  if ((r != 3 && r != 4) || k.dim() != r || v.dim() != r) return false;
  if (!at::isFloatingType(q.scalar_type()) || k.scalar_type() != q.scalar_type() || v.scalar_type() != q.scalar_type())
    return false;
  for (int64_t i = 0; i + 3 < r; ++i)
    if (k.size(i) != q.size(i) || v.size(i) != q.size(i)) return false;
  if (k.size(-1) != q.size(-1) || v.size(-2) != k.size(-2) || v.size(-3) != k.size(-3)) return false;
  int64_t hq = q.size(-3), hkv = k.size(-3);
  if (hq != hkv && !(enable_gqa && hkv > 0 && hq % hkv == 0)) return false;
  if (mask && mask->defined()) {
    if (mask->scalar_type() != at::kBool && !at::isFloatingType(mask->scalar_type())) return false;
    std::vector<int64_t> full(q.sizes().begin(), q.sizes().end() - 1);
    full.push_back(k.size(-2));
    if (!at::is_expandable_to(mask->sizes(), full)) return false;
  }
  return true;
}

int64_t _fused_sdp_choice(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const std::optional<at::Tensor>& mask, double dropout_p, bool is_causal,
                          std::optional<double> scale, bool enable_gqa) {
  auto& ctx = at::globalContext();
  if (ctx.userEnabledOverrideableSDP() && fused_attention_fits(q, k, v, mask, dropout_p, enable_gqa))
    return static_cast<int64_t>(at::SDPBackend::overrideable);
  if (ctx.userEnabledMathSDP()) return static_cast<int64_t>(at::SDPBackend::math);
  return static_cast<int64_t>(at::SDPBackend::error);
}

std::optional<at::Tensor> defined_or_none(const std::optional<at::Tensor>& t) {
  if (t && t->defined()) return t;
  return std::nullopt;
}

engine::Ref scale_operand(const at::Tensor& q, std::optional<double> scale) {
  double s = scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  return scalar_of(at::Scalar(s), ops::accumulate_dtype(to_shlo(q.scalar_type())));
}

void check_attention_inputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const std::optional<at::Tensor>& mask, double dropout_p) {
  TORCH_CHECK(dropout_p == 0, "the tpu fused attention kernel does not apply dropout (dropout_p=", dropout_p,
              "); scaled_dot_product_attention routes dropout to the math backend");
  TORCH_CHECK(fused_attention_fits(q, k, v, mask, 0, /*enable_gqa=*/true),
              "tpu fused attention: unsupported inputs: query ", q.sizes(), " ", q.scalar_type(), ", key ", k.sizes(),
              " ", k.scalar_type(), ", value ", v.sizes(), " ", v.scalar_type(),
              mask ? " with a mask that does not broadcast to the scores" : "");
}

// A tensor holding v whose memory layout follows `like`'s, as the meta
// function of the fused op allocates its output: the value is transposed
// into a contiguous base whose permuted view is returned.
at::Tensor wrap_like_layout(engine::Ref v, const at::Tensor& like) {
  int64_t r = like.dim();
  std::vector<int64_t> order(r);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return like.stride(a) > like.stride(b); });
  bool identity = true;
  for (int64_t i = 0; i < r; ++i) identity = identity && order[i] == i;
  if (identity) return wrap(v, like.device());
  std::vector<int64_t> inverse(r);
  shlo::Shape permuted(r);
  for (int64_t i = 0; i < r; ++i) {
    inverse[order[i]] = i;
    permuted[i] = v.type().shape[order[i]];
  }
  engine::Ref t = op1(
      "sdpa_out_layout", {v}, shlo::Type{v.type().dtype, permuted},
      [](Builder& b, const Vals& x, const std::vector<int64_t>& order) { return Vals{b.transpose(x[0], order)}; },
      order);
  return wrap(t, like.device()).permute(inverse);
}

using FusedAttention = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt, at::Tensor,
                                  at::Tensor, at::Tensor>;

// The fused attention's results from its program's {out, lse}.
FusedAttention fused_attention_result(const std::vector<engine::Ref>& refs, const at::Tensor& q, const at::Tensor& k,
                                      const at::Device& dev) {
  at::Tensor out = wrap_like_layout(refs[0], q);
  at::Tensor lse = wrap(refs[1], dev);
  // The meta function gives 3-D inputs a batch of one: (1, H, L).
  if (q.dim() == 3) lse = lse.view({1, q.size(0), q.size(1)});
  auto seed = empty({}, at::kLong, dev), offset = empty({}, at::kLong, dev);
  return {out,  lse,    at::Tensor(), at::Tensor(), c10::SymInt(q.size(-2)), c10::SymInt(k.size(-2)),
          seed, offset, at::Tensor()};
}

FusedAttention _scaled_dot_product_fused_attention_overrideable(const at::Tensor& q, const at::Tensor& k,
                                                                const at::Tensor& v,
                                                                const std::optional<at::Tensor>& attn_bias,
                                                                double dropout_p, bool is_causal,
                                                                bool return_debug_mask, std::optional<double> scale) {
  std::optional<at::Tensor> mask = defined_or_none(attn_bias);
  check_attention_inputs(q, k, v, mask, dropout_p);
  TORCH_CHECK(!return_debug_mask, "tpu fused attention: return_debug_mask is not supported");
  at::Device dev = common_device({&q, &k, &v});
  std::vector<int64_t> out_shape(q.sizes().begin(), q.sizes().end());
  out_shape.back() = v.size(-1);
  std::vector<int64_t> lse_shape(q.sizes().begin(), q.sizes().end() - 1);
  shlo::DType qt = to_shlo(q.scalar_type());
  const std::vector<shlo::Type> out_types{shlo::Type{qt, shape_of(out_shape)},
                                          shlo::Type{shlo::DType::F32, shape_of(lse_shape)}};
  // Keys and values padded to a size class (a growing KV cache) are read
  // padded, the keys past the length masked out: one program per class.
  std::optional<Classed> kc, vc;
  if (!mask && !is_causal && k.dim() >= 2) {
    kc = read_classed(k, k.dim() - 2);
    vc = read_classed(v, v.dim() - 2);
  }
  std::vector<engine::Ref> in;
  if (kc && vc && kc->cap == vc->cap && kc->len_now == vc->len_now) {
    std::vector<int64_t> ks(k.sizes().begin(), k.sizes().end()), vs(v.sizes().begin(), v.sizes().end());
    ks[ks.size() - 2] = vs[vs.size() - 2] = kc->cap;
    auto refs = op(
        "sdpa_fwd_classed", {read(q), kc->value, vc->value, scale_operand(q, scale), kc->len}, out_types,
        [](Builder& b, const Vals& x, const std::vector<int64_t>& ks, const std::vector<int64_t>& vs) {
          const int64_t cap = ks[ks.size() - 2];
          Value live = b.compare(shlo::Cmp::LT, b.iota(shlo::Type{shlo::DType::S64, {cap}}, 0),
                                 b.broadcast_in_dim(x[4], {cap}, {}));
          return ops::attention_forward(b, x[0], b.reshape(x[1], ks), b.reshape(x[2], vs), live, x[3],
                                        ops::AttentionSpec{false});
        },
        ks, vs);
    serving_class(refs[0], kc->cap);
    return fused_attention_result(refs, q, k, dev);
  }
  in = {read(q), read(k), read(v), scale_operand(q, scale)};
  if (mask) in.push_back(read(*mask));
  auto refs = op(
      "sdpa_fwd", std::move(in),
      {shlo::Type{qt, shape_of(out_shape)}, shlo::Type{shlo::DType::F32, shape_of(lse_shape)}},
      [](Builder& b, const Vals& x, const ops::AttentionSpec& spec, bool has_mask) {
        std::optional<Value> m;
        if (has_mask) m = x[4];
        return ops::attention_forward(b, x[0], x[1], x[2], m, x[3], spec);
      },
      ops::AttentionSpec{is_causal}, mask.has_value());
  return fused_attention_result(refs, q, k, dev);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> _scaled_dot_product_fused_attention_overrideable_backward(
    const at::Tensor& grad_out, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
    const at::Tensor& attn_bias, std::array<bool, 4> grad_input_mask, const at::Tensor& out,
    const at::Tensor& logsumexp, const at::Tensor& cum_seq_q, const at::Tensor& cum_seq_k, c10::SymInt max_q,
    c10::SymInt max_k, double dropout_p, bool is_causal, const at::Tensor& philox_seed, const at::Tensor& philox_offset,
    std::optional<double> scale) {
  std::optional<at::Tensor> mask = defined_or_none(attn_bias);
  check_attention_inputs(q, k, v, mask, dropout_p);
  std::array<bool, 4> wanted = grad_input_mask;
  if (!mask || mask->scalar_type() == at::kBool) wanted[3] = false;
  at::Device dev = common_device({&q, &k, &v});
  std::vector<engine::Ref> in{read(grad_out), read(q), read(k), read(v), read(logsumexp), scale_operand(q, scale)};
  if (mask) in.push_back(read(*mask));
  std::vector<shlo::Type> types;
  const at::Tensor* like[4] = {&q, &k, &v, mask ? &*mask : nullptr};
  for (int i = 0; i < 4; ++i)
    if (wanted[i]) types.push_back(type_of(*like[i]));
  std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> grads;
  if (types.empty()) return grads;
  auto refs = op(
      "sdpa_bwd", std::move(in), types,
      [](Builder& b, const Vals& x, const ops::AttentionSpec& spec, bool has_mask, const std::array<bool, 4>& wanted) {
        std::optional<Value> m;
        if (has_mask) m = x[6];
        return ops::attention_backward(b, x[0], x[1], x[2], x[3], m, x[4], x[5], spec, wanted);
      },
      ops::AttentionSpec{is_causal}, mask.has_value(), wanted);
  at::Tensor* slot[4] = {&std::get<0>(grads), &std::get<1>(grads), &std::get<2>(grads), &std::get<3>(grads)};
  size_t j = 0;
  for (int i = 0; i < 4; ++i)
    if (wanted[i]) *slot[i] = wrap(refs[j++], dev);
  return grads;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("_fused_sdp_choice", &_fused_sdp_choice);
  m.impl("_scaled_dot_product_fused_attention_overrideable", &_scaled_dot_product_fused_attention_overrideable);
  m.impl("_scaled_dot_product_fused_attention_overrideable_backward",
         &_scaled_dot_product_fused_attention_overrideable_backward);
}

}  // namespace tpu

namespace at::native {
// scaled_dot_product_attention asks this stub, not the _fused_sdp_choice op,
// which backend to take for a device type.
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &tpu::_fused_sdp_choice);
}  // namespace at::native
