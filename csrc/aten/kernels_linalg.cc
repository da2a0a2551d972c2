// Matrix products (mm, bmm, addmm, baddbmm, addbmm, mv, addmv, dot, vdot)
// and scaled dot product attention (the overrideable fused SDPA backend).
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/SDPBackend.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/addmm_meta.h>
#include <ATen/ops/addmv_meta.h>
#include <ATen/ops/baddbmm_meta.h>
#include <ATen/ops/bmm_meta.h>
#include <ATen/ops/mm_meta.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "aten/kernels.h"
#include "aten/structured.h"
#include "ops/attention/attention.h"
#include "ops/linalg/linalg.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;
using ProductFn = std::function<Value(Builder&, const Vals&)>;

void check_product_dtype(const char* name, const at::Tensor& t) {
  TORCH_CHECK(t.scalar_type() != at::kBool, "\"", name, "\" not implemented for 'Bool'");
  (void)to_shlo(t.scalar_type());
}

// Records one product node computing `out` from `in` and stores it.
void record_into(const at::Tensor& out, const std::string& key, std::vector<engine::Ref> in, ProductFn fn) {
  write(out, legacy_op(key, std::move(in), type_of(out), [fn](Builder& b, const Vals& v) { return Vals{fn(b, v)}; }));
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

template <class M>
void mm_impl(M&, const at::Tensor& out, const at::Tensor& self, const at::Tensor& mat2) {
  check_product_dtype("mm", self);
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(),
              "expected m1 and m2 to have the same dtype, but got: ", self.dtype(), " != ", mat2.dtype());
  record_into(out, "mm", {read(self), read(mat2)}, [](Builder& b, const Vals& v) { return ops::mm(b, v[0], v[1]); });
}

template <class M>
void bmm_impl(M&, const at::Tensor& out, const at::Tensor& self, const at::Tensor& mat2) {
  check_product_dtype("bmm", self);
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(), "expected scalar type ", self.scalar_type(), " but found ",
              mat2.scalar_type());
  record_into(out, "bmm", {read(self), read(mat2)}, [](Builder& b, const Vals& v) { return ops::bmm(b, v[0], v[1]); });
}

template <class M>
void addmm_impl(M&, const at::Tensor& out, const at::Tensor& self, const at::Tensor& m1, const at::Tensor& m2,
                const at::Scalar& beta, const at::Scalar& alpha) {
  check_product_dtype("addmm", m1);
  check_expandable(self, out.sizes());
  auto ba = beta_alpha(m1, beta, alpha);
  record_into(out, "addmm", {read(self), read(m1), read(m2), ba[0], ba[1]},
              [](Builder& b, const Vals& v) { return ops::addmm(b, v[0], v[1], v[2], v[3], v[4]); });
}

template <class M>
void baddbmm_impl(M&, const at::Tensor& out, const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                  const at::Scalar& beta, const at::Scalar& alpha) {
  check_product_dtype("baddbmm", b1);
  check_expandable(self, out.sizes());
  auto ba = beta_alpha(b1, beta, alpha);
  record_into(out, "baddbmm", {read(self), read(b1), read(b2), ba[0], ba[1]},
              [](Builder& b, const Vals& v) { return ops::baddbmm(b, v[0], v[1], v[2], v[3], v[4]); });
}

template <class M>
void addmv_impl(M&, const at::Tensor& out, const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                const at::Scalar& beta, const at::Scalar& alpha) {
  check_product_dtype("addmv", mat);
  auto ba = beta_alpha(mat, beta, alpha);
  record_into(out, "addmv", {read(self), read(mat), read(vec), ba[0], ba[1]},
              [](Builder& b, const Vals& v) { return ops::addmv(b, v[0], v[1], v[2], v[3], v[4]); });
}

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
  record_into(out, "addbmm", {read(self), read(b1), read(b2), ba[0], ba[1]},
              [](Builder& b, const Vals& v) { return ops::addbmm(b, v[0], v[1], v[2], v[3], v[4]); });
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
  record_into(out, conj_self ? "vdot" : "dot", {read(self), read(other)}, [conj_self](Builder& b, const Vals& v) {
    Value x = v[0];
    if (conj_self) {
      shlo::Type part{x.dtype() == shlo::DType::C64 ? shlo::DType::F32 : shlo::DType::F64, x.shape()};
      Value re = b.op1("stablehlo.real", {x}, part), im = b.op1("stablehlo.imag", {x}, part);
      x = b.op1("stablehlo.complex", {re, b.unary("negate", im)}, x.type);
    }
    return ops::dot(b, x, v[1]);
  });
}

using MMm = at::meta::structured_mm;
using MBmm = at::meta::structured_bmm;
using MAddmm = at::meta::structured_addmm;
using MBaddbmm = at::meta::structured_baddbmm;
using MAddmv = at::meta::structured_addmv;

// ---- attention

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

int64_t fused_sdp_choice_impl(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
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
  std::string key = "transpose[";
  for (int64_t i = 0; i < r; ++i) {
    inverse[order[i]] = i;
    permuted[i] = v.type().shape[order[i]];
    key += std::to_string(order[i]) + ",";
  }
  engine::Ref t = legacy_op(key + "]", {v}, shlo::Type{v.type().dtype, permuted},
                            [order](Builder& b, const Vals& x) { return Vals{b.transpose(x[0], order)}; });
  return wrap(t, like.device()).permute(inverse);
}

}  // namespace

// ---- products

at::Tensor mm(const at::Tensor& s, const at::Tensor& m2) { return functional<MMm>(mm_impl<Structured<MMm>>, s, m2); }
at::Tensor& mm_out(const at::Tensor& s, const at::Tensor& m2, at::Tensor& out) {
  return out_variant<MMm>(out, mm_impl<Structured<MMm>>, s, m2);
}

at::Tensor bmm(const at::Tensor& s, const at::Tensor& m2) {
  return functional<MBmm>(bmm_impl<Structured<MBmm>>, s, m2);
}
at::Tensor& bmm_out(const at::Tensor& s, const at::Tensor& m2, at::Tensor& out) {
  return out_variant<MBmm>(out, bmm_impl<Structured<MBmm>>, s, m2);
}

at::Tensor addmm(const at::Tensor& s, const at::Tensor& m1, const at::Tensor& m2, const at::Scalar& beta,
                 const at::Scalar& alpha) {
  return functional<MAddmm>(addmm_impl<Structured<MAddmm>>, s, m1, m2, beta, alpha);
}
at::Tensor& addmm_(at::Tensor& s, const at::Tensor& m1, const at::Tensor& m2, const at::Scalar& beta,
                   const at::Scalar& alpha) {
  return inplace<MAddmm>(s, addmm_impl<Structured<MAddmm>>, m1, m2, beta, alpha);
}
at::Tensor& addmm_out(const at::Tensor& s, const at::Tensor& m1, const at::Tensor& m2, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out) {
  // The CPU copies s into out first, which refuses a partial overlap.
  if (!out.is_same(s)) at::assert_no_partial_overlap(out, s);
  return out_variant<MAddmm>(out, addmm_impl<Structured<MAddmm>>, s, m1, m2, beta, alpha);
}

at::Tensor baddbmm(const at::Tensor& s, const at::Tensor& b1, const at::Tensor& b2, const at::Scalar& beta,
                   const at::Scalar& alpha) {
  return functional<MBaddbmm>(baddbmm_impl<Structured<MBaddbmm>>, s, b1, b2, beta, alpha);
}
at::Tensor& baddbmm_(at::Tensor& s, const at::Tensor& b1, const at::Tensor& b2, const at::Scalar& beta,
                     const at::Scalar& alpha) {
  return inplace<MBaddbmm>(s, baddbmm_impl<Structured<MBaddbmm>>, b1, b2, beta, alpha);
}
at::Tensor& baddbmm_out(const at::Tensor& s, const at::Tensor& b1, const at::Tensor& b2, const at::Scalar& beta,
                        const at::Scalar& alpha, at::Tensor& out) {
  return out_variant<MBaddbmm>(out, baddbmm_impl<Structured<MBaddbmm>>, s, b1, b2, beta, alpha);
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
  record_into(out, "mv", {read(s), read(vec)}, [](Builder& b, const Vals& v) { return ops::mv(b, v[0], v[1]); });
  return out;
}
at::Tensor& mv_out(const at::Tensor& s, const at::Tensor& vec, at::Tensor& out) {
  mv_check(s, vec);
  check_out(out, s, {s.size(0)});
  record_into(out, "mv", {read(s), read(vec)}, [](Builder& b, const Vals& v) { return ops::mv(b, v[0], v[1]); });
  return out;
}

at::Tensor addmv(const at::Tensor& s, const at::Tensor& mat, const at::Tensor& vec, const at::Scalar& beta,
                 const at::Scalar& alpha) {
  return functional<MAddmv>(addmv_impl<Structured<MAddmv>>, s, mat, vec, beta, alpha);
}
at::Tensor& addmv_(at::Tensor& s, const at::Tensor& mat, const at::Tensor& vec, const at::Scalar& beta,
                   const at::Scalar& alpha) {
  return inplace<MAddmv>(s, addmv_impl<Structured<MAddmv>>, mat, vec, beta, alpha);
}
at::Tensor& addmv_out(const at::Tensor& s, const at::Tensor& mat, const at::Tensor& vec, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out) {
  return out_variant<MAddmv>(out, addmv_impl<Structured<MAddmv>>, s, mat, vec, beta, alpha);
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

// ---- attention

int64_t _fused_sdp_choice(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const std::optional<at::Tensor>& mask, double dropout_p, bool is_causal,
                          std::optional<double> scale, bool enable_gqa) {
  return fused_sdp_choice_impl(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt, c10::SymInt, at::Tensor, at::Tensor, at::Tensor>
_scaled_dot_product_fused_attention_overrideable(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                 const std::optional<at::Tensor>& attn_bias, double dropout_p,
                                                 bool is_causal, bool return_debug_mask, std::optional<double> scale) {
  std::optional<at::Tensor> mask = defined_or_none(attn_bias);
  check_attention_inputs(q, k, v, mask, dropout_p);
  TORCH_CHECK(!return_debug_mask, "tpu fused attention: return_debug_mask is not supported");
  at::Device dev = common_device({&q, &k, &v});
  std::vector<engine::Ref> in{read(q), read(k), read(v), scale_operand(q, scale)};
  if (mask) in.push_back(read(*mask));
  std::vector<int64_t> out_shape(q.sizes().begin(), q.sizes().end());
  out_shape.back() = v.size(-1);
  std::vector<int64_t> lse_shape(q.sizes().begin(), q.sizes().end() - 1);
  shlo::DType qt = to_shlo(q.scalar_type());
  ops::AttentionSpec spec{is_causal};
  bool has_mask = mask.has_value();
  auto refs = engine::record(std::string("sdpa_fwd:") + (is_causal ? "causal" : "full") + (has_mask ? ":mask" : ""),
                             std::move(in),
                             {shlo::Type{qt, shape_of(out_shape)}, shlo::Type{shlo::DType::F32, shape_of(lse_shape)}},
                             [spec, has_mask](Builder& b, const Vals& x) {
                               std::optional<Value> m;
                               if (has_mask) m = x[4];
                               return ops::attention_forward(b, x[0], x[1], x[2], m, x[3], spec);
                             });
  at::Tensor out = wrap_like_layout(refs[0], q);
  at::Tensor lse = wrap(refs[1], dev);
  // The meta function gives 3-D inputs a batch of one: (1, H, L).
  if (q.dim() == 3) lse = lse.view({1, q.size(0), q.size(1)});
  auto seed = empty({}, at::kLong, dev), offset = empty({}, at::kLong, dev);
  return {out,  lse,    at::Tensor(), at::Tensor(), c10::SymInt(q.size(-2)), c10::SymInt(k.size(-2)),
          seed, offset, at::Tensor()};
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
  std::string key = std::string("sdpa_bwd:") + (is_causal ? "causal" : "full") + (mask ? ":mask:" : ":");
  const at::Tensor* like[4] = {&q, &k, &v, mask ? &*mask : nullptr};
  for (int i = 0; i < 4; ++i) {
    key += wanted[i] ? "1" : "0";
    if (wanted[i]) types.push_back(type_of(*like[i]));
  }
  std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> grads;
  if (types.empty()) return grads;
  ops::AttentionSpec spec{is_causal};
  bool has_mask = mask.has_value();
  auto refs = engine::record(key, std::move(in), types, [spec, has_mask, wanted](Builder& b, const Vals& x) {
    std::optional<Value> m;
    if (has_mask) m = x[6];
    return ops::attention_backward(b, x[0], x[1], x[2], x[3], m, x[4], x[5], spec, wanted);
  });
  at::Tensor* slot[4] = {&std::get<0>(grads), &std::get<1>(grads), &std::get<2>(grads), &std::get<3>(grads)};
  size_t j = 0;
  for (int i = 0; i < 4; ++i)
    if (wanted[i]) *slot[i] = wrap(refs[j++], dev);
  return grads;
}

}  // namespace tpu

namespace at::native {
// scaled_dot_product_attention asks this stub, not the _fused_sdp_choice op,
// which backend to take for a device type.
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &tpu::_fused_sdp_choice);
}  // namespace at::native
