// Reductions: ATen entry points and their registration. sum, mean, prod,
// amax / amin / aminmax, max / min (full and along a dim), argmax / argmin,
// all / any, var / std (and their _mean), logsumexp, vector norms,
// count_nonzero, nansum, trace, equal and renorm. PyTorch's structured meta
// functions give the results' shapes and dtypes where the op has one; the
// lowerings are reduction.h. (quantile: aten_quantile.cc.)
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/all_meta.h>
#include <ATen/ops/amax_meta.h>
#include <ATen/ops/amin_meta.h>
#include <ATen/ops/aminmax_meta.h>
#include <ATen/ops/any_meta.h>
#include <ATen/ops/argmax_meta.h>
#include <ATen/ops/argmin_meta.h>
#include <ATen/ops/linalg_vector_norm_meta.h>
#include <ATen/ops/max_meta.h>
#include <ATen/ops/mean_meta.h>
#include <ATen/ops/min_meta.h>
#include <ATen/ops/norm_meta.h>
#include <ATen/ops/prod_meta.h>
#include <ATen/ops/renorm_meta.h>
#include <ATen/ops/sum_meta.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "aten/errors.h"
#include "aten/library.h"
#include "ops/common/aten_common.h"
#include "ops/reduction/reduction.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;
using Dims = std::vector<int64_t>;

// The dims a reduction covers, wrapped and sorted. None (and, unless
// empty_is_all is false, an empty list) means every dim; a 0-d tensor has
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
  // As the CPU's dim masks (64 bits): a dim list needs at most 64 dims.
  TORCH_CHECK(dim->empty() || r <= 64, "only tensors with up to 64 dims are supported");
  for (int64_t x : *dim) d.push_back(c10::maybe_wrap_dim(x, r));
  std::sort(d.begin(), d.end());
  for (size_t i = 1; i < d.size(); ++i)
    TORCH_CHECK(d[i] != d[i - 1], "dim ", d[i], " appears multiple times in the list of dims");
  return d;
}

Dims one_dim(const at::Tensor& self, int64_t dim) {
  int64_t w = c10::maybe_wrap_dim(dim, self.dim());
  return self.dim() == 0 ? Dims{} : Dims{w};
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

// ---- plain reductions: sum, prod, amax, amin, all, any, max, min

// `name`: the op's name (a literal); its kind selects the lowering.
// A reduction of a whole tensor padded to a size class (an attention
// mask's all(), generate()'s checks): its padding is made neutral (zero for
// a sum, one for a product, a copy of the row's first element for the
// rest), so one program serves every length of the class.
bool reduce_classed(const at::Tensor& out, const at::Tensor& self, const Dims& dims, ops::Reduce kind) {
  if (self.dim() == 0 || static_cast<int64_t>(dims.size()) != self.dim()) return false;
  std::optional<Classed> c = read_classed(self);
  if (!c) return false;
  engine::Ref r = op1(
      "reduce_classed", {c->value, c->len}, type_of(out),
      [](Builder& b, const Vals& in, ops::Reduce k, int64_t outer, int64_t cap, int64_t inner,
         const std::vector<int64_t>& shape, shlo::DType o) {
        Value x = b.reshape(in[0], {outer, cap, inner});
        const shlo::Type t{x.dtype(), {outer, cap, inner}};
        Value live = b.compare(shlo::Cmp::LT, b.iota(shlo::Type{shlo::DType::S64, t.shape}, 1),
                               b.broadcast_in_dim(in[1], t.shape, {}));
        Value neutral;
        if (k == ops::Reduce::Sum || k == ops::Reduce::Prod)
          neutral = b.constant(x.dtype(), k == ops::Reduce::Sum ? 0 : 1, t.shape);
        else
          neutral = b.broadcast_in_dim(b.reshape(b.slice(x, {0, 0, 0}, {outer, 1, inner}, {1, 1, 1}), {outer, inner}),
                                       t.shape, {0, 2});
        return Vals{b.reshape(ops::reduce(b, b.select(live, x, neutral), k, {0, 1, 2}, false, o), shape)};
      },
      kind, c->outer, c->cap, c->inner, std::vector<int64_t>(out.sizes().begin(), out.sizes().end()),
      to_shlo(out.scalar_type()));
  write(out, serving_class(r, c->cap));
  return true;
}

void reduce_into(const at::Tensor& out, const at::Tensor& self, const Dims& dims, bool keepdim, ops::Reduce kind,
                 const char* name) {
  if (reduce_classed(out, self, dims, kind)) return;
  write_all(
      {out}, name, {read(self)},
      [](Builder& b, const Vals& in, ops::Reduce k, const Dims& d, bool kd, shlo::DType o) {
        return Vals{ops::reduce(b, in[0], k, d, kd, o)};
      },
      kind, dims, keepdim, to_shlo(out.scalar_type()));
}

struct Sum {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType>) const {
    reduce_into(out, self, reduce_dims(self, dim), keepdim, ops::Reduce::Sum, "sum");
  }
};

struct Mean {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType>) const {
    write_all(
        {out}, "mean", {read(self)},
        [](Builder& b, const Vals& in, const Dims& d, bool kd, shlo::DType o) {
          return Vals{ops::mean(b, in[0], d, kd, o)};
        },
        reduce_dims(self, dim), keepdim, to_shlo(out.scalar_type()));
  }
};

struct Prod {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t dim, bool keepdim,
                  std::optional<at::ScalarType>) const {
    reduce_into(out, self, one_dim(self, dim), keepdim, ops::Reduce::Prod, "prod");
  }
};

at::Tensor prod(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  at::ScalarType dt = dtype.value_or(at::isIntegralType(self.scalar_type(), true) ? at::kLong : self.scalar_type());
  at::Tensor out = empty({}, dt, self.device());
  reduce_into(out, self, reduce_dims(self, std::nullopt), false, ops::Reduce::Prod, "prod");
  return out;
}

template <bool Max>
struct Extreme {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, at::IntArrayRef dim, bool keepdim) const {
    reduce_into(out, self, reduce_dims(self, dim), keepdim, Max ? ops::Reduce::Max : ops::Reduce::Min,
                Max ? "amax" : "amin");
  }
};

template <bool All>
struct AllAny {
  static constexpr ops::Reduce kind = All ? ops::Reduce::All : ops::Reduce::Any;
  static constexpr const char* name = All ? "all" : "any";
  struct Full {
    template <class M>
    void operator()(M&, const at::Tensor& out, const at::Tensor& self) const {
      reduce_into(out, self, reduce_dims(self, std::nullopt), false, kind, name);
    }
  };
  struct Dim {
    template <class M>
    void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t d, bool keepdim) const {
      reduce_into(out, self, one_dim(self, d), keepdim, kind, name);
    }
  };
  struct DimList {
    template <class M>
    void operator()(M&, const at::Tensor& out, const at::Tensor& self, at::OptionalIntArrayRef d, bool keepdim) const {
      // all(x, dim=[]) reduces nothing (unlike sum).
      reduce_into(out, self, reduce_dims(self, d, false), keepdim, kind, name);
    }
  };
};

// ---- aminmax, full max / min

void aminmax_into(const at::Tensor& mn, const at::Tensor& mx, const at::Tensor& self, std::optional<int64_t> dim,
                  bool keepdim) {
  Dims dims = dim.has_value() ? one_dim(self, *dim) : reduce_dims(self, std::nullopt);
  write_all(
      {mn, mx}, "aminmax", {read(self)},
      [](Builder& b, const Vals& in, const Dims& d, bool kd, shlo::DType o) {
        return Vals{ops::reduce(b, in[0], ops::Reduce::Min, d, kd, o),
                    ops::reduce(b, in[0], ops::Reduce::Max, d, kd, o)};
      },
      dims, keepdim, to_shlo(self.scalar_type()));
}
std::tuple<at::Tensor, at::Tensor> aminmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  Structured<at::meta::structured_aminmax> m;
  m.meta(self, dim, keepdim);
  aminmax_into(m.outs[0], m.outs[1], self, dim, keepdim);
  return {m.outs[0], m.outs[1]};
}
std::tuple<at::Tensor&, at::Tensor&> aminmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                                                 at::Tensor& min, at::Tensor& max) {
  Structured<at::meta::structured_aminmax> m({min, max});
  m.meta(self, dim, keepdim);
  aminmax_into(min, max, self, dim, keepdim);
  return {min, max};
}

template <bool Max>
at::Tensor full_extreme(const at::Tensor& self) {
  TORCH_CHECK(self.numel() > 0, Max ? "max" : "min",
              "(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with "
              "the 'dim' argument.");
  at::Tensor out = empty({}, self.scalar_type(), self.device());
  reduce_into(out, self, reduce_dims(self, std::nullopt), false, Max ? ops::Reduce::Max : ops::Reduce::Min,
              Max ? "max" : "min");
  return out;
}
template <bool Max>
at::Tensor& full_extreme_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(self.numel() > 0, Max ? "max" : "min",
              "(): Expected reduction dim to be specified for input.numel() == 0.");
  resize_out(out, {}, self.scalar_type(), Max ? "max" : "min");
  reduce_into(out, self, reduce_dims(self, std::nullopt), false, Max ? ops::Reduce::Max : ops::Reduce::Min,
              Max ? "max" : "min");
  return out;
}

// ---- values and indices: max / min along a dim, argmax / argmin

template <bool Max>
void minmax_dim_into(const at::Tensor& values, const at::Tensor& indices, const at::Tensor& self, int64_t dim,
                     bool keepdim) {
  int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  if (self.dim() == 0) {
    write(values, read(self));
    write(indices, engine::scalar_i64(0));
    return;
  }
  write_all(
      {values, indices}, Max ? "max_dim" : "min_dim", {read(self)},
      [](Builder& b, const Vals& in, int64_t dd, bool kd) {
        auto [v, i] = ops::arg_reduce(b, in[0], dd, kd, Max);
        return Vals{v, i};
      },
      d, keepdim);
}

template <bool Max>
std::tuple<at::Tensor, at::Tensor> minmax_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  using Meta = std::conditional_t<Max, at::meta::structured_max_dim, at::meta::structured_min_dim>;
  Structured<Meta> m;
  m.meta(self, dim, keepdim);
  minmax_dim_into<Max>(m.outs[0], m.outs[1], self, dim, keepdim);
  return {m.outs[0], m.outs[1]};
}
template <bool Max>
std::tuple<at::Tensor&, at::Tensor&> minmax_dim_out(const at::Tensor& self, int64_t dim, bool keepdim,
                                                    at::Tensor& values, at::Tensor& indices) {
  using Meta = std::conditional_t<Max, at::meta::structured_max_dim, at::meta::structured_min_dim>;
  Structured<Meta> m({values, indices});
  m.meta(self, dim, keepdim);
  minmax_dim_into<Max>(values, indices, self, dim, keepdim);
  return {values, indices};
}

template <bool Max>
struct Arg {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) const {
    if (!dim.has_value() || self.dim() == 0) {
      // No dim: over the flattened tensor.
      write_all(
          {out}, Max ? "argmax_flat" : "argmin_flat", {read(self)},
          [](Builder& b, const Vals& in, int64_t n, const shlo::Shape& out_shape) {
            Value flat = b.reshape(in[0], {n});
            return Vals{b.reshape(ops::arg_reduce(b, flat, 0, false, Max).second, out_shape)};
          },
          self.numel(), shape_of(out.sizes()));
      return;
    }
    write_all(
        {out}, Max ? "argmax" : "argmin", {read(self)},
        [](Builder& b, const Vals& in, int64_t d, bool kd) {
          return Vals{ops::arg_reduce(b, in[0], d, kd, Max).second};
        },
        c10::maybe_wrap_dim(*dim, self.dim()), keepdim);
  }
};

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
  // Only the special orders change the program; any other p is an operand.
  write_all(
      {out}, "vector_norm", {read(self), scalar_of(ord, shlo::DType::F32)},
      [](Builder& b, const Vals& in, ops::NormOrd k, const Dims& d, bool kd, shlo::DType o) {
        return Vals{ops::vector_norm(b, in[0], k, in[1], d, kd, o)};
      },
      norm_ord(ord.toDouble()), dims, keepdim, to_shlo(out.scalar_type()));
}

struct VectorNorm {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, const at::Scalar& ord, at::OptionalIntArrayRef dim,
                  bool keepdim, std::optional<at::ScalarType>) const {
    vector_norm_into(out, self, ord, reduce_dims(self, dim), keepdim);
  }
};

// norm.ScalarOpt_dim(_dtype): the meta functions take p as an
// OptionalScalarRef, the schema as an optional Scalar, hence the wrappers.
void norm_impl(const at::Tensor& out, const at::Tensor& self, at::OptionalScalarRef p, at::IntArrayRef dim,
               bool keepdim) {
  vector_norm_into(out, self, p.has_value() ? p.get() : at::Scalar(2.0), reduce_dims(self, dim), keepdim);
}
at::Tensor norm_ScalarOpt_dim(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim,
                              bool keepdim) {
  Structured<at::meta::structured_norm_ScalarOpt_dim> m;
  m.meta(self, opt_ref(p), dim, keepdim);
  norm_impl(m.outs[0], self, opt_ref(p), dim, keepdim);
  return m.outs[0];
}
at::Tensor& norm_out(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim, bool keepdim,
                     at::Tensor& out) {
  Structured<at::meta::structured_norm_ScalarOpt_dim> m({out});
  m.meta(self, opt_ref(p), dim, keepdim);
  norm_impl(out, self, opt_ref(p), dim, keepdim);
  return out;
}
at::Tensor norm_ScalarOpt_dim_dtype(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim,
                                    bool keepdim, at::ScalarType dtype) {
  Structured<at::meta::structured_norm_ScalarOpt_dim_dtype> m;
  m.meta(self, opt_ref(p), dim, keepdim, dtype);
  norm_impl(m.outs[0], self, opt_ref(p), dim, keepdim);
  return m.outs[0];
}
at::Tensor& norm_dtype_out(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim,
                           bool keepdim, at::ScalarType dtype, at::Tensor& out) {
  Structured<at::meta::structured_norm_ScalarOpt_dim_dtype> m({out});
  m.meta(self, opt_ref(p), dim, keepdim, dtype);
  norm_impl(out, self, opt_ref(p), dim, keepdim);
  return out;
}

struct Renorm {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, const at::Scalar& p, int64_t dim,
                  const at::Scalar& maxnorm) const {
    dim = at::maybe_wrap_dim(dim, self.dim());
    if (out.numel() == 0) return;
    shlo::DType acc = self.scalar_type() == at::kDouble ? shlo::DType::F64 : shlo::DType::F32;
    write_all(
        {out}, "renorm", {read(self), scalar_of(p, acc), scalar_of(maxnorm, acc)},
        [](Builder& b, const Vals& in, int64_t d, ops::NormOrd k) {
          return Vals{ops::renorm(b, in[0], in[1], d, in[2], k)};
        },
        dim, norm_ord(p.toDouble()));
  }
};

// ---- var / std

at::ScalarType var_dtype(const at::Tensor& self) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || at::isComplexType(self.scalar_type()),
              "std and var only support floating point and complex dtypes");
  return at::toRealValueType(self.scalar_type());  // a complex input's variance is real
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
  const char* name = take_sqrt ? (with_mean ? "std_mean" : "std") : (with_mean ? "var_mean" : "var");
  write_all(
      outs, name, {read(self), scalar_of(corr, ops::acc_type(o))},
      [](Builder& b, const Vals& in, const Dims& d, bool kd, bool sqrt, bool both, shlo::DType od) {
        auto [v, m] = ops::var_mean(b, in[0], d, kd, in[1], sqrt, od);
        return both ? Vals{v, m} : Vals{v};
      },
      dims, keepdim, take_sqrt, with_mean, o);
}

template <bool Sqrt>
at::Tensor var_like(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& corr,
                    bool keepdim) {
  at::ScalarType dt = var_dtype(self);
  Dims dims = reduce_dims(self, dim);
  at::Tensor out = empty(reduced_shape(self, dims, keepdim), dt, self.device());
  var_into(out, at::Tensor(), self, dims, corr, keepdim, Sqrt);
  return out;
}

template <bool Sqrt>
at::Tensor& var_like_out(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& corr,
                         bool keepdim, at::Tensor& out) {
  if (self.is_complex() && out.is_complex()) {
    // As the CPU: a complex out takes the (real) result.
    at::Tensor real = var_like<Sqrt>(self, dim, corr, keepdim);
    at::native::resize_output(out, real.sizes());
    out.copy_(real);
    return out;
  }
  at::ScalarType dt = var_dtype(self);
  Dims dims = reduce_dims(self, dim);
  resize_out(out, reduced_shape(self, dims, keepdim), dt, Sqrt ? "std" : "var");
  var_into(out, at::Tensor(), self, dims, corr, keepdim, Sqrt);
  return out;
}

template <bool Sqrt>
std::tuple<at::Tensor, at::Tensor> var_mean_like(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                                 const std::optional<at::Scalar>& corr, bool keepdim) {
  at::ScalarType dt = var_dtype(self);
  Dims dims = reduce_dims(self, dim);
  auto shape = reduced_shape(self, dims, keepdim);
  at::Tensor v = empty(shape, dt, self.device()), m = empty(shape, self.scalar_type(), self.device());
  var_into(v, m, self, dims, corr, keepdim, Sqrt);
  return {v, m};
}

// ---- logsumexp, count_nonzero

void logsumexp_into(const at::Tensor& out, const at::Tensor& self, const Dims& dims, bool keepdim) {
  write_all(
      {out}, "logsumexp", {read(self)},
      [](Builder& b, const Vals& in, const Dims& d, bool kd, shlo::DType o) {
        return Vals{ops::logsumexp(b, in[0], d, kd, o)};
      },
      dims, keepdim, to_shlo(out.scalar_type()));
}
at::Tensor logsumexp(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  Dims dims = reduce_dims(self, dim);
  at::ScalarType dt = at::isIntegralType(self.scalar_type(), true) ? at::typeMetaToScalarType(at::get_default_dtype())
                                                                   : self.scalar_type();
  at::Tensor out = empty(reduced_shape(self, dims, keepdim), dt, self.device());
  logsumexp_into(out, self, dims, keepdim);
  return out;
}
at::Tensor& logsumexp_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  TORCH_CHECK(at::isFloatingType(out.scalar_type()) || at::isComplexType(out.scalar_type()),
              "logsumexp(): Expected floating point type for result tensor, but got: ", out.scalar_type());
  Dims dims = reduce_dims(self, dim);
  at::native::resize_output(out, reduced_shape(self, dims, keepdim));
  logsumexp_into(out, self, dims, keepdim);
  return out;
}

at::Tensor count_nonzero_dim_IntList(const at::Tensor& self, at::IntArrayRef dim) {
  Dims dims = reduce_dims(self, dim);
  at::Tensor out = empty(reduced_shape(self, dims, false), at::kLong, self.device());
  write_all(
      {out}, "count_nonzero", {read(self)},
      [](Builder& b, const Vals& in, const Dims& d) { return Vals{ops::count_nonzero(b, in[0], d)}; }, dims);
  return out;
}

// ---- nansum, trace, equal

// nansum has sum's schema and shape rules: sum's meta function serves it.
struct Nansum {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType>) const {
    TORCH_CHECK(!c10::isComplexType(self.scalar_type()), "nansum does not support complex inputs");
    write_all(
        {out}, "nansum", {read(self)},
        [](Builder& b, const Vals& in, const Dims& d, bool kd, shlo::DType o) {
          return Vals{ops::nansum(b, in[0], d, kd, o)};
        },
        reduce_dims(self, dim), keepdim, to_shlo(out.scalar_type()));
  }
};

at::Tensor trace(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  at::ScalarType ot = at::isIntegralType(self.scalar_type(), true) ? at::kLong : self.scalar_type();
  shlo::DType o = to_shlo(ot);
  return wrap(op1(
                  "trace", {read(self)}, shlo::Type{o, {}},
                  [](Builder& b, const Vals& in, shlo::DType od) { return Vals{ops::trace(b, in[0], od)}; }, o),
              self.device());
}

// equal answers a host bool: it reads the device's answer back.
bool equal(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.device() == other.device(), "Cannot compare two tensors on different devices. Got: ", self.device(),
              " and ", other.device());
  if (self.sizes() != other.sizes()) return false;
  if (self.numel() == 0) return true;
  shlo::DType c = to_shlo(at::result_type(self, other));
  engine::Ref r = op1("equal", {read_as(self, c), read_as(other, c)}, shlo::Type{shlo::DType::PRED, {}},
                      [](Builder& b, const Vals& in) { return Vals{ops::all_equal(b, in[0], in[1])}; });
  uint8_t same = 0;
  guarded("reading a value back", [&] { engine::to_host(r, &same, sizeof(same)); });
  return same;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  using All = AllAny<true>;
  using Any = AllAny<false>;
  Kernels m(lib);
  m.structured<at::meta::structured_all>("all", nullptr, "all.all_out", All::Full{});
  m.structured<at::meta::structured_all_dim>("all.dim", nullptr, "all.out", All::Dim{});
  m.structured<at::meta::structured_all_dims>("all.dims", nullptr, "all.dims_out", All::DimList{});
  m.structured<at::meta::structured_amax>("amax", nullptr, "amax.out", Extreme<true>{});
  m.structured<at::meta::structured_amin>("amin", nullptr, "amin.out", Extreme<false>{});
  m.impl("aminmax", &aminmax);
  m.impl("aminmax.out", &aminmax_out);
  m.structured<at::meta::structured_any>("any", nullptr, "any.all_out", Any::Full{});
  m.structured<at::meta::structured_any_dim>("any.dim", nullptr, "any.out", Any::Dim{});
  m.structured<at::meta::structured_any_dims>("any.dims", nullptr, "any.dims_out", Any::DimList{});
  m.structured<at::meta::structured_argmax>("argmax", nullptr, "argmax.out", Arg<true>{});
  m.structured<at::meta::structured_argmin>("argmin", nullptr, "argmin.out", Arg<false>{});
  m.impl("count_nonzero.dim_IntList", &count_nonzero_dim_IntList);
  m.impl("equal", &equal);
  m.structured<at::meta::structured_linalg_vector_norm>("linalg_vector_norm", nullptr, "linalg_vector_norm.out",
                                                        VectorNorm{});
  m.impl("logsumexp", &logsumexp);
  m.impl("logsumexp.out", &logsumexp_out);
  m.impl("max", &full_extreme<true>);
  m.impl("max.dim", &minmax_dim<true>);
  m.impl("max.dim_max", &minmax_dim_out<true>);
  m.impl("max.unary_out", &full_extreme_out<true>);
  m.structured<at::meta::structured_mean_dim>("mean.dim", nullptr, "mean.out", Mean{});
  m.impl("min", &full_extreme<false>);
  m.impl("min.dim", &minmax_dim<false>);
  m.impl("min.dim_min", &minmax_dim_out<false>);
  m.impl("min.unary_out", &full_extreme_out<false>);
  m.structured<at::meta::structured_sum_dim_IntList>("nansum", nullptr, "nansum.out", Nansum{});
  m.impl("norm.ScalarOpt_dim", &norm_ScalarOpt_dim);
  m.impl("norm.ScalarOpt_dim_dtype", &norm_ScalarOpt_dim_dtype);
  m.impl("norm.dtype_out", &norm_dtype_out);
  m.impl("norm.out", &norm_out);
  m.impl("prod", &prod);
  m.structured<at::meta::structured_prod_dim_int>("prod.dim_int", nullptr, "prod.int_out", Prod{});
  m.structured<at::meta::structured_renorm>("renorm", "renorm_", "renorm.out", Renorm{});
  m.impl("std.correction", &var_like<true>);
  m.impl("std.correction_out", &var_like_out<true>);
  m.impl("std_mean.correction", &var_mean_like<true>);
  m.structured<at::meta::structured_sum_dim_IntList>("sum.dim_IntList", nullptr, "sum.IntList_out", Sum{});
  m.impl("trace", &trace);
  m.impl("var.correction", &var_like<false>);
  m.impl("var.correction_out", &var_like_out<false>);
  m.impl("var_mean.correction", &var_mean_like<false>);
}

}  // namespace tpu
