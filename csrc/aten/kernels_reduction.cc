// Reductions, scans and losses: ATen entry points over ops/reduction
// (and the value check quantile adds in front of its composite).
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/all_meta.h>
#include <ATen/ops/amax_meta.h>
#include <ATen/ops/amin_meta.h>
#include <ATen/ops/aminmax_meta.h>
#include <ATen/ops/any_meta.h>
#include <ATen/ops/argmax_meta.h>
#include <ATen/ops/argmin_meta.h>
#include <ATen/ops/cumprod_meta.h>
#include <ATen/ops/cumsum_meta.h>
#include <ATen/ops/linalg_vector_norm_meta.h>
#include <ATen/ops/max_meta.h>
#include <ATen/ops/mean_meta.h>
#include <ATen/ops/min_meta.h>
#include <ATen/ops/mse_loss_meta.h>
#include <ATen/ops/nanquantile_native.h>
#include <ATen/ops/nll_loss_backward_meta.h>
#include <ATen/ops/nll_loss_forward_meta.h>
#include <ATen/ops/norm_meta.h>
#include <ATen/ops/prod_meta.h>
#include <ATen/ops/quantile_native.h>
#include <ATen/ops/sum_meta.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>

#include "aten/data_checks.h"
#include "aten/kernels.h"
#include "aten/library.h"
#include "aten/structured.h"
#include "ops/reduction/reduction.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;
using Dims = std::vector<int64_t>;

// The dims a reduction covers, wrapped and sorted. None (and, unless
// empty_is_none is false, an empty list) means every dim; a 0-d tensor has
// nothing to reduce.
Dims reduce_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool empty_is_all = true) {
  Dims d;
  int64_t r = self.dim();
  if (r == 0) {
    if (dim.has_value())
      for (int64_t x : *dim) c10::maybe_wrap_dim(x, r);  // range check only
    return d;
  }
  if (!dim.has_value() || (dim->empty() && empty_is_all)) {
    for (int64_t i = 0; i < r; ++i) d.push_back(i);
    return d;
  }
  for (int64_t x : *dim) d.push_back(c10::maybe_wrap_dim(x, r));
  std::sort(d.begin(), d.end());
  for (size_t i = 1; i < d.size(); ++i)
    TORCH_CHECK(d[i] != d[i - 1], "dim ", d[i], " appears multiple times in the list of dims");
  return d;
}

// The CPU's scan kernels walk out and self with a TensorIterator, which
// refuses any overlap between them but a full one.
void check_scan_out_overlap(const at::Tensor& self, const at::Tensor& out) {
  at::assert_no_internal_overlap(out);
  if (!out.is_same(self)) at::assert_no_partial_overlap(out, self);
}

Dims one_dim(const at::Tensor& self, int64_t dim) {
  int64_t w = c10::maybe_wrap_dim(dim, self.dim());
  return self.dim() == 0 ? Dims{} : Dims{w};
}

std::string dims_key(const Dims& d, bool keepdim) {
  std::string k = "[";
  for (int64_t x : d) k += std::to_string(x) + ",";
  return k + (keepdim ? "]k" : "]");
}

std::vector<int64_t> reduced_shape(const at::Tensor& self, const Dims& dims, bool keepdim) {
  std::vector<int64_t> s;
  for (int64_t i = 0; i < self.dim(); ++i) {
    bool r = std::find(dims.begin(), dims.end(), i) != dims.end();
    if (!r)
      s.push_back(self.size(i));
    else if (keepdim)
      s.push_back(1);
  }
  return s;
}

at::OptionalScalarRef opt_ref(const std::optional<at::Scalar>& s) {
  return s.has_value() ? at::OptionalScalarRef(*s) : at::OptionalScalarRef();
}
at::OptionalTensorRef opt_ref(const std::optional<at::Tensor>& t) {
  return t.has_value() && t->defined() ? at::OptionalTensorRef(*t) : at::OptionalTensorRef();
}

// out= without a meta function: dtype must match exactly; shape is resized.
void prepare_out(const at::Tensor& out, at::IntArrayRef shape, at::ScalarType dtype, const char* name) {
  TORCH_CHECK(out.scalar_type() == dtype, name, ": Expected out tensor to have dtype ", dtype, ", but got ",
              out.scalar_type(), " instead");
  at::native::resize_output(out, shape);
}

// ---- plain reductions: sum, prod, amax, amin, all, any

void reduce_into(const at::Tensor& out, const at::Tensor& self, const Dims& dims, bool keepdim, ops::Reduce kind,
                 const char* name) {
  shlo::DType o = to_shlo(out.scalar_type());
  legacy_write_all({out}, std::string(name) + dims_key(dims, keepdim) + ">" + shlo::dtype_name(o), {read(self)},
                   [=](Builder& b, const Vals& in) { return Vals{ops::reduce(b, in[0], kind, dims, keepdim, o)}; });
}

template <class M>
void sum_impl(M&, const at::Tensor& out, const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
              std::optional<at::ScalarType>) {
  reduce_into(out, self, reduce_dims(self, dim), keepdim, ops::Reduce::Sum, "sum");
}

template <class M>
void mean_impl(M&, const at::Tensor& out, const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
               std::optional<at::ScalarType>) {
  Dims dims = reduce_dims(self, dim);
  shlo::DType o = to_shlo(out.scalar_type());
  legacy_write_all({out}, "mean" + dims_key(dims, keepdim) + ">" + shlo::dtype_name(o), {read(self)},
                   [=](Builder& b, const Vals& in) { return Vals{ops::mean(b, in[0], dims, keepdim, o)}; });
}

template <class M>
void prod_impl(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, bool keepdim,
               std::optional<at::ScalarType>) {
  reduce_into(out, self, one_dim(self, dim), keepdim, ops::Reduce::Prod, "prod");
}

template <class M>
void amax_impl(M&, const at::Tensor& out, const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  reduce_into(out, self, reduce_dims(self, dim), keepdim, ops::Reduce::Max, "amax");
}

template <class M>
void amin_impl(M&, const at::Tensor& out, const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  reduce_into(out, self, reduce_dims(self, dim), keepdim, ops::Reduce::Min, "amin");
}

template <bool All>
struct AllAny {
  static constexpr ops::Reduce kind = All ? ops::Reduce::All : ops::Reduce::Any;
  static constexpr const char* name = All ? "all" : "any";
  template <class M>
  static void full(M&, const at::Tensor& out, const at::Tensor& self) {
    reduce_into(out, self, reduce_dims(self, std::nullopt), false, kind, name);
  }
  template <class M>
  static void dim(M&, const at::Tensor& out, const at::Tensor& self, int64_t d, bool keepdim) {
    reduce_into(out, self, one_dim(self, d), keepdim, kind, name);
  }
  template <class M>
  static void dims(M&, const at::Tensor& out, const at::Tensor& self, at::OptionalIntArrayRef d, bool keepdim) {
    // all(x, dim=[]) reduces nothing (unlike sum).
    reduce_into(out, self, reduce_dims(self, d, false), keepdim, kind, name);
  }
};

// ---- indices: max / min (dim), argmax / argmin

void minmax_dim_into(const at::Tensor& values, const at::Tensor& indices, const at::Tensor& self, int64_t dim,
                     bool keepdim, bool is_max) {
  int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  if (self.dim() == 0) {
    write(values, read(self));
    write(indices, engine::scalar_i64(0));
    return;
  }
  legacy_write_all({values, indices}, std::string(is_max ? "max_dim" : "min_dim") + dims_key({d}, keepdim),
                   {read(self)}, [=](Builder& b, const Vals& in) {
                     auto [v, i] = ops::arg_reduce(b, in[0], d, keepdim, is_max);
                     return Vals{v, i};
                   });
}

void arg_into(const at::Tensor& out, const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  std::string key = is_max ? "argmax" : "argmin";
  shlo::Shape out_shape = shape_of(out.sizes());
  if (!dim.has_value() || self.dim() == 0) {
    // No dim: over the flattened tensor.
    int64_t n = self.numel();
    legacy_write_all({out}, key + "_flat" + std::to_string(out_shape.size()), {read(self)},
                     [=](Builder& b, const Vals& in) {
                       Value flat = b.reshape(in[0], {n});
                       return Vals{b.reshape(ops::arg_reduce(b, flat, 0, false, is_max).second, out_shape)};
                     });
    return;
  }
  int64_t d = c10::maybe_wrap_dim(*dim, self.dim());
  legacy_write_all({out}, key + dims_key({d}, keepdim), {read(self)}, [=](Builder& b, const Vals& in) {
    return Vals{ops::arg_reduce(b, in[0], d, keepdim, is_max).second};
  });
}

template <class M>
void argmax_impl(M&, const at::Tensor& out, const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  arg_into(out, self, dim, keepdim, true);
}
template <class M>
void argmin_impl(M&, const at::Tensor& out, const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  arg_into(out, self, dim, keepdim, false);
}

// ---- norms

ops::NormOrd norm_ord(double o) {
  if (o == 0) return ops::NormOrd::Zero;
  if (o == 1) return ops::NormOrd::One;
  if (o == 2) return ops::NormOrd::Two;
  if (std::isinf(o)) return o > 0 ? ops::NormOrd::Inf : ops::NormOrd::NegInf;
  return ops::NormOrd::General;
}

void vector_norm_into(const at::Tensor& out, const at::Tensor& self, const at::Scalar& ord, const Dims& dims,
                      bool keepdim) {
  TORCH_CHECK(!self.is_complex(), "linalg.vector_norm: complex inputs are not supported on the tpu device");
  shlo::DType o = to_shlo(out.scalar_type());
  ops::NormOrd k = norm_ord(ord.toDouble());
  // Only the special orders change the program; any other p is an operand.
  legacy_write_all(
      {out}, "vector_norm" + std::to_string(static_cast<int>(k)) + dims_key(dims, keepdim) + ">" + shlo::dtype_name(o),
      {read(self), scalar_of(ord, shlo::DType::F32)},
      [=](Builder& b, const Vals& in) { return Vals{ops::vector_norm(b, in[0], k, in[1], dims, keepdim, o)}; });
}

template <class M>
void linalg_vector_norm_impl(M&, const at::Tensor& out, const at::Tensor& self, const at::Scalar& ord,
                             at::OptionalIntArrayRef dim, bool keepdim, std::optional<at::ScalarType>) {
  vector_norm_into(out, self, ord, reduce_dims(self, dim), keepdim);
}

template <class M>
void norm_impl(M&, const at::Tensor& out, const at::Tensor& self, at::OptionalScalarRef p, at::IntArrayRef dim,
               bool keepdim) {
  vector_norm_into(out, self, p.has_value() ? p.get() : at::Scalar(2.0), reduce_dims(self, dim), keepdim);
}
template <class M>
void norm_dtype_impl(M& m, const at::Tensor& out, const at::Tensor& self, at::OptionalScalarRef p, at::IntArrayRef dim,
                     bool keepdim, at::ScalarType) {
  norm_impl(m, out, self, p, dim, keepdim);
}

// ---- var / std

at::ScalarType var_dtype(const at::Tensor& self) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || at::isComplexType(self.scalar_type()),
              "std and var only support floating point and complex dtypes");
  TORCH_CHECK_TYPE(!self.is_complex(), "std and var of complex tensors are not supported on the tpu device");
  return self.scalar_type();
}

// Computes var or std (and, when mean_out is defined, the mean) into out.
void var_into(const at::Tensor& out, const at::Tensor& mean_out, const at::Tensor& self, const Dims& dims,
              const std::optional<at::Scalar>& correction, bool keepdim, bool take_sqrt) {
  shlo::DType o = to_shlo(out.scalar_type());
  bool with_mean = mean_out.defined();
  std::vector<at::Tensor> outs{out};
  if (with_mean) outs.push_back(mean_out);
  at::Scalar corr = correction.value_or(at::Scalar(1));
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(self.size(d));
  if (n - corr.toDouble() <= 0)
    TORCH_WARN(take_sqrt ? "std" : "var", with_mean ? "_mean" : "",
               "(): degrees of freedom is <= 0. Correction should be strictly less than ",
               "the reduction factor (input numel divided by output numel).");
  engine::Ref c = scalar_of(corr, ops::acc_type(o));
  legacy_write_all(outs, std::string(take_sqrt ? "std" : "var") + (with_mean ? "_mean" : "") + dims_key(dims, keepdim),
                   {read(self), c}, [=](Builder& b, const Vals& in) {
                     auto [v, m] = ops::var_mean(b, in[0], dims, keepdim, in[1], take_sqrt, o);
                     return with_mean ? Vals{v, m} : Vals{v};
                   });
}

at::Tensor var_like(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& corr,
                    bool keepdim, bool take_sqrt) {
  at::ScalarType dt = var_dtype(self);
  Dims dims = reduce_dims(self, dim);
  at::Tensor out = empty(reduced_shape(self, dims, keepdim), dt, self.device());
  var_into(out, at::Tensor(), self, dims, corr, keepdim, take_sqrt);
  return out;
}

at::Tensor& var_like_out(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& corr,
                         bool keepdim, at::Tensor& out, bool take_sqrt) {
  at::ScalarType dt = var_dtype(self);
  Dims dims = reduce_dims(self, dim);
  prepare_out(out, reduced_shape(self, dims, keepdim), dt, take_sqrt ? "std" : "var");
  var_into(out, at::Tensor(), self, dims, corr, keepdim, take_sqrt);
  return out;
}

std::tuple<at::Tensor, at::Tensor> var_mean_like(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                                 const std::optional<at::Scalar>& corr, bool keepdim, bool take_sqrt) {
  at::ScalarType dt = var_dtype(self);
  Dims dims = reduce_dims(self, dim);
  auto shape = reduced_shape(self, dims, keepdim);
  at::Tensor v = empty(shape, dt, self.device()), m = empty(shape, dt, self.device());
  var_into(v, m, self, dims, corr, keepdim, take_sqrt);
  return {v, m};
}

// ---- scans

void scan_into(const at::Tensor& out, const at::Tensor& self, int64_t dim, ops::Scan kind, const char* name) {
  int64_t d = c10::maybe_wrap_dim(dim, self.dim());  // 0-d: 0 (the lowering treats it as [1])
  shlo::DType o = to_shlo(out.scalar_type());
  legacy_write_all({out}, std::string(name) + std::to_string(d) + ">" + shlo::dtype_name(o), {read(self)},
                   [=](Builder& b, const Vals& in) { return Vals{ops::scan(b, in[0], kind, d, o)}; });
}

template <class M>
void cumsum_impl(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, std::optional<at::ScalarType>) {
  scan_into(out, self, dim, ops::Scan::Sum, "cumsum");
}
template <class M>
void cumprod_impl(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, std::optional<at::ScalarType>) {
  scan_into(out, self, dim, ops::Scan::Prod, "cumprod");
}

// ---- losses

void check_floating(const at::Tensor& t, const char* name) {
  TORCH_CHECK(at::isFloatingType(t.scalar_type()), "\"", name, "\" not implemented for '", t.scalar_type(), "'");
}

void check_reduction(int64_t reduction) {
  TORCH_CHECK(reduction >= 0 && reduction <= 2, "invalid reduction: ", reduction);
}

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
  legacy_write_all({output, total_weight}, "nll_loss" + std::to_string(reduction) + (has_w ? "w" : ""), in,
                   [=](Builder& b, const Vals& v) {
                     std::optional<Value> w;
                     if (has_w) w = v[3];
                     auto [o, t] = ops::nll_loss(b, v[0], v[1], w, reduction, v[2]);
                     return Vals{o, t};
                   });
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
  legacy_write_all({grad_input}, "nll_loss_bwd" + std::to_string(reduction) + (has_w ? "w" : ""), in,
                   [=](Builder& b, const Vals& v) {
                     std::optional<Value> w;
                     if (has_w) w = v[5];
                     return Vals{ops::nll_loss_backward(b, v[0], v[1], v[2], w, reduction, v[3], v[4])};
                   });
}

template <class M>
void nll_forward_impl(M& m, const at::Tensor& output, const at::Tensor& self, const at::Tensor& target,
                      at::OptionalTensorRef weight, int64_t reduction, int64_t ignore_index) {
  std::optional<at::Tensor> w;
  if (weight.has_value() && weight->defined()) w = *weight;
  nll_into(output, m.outs[1], self, target, w, reduction, ignore_index);
}

template <class M>
void nll_backward_impl(M&, const at::Tensor& grad_input, const at::Tensor& grad, const at::Tensor& self,
                       const at::Tensor& target, at::OptionalTensorRef weight, int64_t reduction, int64_t ignore_index,
                       const at::Tensor& total_weight) {
  std::optional<at::Tensor> w;
  if (weight.has_value() && weight->defined()) w = *weight;
  nll_backward_into(grad_input, grad, self, target, w, reduction, ignore_index, total_weight);
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

template <class M>
void mse_impl(M&, const at::Tensor& out, const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  check_reduction(reduction);
  check_floating(out, "mse_loss");
  shlo::DType o = to_shlo(out.scalar_type());
  shlo::Shape shape = shape_of(at::infer_size(self.sizes(), target.sizes()));
  legacy_write_all({out}, "mse_loss" + std::to_string(reduction) + ">" + shlo::dtype_name(o),
                   {broadcast(read(self), shape), broadcast(read(target), shape)},
                   [=](Builder& b, const Vals& in) { return Vals{ops::mse_loss(b, in[0], in[1], reduction, o)}; });
}

using MSum = at::meta::structured_sum_dim_IntList;
using MMean = at::meta::structured_mean_dim;
using MProd = at::meta::structured_prod_dim_int;
using MAmax = at::meta::structured_amax;
using MAmin = at::meta::structured_amin;
using MAll = at::meta::structured_all;
using MAllDim = at::meta::structured_all_dim;
using MAllDims = at::meta::structured_all_dims;
using MAny = at::meta::structured_any;
using MAnyDim = at::meta::structured_any_dim;
using MAnyDims = at::meta::structured_any_dims;
using MArgmax = at::meta::structured_argmax;
using MArgmin = at::meta::structured_argmin;
using MMaxDim = at::meta::structured_max_dim;
using MMinDim = at::meta::structured_min_dim;
using MAminmax = at::meta::structured_aminmax;
using MVecNorm = at::meta::structured_linalg_vector_norm;
using MNorm = at::meta::structured_norm_ScalarOpt_dim;
using MNormDtype = at::meta::structured_norm_ScalarOpt_dim_dtype;
using MCumsum = at::meta::structured_cumsum;
using MCumprod = at::meta::structured_cumprod;
using MNll = at::meta::structured_nll_loss_forward;
using MNllBwd = at::meta::structured_nll_loss_backward;
using MMse = at::meta::structured_mse_loss;

using All = AllAny<true>;
using Any = AllAny<false>;

}  // namespace

// ---- sum, mean, prod
at::Tensor sum_dim_IntList(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                           std::optional<at::ScalarType> dtype) {
  return functional<MSum>(sum_impl<Structured<MSum>>, self, dim, keepdim, dtype);
}
at::Tensor& sum_IntList_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype, at::Tensor& out) {
  return out_variant<MSum>(out, sum_impl<Structured<MSum>>, self, dim, keepdim, dtype);
}
at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  return functional<MMean>(mean_impl<Structured<MMean>>, self, dim, keepdim, dtype);
}
at::Tensor& mean_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype, at::Tensor& out) {
  return out_variant<MMean>(out, mean_impl<Structured<MMean>>, self, dim, keepdim, dtype);
}
at::Tensor prod(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  at::ScalarType dt = dtype.value_or(at::isIntegralType(self.scalar_type(), true) ? at::kLong : self.scalar_type());
  at::Tensor out = empty({}, dt, self.device());
  reduce_into(out, self, reduce_dims(self, std::nullopt), false, ops::Reduce::Prod, "prod");
  return out;
}
at::Tensor prod_dim_int(const at::Tensor& self, int64_t dim, bool keepdim, std::optional<at::ScalarType> dtype) {
  return functional<MProd>(prod_impl<Structured<MProd>>, self, dim, keepdim, dtype);
}
at::Tensor& prod_int_out(const at::Tensor& self, int64_t dim, bool keepdim, std::optional<at::ScalarType> dtype,
                         at::Tensor& out) {
  return out_variant<MProd>(out, prod_impl<Structured<MProd>>, self, dim, keepdim, dtype);
}

// ---- amax, amin, aminmax, max, min
at::Tensor amax(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  return functional<MAmax>(amax_impl<Structured<MAmax>>, self, dim, keepdim);
}
at::Tensor& amax_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  return out_variant<MAmax>(out, amax_impl<Structured<MAmax>>, self, dim, keepdim);
}
at::Tensor amin(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  return functional<MAmin>(amin_impl<Structured<MAmin>>, self, dim, keepdim);
}
at::Tensor& amin_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  return out_variant<MAmin>(out, amin_impl<Structured<MAmin>>, self, dim, keepdim);
}

static void aminmax_into(const at::Tensor& mn, const at::Tensor& mx, const at::Tensor& self, std::optional<int64_t> dim,
                         bool keepdim) {
  Dims dims = dim.has_value() ? one_dim(self, *dim) : reduce_dims(self, std::nullopt);
  shlo::DType o = to_shlo(self.scalar_type());
  legacy_write_all({mn, mx}, "aminmax" + dims_key(dims, keepdim), {read(self)}, [=](Builder& b, const Vals& in) {
    return Vals{ops::reduce(b, in[0], ops::Reduce::Min, dims, keepdim, o),
                ops::reduce(b, in[0], ops::Reduce::Max, dims, keepdim, o)};
  });
}
std::tuple<at::Tensor, at::Tensor> aminmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  Structured<MAminmax> m;
  m.meta(self, dim, keepdim);
  aminmax_into(m.outs[0], m.outs[1], self, dim, keepdim);
  return {m.outs[0], m.outs[1]};
}
std::tuple<at::Tensor&, at::Tensor&> aminmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                                                 at::Tensor& min, at::Tensor& max) {
  Structured<MAminmax> m({min, max});
  m.meta(self, dim, keepdim);
  aminmax_into(min, max, self, dim, keepdim);
  return {min, max};
}

static at::Tensor full_extreme(const at::Tensor& self, bool is_max) {
  TORCH_CHECK(self.numel() > 0, is_max ? "max" : "min",
              "(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with "
              "the 'dim' argument.");
  at::Tensor out = empty({}, self.scalar_type(), self.device());
  reduce_into(out, self, reduce_dims(self, std::nullopt), false, is_max ? ops::Reduce::Max : ops::Reduce::Min,
              is_max ? "max" : "min");
  return out;
}
static at::Tensor& full_extreme_out(const at::Tensor& self, at::Tensor& out, bool is_max) {
  TORCH_CHECK(self.numel() > 0, is_max ? "max" : "min",
              "(): Expected reduction dim to be specified for input.numel() == 0.");
  prepare_out(out, {}, self.scalar_type(), is_max ? "max" : "min");
  reduce_into(out, self, reduce_dims(self, std::nullopt), false, is_max ? ops::Reduce::Max : ops::Reduce::Min,
              is_max ? "max" : "min");
  return out;
}
at::Tensor max(const at::Tensor& self) { return full_extreme(self, true); }
at::Tensor min(const at::Tensor& self) { return full_extreme(self, false); }
at::Tensor& max_unary_out(const at::Tensor& self, at::Tensor& out) { return full_extreme_out(self, out, true); }
at::Tensor& min_unary_out(const at::Tensor& self, at::Tensor& out) { return full_extreme_out(self, out, false); }

template <class M>
static std::tuple<at::Tensor, at::Tensor> minmax_dim(const at::Tensor& self, int64_t dim, bool keepdim, bool is_max) {
  Structured<M> m;
  m.meta(self, dim, keepdim);
  minmax_dim_into(m.outs[0], m.outs[1], self, dim, keepdim, is_max);
  return {m.outs[0], m.outs[1]};
}
template <class M>
static std::tuple<at::Tensor&, at::Tensor&> minmax_dim_out(const at::Tensor& self, int64_t dim, bool keepdim,
                                                           at::Tensor& values, at::Tensor& indices, bool is_max) {
  Structured<M> m({values, indices});
  m.meta(self, dim, keepdim);
  minmax_dim_into(values, indices, self, dim, keepdim, is_max);
  return {values, indices};
}
std::tuple<at::Tensor, at::Tensor> max_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return minmax_dim<MMaxDim>(self, dim, keepdim, true);
}
std::tuple<at::Tensor&, at::Tensor&> max_dim_max(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& max,
                                                 at::Tensor& max_values) {
  return minmax_dim_out<MMaxDim>(self, dim, keepdim, max, max_values, true);
}
std::tuple<at::Tensor, at::Tensor> min_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return minmax_dim<MMinDim>(self, dim, keepdim, false);
}
std::tuple<at::Tensor&, at::Tensor&> min_dim_min(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& min,
                                                 at::Tensor& min_indices) {
  return minmax_dim_out<MMinDim>(self, dim, keepdim, min, min_indices, false);
}

// ---- argmax, argmin
at::Tensor argmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return functional<MArgmax>(argmax_impl<Structured<MArgmax>>, self, dim, keepdim);
}
at::Tensor& argmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, at::Tensor& out) {
  return out_variant<MArgmax>(out, argmax_impl<Structured<MArgmax>>, self, dim, keepdim);
}
at::Tensor argmin(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return functional<MArgmin>(argmin_impl<Structured<MArgmin>>, self, dim, keepdim);
}
at::Tensor& argmin_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, at::Tensor& out) {
  return out_variant<MArgmin>(out, argmin_impl<Structured<MArgmin>>, self, dim, keepdim);
}

// ---- all, any
at::Tensor all(const at::Tensor& self) { return functional<MAll>(All::full<Structured<MAll>>, self); }
at::Tensor all_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return functional<MAllDim>(All::dim<Structured<MAllDim>>, self, dim, keepdim);
}
at::Tensor all_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  return functional<MAllDims>(All::dims<Structured<MAllDims>>, self, dim, keepdim);
}
at::Tensor& all_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& out) {
  return out_variant<MAllDim>(out, All::dim<Structured<MAllDim>>, self, dim, keepdim);
}
at::Tensor& all_dims_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, at::Tensor& out) {
  return out_variant<MAllDims>(out, All::dims<Structured<MAllDims>>, self, dim, keepdim);
}
at::Tensor& all_all_out(const at::Tensor& self, at::Tensor& out) {
  return out_variant<MAll>(out, All::full<Structured<MAll>>, self);
}
at::Tensor any(const at::Tensor& self) { return functional<MAny>(Any::full<Structured<MAny>>, self); }
at::Tensor any_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return functional<MAnyDim>(Any::dim<Structured<MAnyDim>>, self, dim, keepdim);
}
at::Tensor any_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  return functional<MAnyDims>(Any::dims<Structured<MAnyDims>>, self, dim, keepdim);
}
at::Tensor& any_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& out) {
  return out_variant<MAnyDim>(out, Any::dim<Structured<MAnyDim>>, self, dim, keepdim);
}
at::Tensor& any_dims_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, at::Tensor& out) {
  return out_variant<MAnyDims>(out, Any::dims<Structured<MAnyDims>>, self, dim, keepdim);
}
at::Tensor& any_all_out(const at::Tensor& self, at::Tensor& out) {
  return out_variant<MAny>(out, Any::full<Structured<MAny>>, self);
}

// ---- var, std
at::Tensor var_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                          const std::optional<at::Scalar>& correction, bool keepdim) {
  return var_like(self, dim, correction, keepdim, false);
}
at::Tensor& var_correction_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                               const std::optional<at::Scalar>& correction, bool keepdim, at::Tensor& out) {
  return var_like_out(self, dim, correction, keepdim, out, false);
}
at::Tensor std_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                          const std::optional<at::Scalar>& correction, bool keepdim) {
  return var_like(self, dim, correction, keepdim, true);
}
at::Tensor& std_correction_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                               const std::optional<at::Scalar>& correction, bool keepdim, at::Tensor& out) {
  return var_like_out(self, dim, correction, keepdim, out, true);
}
std::tuple<at::Tensor, at::Tensor> var_mean_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                                       const std::optional<at::Scalar>& correction, bool keepdim) {
  return var_mean_like(self, dim, correction, keepdim, false);
}
std::tuple<at::Tensor, at::Tensor> std_mean_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                                       const std::optional<at::Scalar>& correction, bool keepdim) {
  return var_mean_like(self, dim, correction, keepdim, true);
}

// ---- logsumexp, norms, count_nonzero
static at::ScalarType logsumexp_dtype(const at::Tensor& self) {
  return at::isIntegralType(self.scalar_type(), true) ? at::typeMetaToScalarType(at::get_default_dtype())
                                                      : self.scalar_type();
}
static void logsumexp_into(const at::Tensor& out, const at::Tensor& self, const Dims& dims, bool keepdim) {
  shlo::DType o = to_shlo(out.scalar_type());
  legacy_write_all({out}, "logsumexp" + dims_key(dims, keepdim) + ">" + shlo::dtype_name(o), {read(self)},
                   [=](Builder& b, const Vals& in) { return Vals{ops::logsumexp(b, in[0], dims, keepdim, o)}; });
}
at::Tensor logsumexp(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  TORCH_CHECK(!self.is_complex(), "logsumexp(): complex inputs are not supported on the tpu device");
  Dims dims = reduce_dims(self, dim);
  at::Tensor out = empty(reduced_shape(self, dims, keepdim), logsumexp_dtype(self), self.device());
  logsumexp_into(out, self, dims, keepdim);
  return out;
}
at::Tensor& logsumexp_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  TORCH_CHECK(at::isFloatingType(out.scalar_type()),
              "logsumexp(): Expected floating point type for result tensor, but got: ", out.scalar_type());
  Dims dims = reduce_dims(self, dim);
  at::native::resize_output(out, reduced_shape(self, dims, keepdim));
  logsumexp_into(out, self, dims, keepdim);
  return out;
}

at::Tensor linalg_vector_norm(const at::Tensor& self, const at::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                              std::optional<at::ScalarType> dtype) {
  return functional<MVecNorm>(linalg_vector_norm_impl<Structured<MVecNorm>>, self, ord, dim, keepdim, dtype);
}
at::Tensor& linalg_vector_norm_out(const at::Tensor& self, const at::Scalar& ord, at::OptionalIntArrayRef dim,
                                   bool keepdim, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  return out_variant<MVecNorm>(out, linalg_vector_norm_impl<Structured<MVecNorm>>, self, ord, dim, keepdim, dtype);
}
at::Tensor norm_ScalarOpt_dim(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim,
                              bool keepdim) {
  return functional<MNorm>(norm_impl<Structured<MNorm>>, self, opt_ref(p), dim, keepdim);
}
at::Tensor norm_ScalarOpt_dim_dtype(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim,
                                    bool keepdim, at::ScalarType dtype) {
  return functional<MNormDtype>(norm_dtype_impl<Structured<MNormDtype>>, self, opt_ref(p), dim, keepdim, dtype);
}
at::Tensor& norm_out(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim, bool keepdim,
                     at::Tensor& out) {
  return out_variant<MNorm>(out, norm_impl<Structured<MNorm>>, self, opt_ref(p), dim, keepdim);
}
at::Tensor& norm_dtype_out(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim,
                           bool keepdim, at::ScalarType dtype, at::Tensor& out) {
  return out_variant<MNormDtype>(out, norm_dtype_impl<Structured<MNormDtype>>, self, opt_ref(p), dim, keepdim, dtype);
}

at::Tensor count_nonzero_dim_IntList(const at::Tensor& self, at::IntArrayRef dim) {
  Dims dims = reduce_dims(self, dim);
  at::Tensor out = empty(reduced_shape(self, dims, false), at::kLong, self.device());
  legacy_write_all({out}, "count_nonzero" + dims_key(dims, false), {read(self)},
                   [=](Builder& b, const Vals& in) { return Vals{ops::count_nonzero(b, in[0], dims)}; });
  return out;
}

// ---- cumsum, cumprod, logcumsumexp
at::Tensor cumsum(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  return functional<MCumsum>(cumsum_impl<Structured<MCumsum>>, self, dim, dtype);
}
at::Tensor& cumsum_(at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  return inplace<MCumsum>(self, cumsum_impl<Structured<MCumsum>>, dim, dtype);
}
at::Tensor& cumsum_out(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  check_scan_out_overlap(self, out);
  return out_variant<MCumsum>(out, cumsum_impl<Structured<MCumsum>>, self, dim, dtype);
}
at::Tensor cumprod(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  return functional<MCumprod>(cumprod_impl<Structured<MCumprod>>, self, dim, dtype);
}
at::Tensor& cumprod_(at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  return inplace<MCumprod>(self, cumprod_impl<Structured<MCumprod>>, dim, dtype);
}
at::Tensor& cumprod_out(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  check_scan_out_overlap(self, out);
  return out_variant<MCumprod>(out, cumprod_impl<Structured<MCumprod>>, self, dim, dtype);
}
static void check_logcumsumexp(const at::Tensor& self) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "\"logcumsumexp_tpu\" not implemented for '", self.scalar_type(),
              "'");
}
at::Tensor _logcumsumexp(const at::Tensor& self, int64_t dim) {
  check_logcumsumexp(self);
  at::Tensor out = empty(self.sizes(), self.scalar_type(), self.device());
  scan_into(out, self, dim, ops::Scan::LogAddExp, "logcumsumexp");
  return out;
}
at::Tensor& _logcumsumexp_out(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  check_logcumsumexp(self);
  prepare_out(out, self.sizes(), self.scalar_type(), "logcumsumexp");
  scan_into(out, self, dim, ops::Scan::LogAddExp, "logcumsumexp");
  return out;
}

// ---- nll_loss, nll_loss2d, mse_loss
std::tuple<at::Tensor, at::Tensor> nll_loss_forward(const at::Tensor& self, const at::Tensor& target,
                                                    const std::optional<at::Tensor>& weight, int64_t reduction,
                                                    c10::SymInt ignore_index) {
  Structured<MNll> m;
  m.meta(self, target, opt_ref(weight), reduction, ignore_index.expect_int());
  nll_forward_impl(m, m.outs[0], self, target, opt_ref(weight), reduction, ignore_index.expect_int());
  return {m.outs[0], m.outs[1]};
}
std::tuple<at::Tensor&, at::Tensor&> nll_loss_forward_output(const at::Tensor& self, const at::Tensor& target,
                                                             const std::optional<at::Tensor>& weight, int64_t reduction,
                                                             c10::SymInt ignore_index, at::Tensor& output,
                                                             at::Tensor& total_weight) {
  Structured<MNll> m({output, total_weight});
  m.meta(self, target, opt_ref(weight), reduction, ignore_index.expect_int());
  nll_forward_impl(m, output, self, target, opt_ref(weight), reduction, ignore_index.expect_int());
  return {output, total_weight};
}
at::Tensor nll_loss_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                             const std::optional<at::Tensor>& weight, int64_t reduction, c10::SymInt ignore_index,
                             const at::Tensor& total_weight) {
  return functional<MNllBwd>(nll_backward_impl<Structured<MNllBwd>>, grad, self, target, opt_ref(weight), reduction,
                             ignore_index.expect_int(), total_weight);
}
at::Tensor& nll_loss_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                         const std::optional<at::Tensor>& weight, int64_t reduction,
                                         c10::SymInt ignore_index, const at::Tensor& total_weight,
                                         at::Tensor& grad_input) {
  return out_variant<MNllBwd>(grad_input, nll_backward_impl<Structured<MNllBwd>>, grad, self, target, opt_ref(weight),
                              reduction, ignore_index.expect_int(), total_weight);
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
  prepare_out(output, reduction == 0 ? target.sizes() : at::IntArrayRef{}, self.scalar_type(), "nll_loss2d");
  prepare_out(total_weight, {}, self.scalar_type(), "nll_loss2d");
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
  prepare_out(grad_input, self.sizes(), self.scalar_type(), "nll_loss2d_backward");
  nll_backward_into(grad_input, grad, self, target, weight, reduction, ignore_index.expect_int(), total_weight);
  return grad_input;
}

at::Tensor mse_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  return functional<MMse>(mse_impl<Structured<MMse>>, self, target, reduction);
}
at::Tensor& mse_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, at::Tensor& out) {
  return out_variant<MMse>(out, mse_impl<Structured<MMse>>, self, target, reduction);
}
static void mse_backward_into(const at::Tensor& grad_input, const at::Tensor& grad, const at::Tensor& self,
                              const at::Tensor& target, int64_t reduction) {
  check_reduction(reduction);
  shlo::DType o = to_shlo(grad_input.scalar_type());
  shlo::Shape shape = shape_of(grad_input.sizes());
  legacy_write_all({grad_input}, "mse_loss_bwd" + std::to_string(reduction) + ">" + shlo::dtype_name(o),
                   {read(grad), broadcast(read(self), shape), read(target)}, [=](Builder& b, const Vals& in) {
                     return Vals{ops::mse_loss_backward(b, in[0], in[1], in[2], reduction, o)};
                   });
}
at::Tensor mse_loss_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                             int64_t reduction) {
  at::Tensor gi = empty(at::infer_size(self.sizes(), target.sizes()), self.scalar_type(), self.device());
  mse_backward_into(gi, grad, self, target, reduction);
  return gi;
}
at::Tensor& mse_loss_backward_grad_input(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                         int64_t reduction, at::Tensor& grad_input) {
  prepare_out(grad_input, at::infer_size(self.sizes(), target.sizes()), self.scalar_type(), "mse_loss_backward");
  mse_backward_into(grad_input, grad, self, target, reduction);
  return grad_input;
}

// ---- quantile / nanquantile with a tensor q
// PyTorch's composite checks q's values only for a CPU q (a CUDA one is
// not checked, to spare a wait): on the tpu the check is deferred, so q
// outside [0, 1] (or NaN) raises the CPU's error instead of reading out of
// the sorted data. The composite itself computes, under autograd (the
// AutogradPrivateUse1 registration) and below it (inference mode).
namespace {

void check_quantile_q(const at::Tensor& self, const at::Tensor& q) {
  // Fake and functional tensors (torch.compile tracing through this
  // registration) hold no device data: their calls go to the composite as
  // they did, like every traced graph's decomposed quantile.
  c10::DispatchKeySet traced({c10::DispatchKey::Python, c10::DispatchKey::Functionalize});
  if (self.key_set().has_any(traced) || q.key_set().has_any(traced)) return;
  // Only where the composite's own checks will pass: a call they refuse
  // raises at once and leaves no check behind.
  at::ScalarType t = self.scalar_type();
  if (self.numel() == 0 || q.dim() > 1 || (t != at::kFloat && t != at::kDouble) || q.scalar_type() != t ||
      q.device() != self.device())
    return;
  check_all_within(q, 0, 1, [] { TORCH_CHECK(false, "quantile() q values must be in the range [0, 1]"); });
}

at::Tensor quantile(const at::Tensor& self, const at::Tensor& q, std::optional<int64_t> dim, bool keepdim,
                    c10::string_view interpolation) {
  check_quantile_q(self, q);
  return at::native::quantile(self, q, dim, keepdim, interpolation);
}
at::Tensor& quantile_out(const at::Tensor& self, const at::Tensor& q, std::optional<int64_t> dim, bool keepdim,
                         c10::string_view interpolation, at::Tensor& out) {
  check_quantile_q(self, q);
  return at::native::quantile_out(self, q, dim, keepdim, interpolation, out);
}
at::Tensor nanquantile(const at::Tensor& self, const at::Tensor& q, std::optional<int64_t> dim, bool keepdim,
                       c10::string_view interpolation) {
  check_quantile_q(self, q);
  return at::native::nanquantile(self, q, dim, keepdim, interpolation);
}
at::Tensor& nanquantile_out(const at::Tensor& self, const at::Tensor& q, std::optional<int64_t> dim, bool keepdim,
                            c10::string_view interpolation, at::Tensor& out) {
  check_quantile_q(self, q);
  return at::native::nanquantile_out(self, q, dim, keepdim, interpolation, out);
}

void register_quantile(Kernels m) {
  m.impl("quantile", &quantile);
  m.impl("quantile.out", &quantile_out);
  m.impl("nanquantile", &nanquantile);
  m.impl("nanquantile.out", &nanquantile_out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { register_quantile(Kernels(m)); }
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) { register_quantile(Kernels(m)); }

}  // namespace tpu
