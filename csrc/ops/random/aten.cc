// Random fills, dropout, random permutations and sampling: ATen entry points
// and their registration. Argument checks come from PyTorch's own
// distribution templates so errors match the CPU's; each op records one node
// whose rng state is a runtime operand drawn from the tpu generator
// (aten/device.h), and whose lowering is random.h.
#include <ATen/MemoryOverlap.h>
#include <ATen/native/DistributionTemplates.h>

#include <limits>

#include "aten/data_checks.h"
#include "aten/device.h"
#include "aten/library.h"
#include "aten/structured.h"
#include "aten/tensor.h"
#include "engine/program.h"
#include "ops/common/aten_common.h"
#include "ops/common/lowering.h"
#include "ops/random/random.h"

namespace tpu {

namespace {

using shlo::DType;
using Vals = std::vector<shlo::Value>;

// The rng state operand (u64[2]) for one random op on `device`; advances
// the generator's counter so every call gets a fresh stream.
engine::Ref rng_state(const std::optional<at::Generator>& gen, const at::Device& device) {
  at::Generator& g = generator_or_default(gen, device.index());
  TORCH_CHECK(g.device().type() == c10::DeviceType::PrivateUse1,
              "Expected a 'tpu' device type for generator but found '", g.device().type(), "'");
  if (engine::Trace* t = engine::tracing()) {
    // Inside a compiled graph the state is a parameter drawn at each call,
    // so every call advances the generator as the eager op would.
    engine::Ref r = engine::placeholder(shlo::Type{DType::U64, {2}});
    t->fresh.emplace_back(r, [g, at = device.index()]() mutable {
      at::Generator gen = g;
      auto [seed, counter] = next_random_key(gen);
      std::array<uint64_t, 2> s = ops::random_state(seed, counter);
      return engine::from_host(s.data(), shlo::Type{DType::U64, {2}}, at).node->buffers[0];
    });
    return r;
  }
  auto [seed, counter] = next_random_key(g);
  std::array<uint64_t, 2> s = ops::random_state(seed, counter);
  return engine::from_host(s.data(), shlo::Type{DType::U64, {2}}, device.index());
}

engine::Ref param(double v, DType c) { return scalar_of(at::Scalar(v), c); }

// The node of a random fill: draw(builder, inputs, type) computes the value
// of type `t`; a complex result gets its real and imaginary parts from one
// real draw of shape [2, ...] (PyTorch fills view_as_real(self)).
template <class Draw>
struct FillLowering {
  Vals operator()(shlo::Builder& b, const Vals& in, const shlo::Type& t) const {
    if (!shlo::is_complex(t.dtype)) return {Draw{}(b, in, t)};
    shlo::Type parts{ops::real_of(t.dtype), t.shape};
    parts.shape.insert(parts.shape.begin(), 2);
    return {ops::complex_from_parts(b, Draw{}(b, in, parts))};
  }
};

// Records `name` over (state, extra...) producing a value shaped like self,
// and stores it into self.
template <class Draw>
void fill(const at::Tensor& self, engine::OpName name, const std::optional<at::Generator>& gen,
          std::vector<engine::Ref> extra, Draw) {
  if (self.numel() == 0) return;
  shlo::Type ty = type_of(self);
  extra.insert(extra.begin(), rng_state(gen, self.device()));
  write(self, op1(name, std::move(extra), ty, FillLowering<Draw>{}, ty));
}

// The real dtype a random fill of self computes its parameters in.
DType param_dtype(const at::Tensor& self) {
  DType d = to_shlo(self.scalar_type());
  if (d == DType::C128) return DType::F64;
  if (d == DType::C64) return DType::F32;
  return ops::random_compute_dtype(d);
}

// Checks uniform_'s bounds for a complex self like PyTorch does for its
// view_as_real, then fills both parts.
void uniform_fill(const at::Tensor& self, double from, double to, const std::optional<at::Generator>& gen);

// ---- kernels plugged into PyTorch's distribution templates (which do the
// argument checks). The template parameter is unused: we need no host RNG.
struct NoRng {};

void uniform_fill(const at::Tensor& self, double from, double to, const std::optional<at::Generator>& gen) {
  DType c = param_dtype(self);
  fill(self, "uniform", gen, {param(from, c), param(to, c)},
       [](shlo::Builder& b, const Vals& in, const shlo::Type& t) { return ops::uniform(b, in[0], in[1], in[2], t); });
}

template <class>
struct UniformKernel {
  void operator()(at::TensorIteratorBase& iter, double from, double to, std::optional<at::Generator> gen) {
    uniform_fill(iter.tensor(0), from, to, gen);
  }
};

void normal_fill(at::Tensor& self, engine::Ref mean, engine::Ref std, const std::optional<at::Generator>& gen) {
  TORCH_CHECK(at::isFloatingType(self.scalar_type()) || self.is_complex(),
              "\"normal_kernel_tpu\" not implemented for '", at::toString(self.scalar_type()), "'");
  fill(self, "normal", gen, {std::move(mean), std::move(std)},
       [](shlo::Builder& b, const Vals& in, const shlo::Type& t) { return ops::normal(b, in[0], in[1], in[2], t); });
}

template <class>
struct NormalKernel {
  void operator()(const at::TensorBase& base, double mean, double std, std::optional<at::Generator> gen) {
    at::Tensor self(base);
    // The CPU kernel's TensorIterator refuses a self whose elements share memory.
    at::assert_no_internal_overlap(self);
    DType c = param_dtype(self);
    normal_fill(self, param(mean, c), param(std, c), gen);
  }
};

// Whether random_ draws 64 bits per element for this dtype: 64-bit dtypes
// and floats can have ranges beyond 2^32 (PyTorch decides per call from the
// range's value, which would make the program depend on a runtime value).
bool wide_bits(DType d) {
  return d == DType::S64 || d == DType::U64 || d == DType::F64 || d == DType::F32 || d == DType::BF16;
}

void random_int_fill(at::Tensor& self, int64_t from, uint64_t range, bool bits64,
                     const std::optional<at::Generator>& gen) {
  std::vector<engine::Ref> bounds{engine::scalar_i64(from), engine::scalar_i64(static_cast<int64_t>(range))};
  if (bits64)
    fill(self, "random_int64", gen, std::move(bounds), [](shlo::Builder& b, const Vals& in, const shlo::Type& t) {
      return ops::random_int(b, in[0], in[1], in[2], t, true);
    });
  else
    fill(self, "random_int32", gen, std::move(bounds), [](shlo::Builder& b, const Vals& in, const shlo::Type& t) {
      return ops::random_int(b, in[0], in[1], in[2], t, false);
    });
}

void random_full_fill(at::Tensor& self, const std::optional<at::Generator>& gen) {
  fill(self, "random_full", gen, {},
       [](shlo::Builder& b, const Vals& in, const shlo::Type& t) { return ops::random_full_range(b, in[0], t); });
}

template <class>
struct RandomFromToKernel {
  void operator()(at::TensorIteratorBase& iter, uint64_t range, int64_t base, std::optional<at::Generator> gen) {
    at::Tensor self = iter.tensor(0);
    random_int_fill(self, base, range, wide_bits(to_shlo(self.scalar_type())), gen);
  }
  void operator()(at::TensorIteratorBase& iter, std::optional<at::Generator> gen) {
    at::Tensor self = iter.tensor(0);
    random_full_fill(self, gen);
  }
};

// random_() without bounds: PyTorch's ranges per dtype ([0, 2^digits] for
// floats, [0, max] for integers, {0, 1} for bool).
template <class>
struct RandomKernel {
  void operator()(at::TensorIteratorBase& iter, std::optional<at::Generator> gen) {
    at::Tensor self = iter.tensor(0);
    DType d = to_shlo(self.scalar_type());
    TORCH_CHECK(!shlo::is_complex(d), "random_ is not implemented for complex tensors");
    if (d == DType::U64) return random_full_fill(self, gen);
    uint64_t range;
    bool bits64 = d == DType::S64 || d == DType::F64;
    if (d == DType::PRED)
      range = 2;
    else if (shlo::is_float(d))
      range = (uint64_t{1} << ops::random_digits(d)) + 1;
    else if (shlo::is_unsigned_int(d))
      range = uint64_t{1} << (8 * shlo::dtype_size(d));
    else
      range = uint64_t{1} << (8 * shlo::dtype_size(d) - 1);
    random_int_fill(self, 0, range, bits64, gen);
  }
};

void bernoulli_fill(at::Tensor& self, engine::Ref p, const std::optional<at::Generator>& gen) {
  fill(self, "bernoulli", gen, {std::move(p)},
       [](shlo::Builder& b, const Vals& in, const shlo::Type& t) { return ops::bernoulli(b, in[0], in[1], t); });
}

template <class>
struct BernoulliScalarKernel {
  void operator()(const at::TensorBase& base, double p, std::optional<at::Generator> gen) {
    at::Tensor self(base);
    bernoulli_fill(self, param(p, ops::random_compute_dtype(to_shlo(self.scalar_type()))), gen);
  }
};

template <class>
struct BernoulliTensorKernel {
  void operator()(const at::TensorBase& base, const at::TensorBase& p_base, std::optional<at::Generator> gen) {
    at::Tensor self(base);
    at::Tensor p(p_base);
    TORCH_CHECK(at::isFloatingType(p.scalar_type()), "bernoulli_ expects p to be a floating point tensor, got ",
                p.scalar_type());
    if (p.device() != self.device()) p = p.to(self.device());
    check_all_within(p, 0, 1, [] {
      double p_in = -1;  // fails the CPU sampler's own check, giving its message
      TORCH_CHECK(p_in >= 0 && p_in <= 1);
    });
    // expand() checks p broadcasts to self exactly like PyTorch's expand_inplace.
    bernoulli_fill(self, read(p.expand(self.sizes())), gen);
  }
};

template <class>
struct ExponentialKernel {
  void operator()(at::TensorIteratorBase& iter, double lambda, std::optional<at::Generator> gen) {
    at::Tensor self = iter.tensor(0);
    check_floating(self, "exponential_tpu");
    DType c = ops::random_compute_dtype(to_shlo(self.scalar_type()));
    fill(self, "exponential", gen, {param(lambda, c)},
         [](shlo::Builder& b, const Vals& in, const shlo::Type& t) { return ops::exponential(b, in[0], in[1], t); });
  }
};

template <class>
struct GeometricKernel {
  void operator()(at::TensorIteratorBase& iter, double p, std::optional<at::Generator> gen) {
    at::Tensor self = iter.tensor(0);
    TORCH_CHECK(!self.is_complex() && self.scalar_type() != at::kBool, "geometric_ is not implemented for ",
                self.scalar_type());
    DType c = ops::random_compute_dtype(to_shlo(self.scalar_type()));
    fill(self, "geometric", gen, {param(p, c)},
         [](shlo::Builder& b, const Vals& in, const shlo::Type& t) { return ops::geometric(b, in[0], in[1], t); });
  }
};

template <class>
struct LogNormalKernel {
  void operator()(at::TensorIteratorBase& iter, double mean, double std, std::optional<at::Generator> gen) {
    at::Tensor self = iter.tensor(0);
    check_floating(self, "log_normal_tpu");
    DType c = ops::random_compute_dtype(to_shlo(self.scalar_type()));
    fill(self, "log_normal", gen, {param(mean, c), param(std, c)},
         [](shlo::Builder& b, const Vals& in, const shlo::Type& t) {
           return ops::log_normal(b, in[0], in[1], in[2], t);
         });
  }
};

template <class>
struct CauchyKernel {
  void operator()(at::TensorIteratorBase& iter, double median, double sigma, std::optional<at::Generator> gen) {
    at::Tensor self = iter.tensor(0);
    DType c = ops::random_compute_dtype(to_shlo(self.scalar_type()));
    fill(self, "cauchy", gen, {param(median, c), param(sigma, c)},
         [](shlo::Builder& b, const Vals& in, const shlo::Type& t) { return ops::cauchy(b, in[0], in[1], in[2], t); });
  }
};

namespace T = at::native::templates;

// normal() with tensor mean and/or std: out = mean + std * N(0, 1), each
// broadcast to out.
at::Tensor& normal_tensors_out(at::Tensor& out, engine::Ref mean, engine::Ref std, at::IntArrayRef shape,
                               const std::optional<at::Generator>& gen) {
  at::native::resize_output(out, shape);
  normal_fill(out, std::move(mean), std::move(std), gen);
  return out;
}

engine::Ref read_param(const at::Tensor& t, const at::Tensor& out) {
  TORCH_CHECK(!t.is_complex(), "normal expects a non-complex mean and standard deviation");
  return read_as(t, ops::random_compute_dtype(to_shlo(out.scalar_type())));
}

// A tensor std, checked like the CPU's (NaN fails) at the call: PyTorch's
// normal reads std's minimum on the host on every device, CUDA included.
// Inside a compiled graph, where nothing can be read, at the next host read.
engine::Ref read_std(const at::Tensor& std, const at::Tensor& out) {
  engine::Ref v = read_param(std, out);
  auto fail = [] { TORCH_CHECK(false, "normal expects all elements of std >= 0.0"); };
  if (engine::tracing() || std.numel() == 0) {
    check_all_within(std, 0, std::numeric_limits<double>::infinity(), fail);
  } else if (!std.min().ge(0).item<bool>()) {
    fail();
  }
  return v;
}

// ---- in-place random fills

at::Tensor& uniform_(at::Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  if (self.is_complex()) {
    // PyTorch fills view_as_real(self); its bounds checks are those of the
    // real dtype, done here on a real stand-in of no elements.
    at::Tensor probe = at::empty({0}, self.options().dtype(c10::toRealValueType(self.scalar_type())));
    T::uniform_impl_<UniformKernel, NoRng>(probe, from, to, gen);
    uniform_fill(self, from, to, gen);
    return self;
  }
  return T::uniform_impl_<UniformKernel, NoRng>(self, from, to, gen);
}

at::Tensor& normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  if (self.is_complex()) {
    TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
    if (self.numel() == 0) return self;
    // Each part gets half the variance, as PyTorch's complex normal_.
    DType c = param_dtype(self);
    normal_fill(self, param(mean, c), param(std / std::sqrt(2.0), c), gen);
    return self;
  }
  return T::normal_impl_<NormalKernel, NoRng>(self, mean, std, gen);
}

at::Tensor& random_(at::Tensor& self, std::optional<at::Generator> gen) {
  return T::random_impl<RandomKernel, NoRng>(self, gen);
}

at::Tensor& random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to, std::optional<at::Generator> gen) {
  return T::random_from_to_impl<RandomFromToKernel, NoRng>(self, from, to, gen);
}

at::Tensor& random_to(at::Tensor& self, int64_t to, std::optional<at::Generator> gen) {
  return random_from(self, 0, to, gen);
}

at::Tensor& bernoulli__float(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  return T::bernoulli_impl_<BernoulliScalarKernel, NoRng>(self, p, gen);
}

at::Tensor& bernoulli__Tensor(at::Tensor& self, const at::Tensor& p, std::optional<at::Generator> gen) {
  return T::bernoulli_impl_<BernoulliTensorKernel, NoRng>(self, p, gen);
}

at::Tensor& bernoulli_out(const at::Tensor& self, std::optional<at::Generator> gen, at::Tensor& out) {
  // As PyTorch's bernoulli_out_impl, but a same-shaped out keeps its strides.
  if (out.sizes() != self.sizes()) out.resize_(self.sizes());
  return T::bernoulli_impl_<BernoulliTensorKernel, NoRng>(out, self, gen);
}

at::Tensor& exponential_(at::Tensor& self, double lambd, std::optional<at::Generator> gen) {
  return T::exponential_impl_<ExponentialKernel, NoRng>(self, lambd, gen);
}

at::Tensor& geometric_(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  return T::geometric_impl_<GeometricKernel, NoRng>(self, p, gen);
}

at::Tensor& log_normal_(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  return T::log_normal_impl_<LogNormalKernel, NoRng>(self, mean, std, gen);
}

at::Tensor& cauchy_(at::Tensor& self, double median, double sigma, std::optional<at::Generator> gen) {
  return T::cauchy_impl_<CauchyKernel, NoRng>(self, median, sigma, gen);
}

// ---- normal with tensor parameters

at::Tensor normal_Tensor_float(const at::Tensor& mean, double std, std::optional<at::Generator> gen) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  at::Tensor out = at::empty_like(mean, at::MemoryFormat::Contiguous);
  return normal_tensors_out(out, read_param(mean, out),
                            param(std, ops::random_compute_dtype(to_shlo(out.scalar_type()))), mean.sizes(), gen);
}

at::Tensor& normal_Tensor_float_out(const at::Tensor& mean, double std, std::optional<at::Generator> gen,
                                    at::Tensor& out) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  return normal_tensors_out(out, read_param(mean, out),
                            param(std, ops::random_compute_dtype(to_shlo(out.scalar_type()))), mean.sizes(), gen);
}

at::Tensor normal_float_Tensor(double mean, const at::Tensor& std, std::optional<at::Generator> gen) {
  at::Tensor out = at::empty_like(std, at::MemoryFormat::Contiguous);
  return normal_tensors_out(out, param(mean, ops::random_compute_dtype(to_shlo(out.scalar_type()))), read_std(std, out),
                            std.sizes(), gen);
}

at::Tensor& normal_float_Tensor_out(double mean, const at::Tensor& std, std::optional<at::Generator> gen,
                                    at::Tensor& out) {
  return normal_tensors_out(out, param(mean, ops::random_compute_dtype(to_shlo(out.scalar_type()))), read_std(std, out),
                            std.sizes(), gen);
}

at::Tensor normal_Tensor_Tensor(const at::Tensor& mean, const at::Tensor& std, std::optional<at::Generator> gen) {
  auto shape = at::infer_size(mean.sizes(), std.sizes());
  at::Tensor out = at::empty(shape, mean.options(), at::MemoryFormat::Contiguous);
  return normal_tensors_out(out, read_param(mean, out), read_std(std, out), shape, gen);
}

at::Tensor& normal_Tensor_Tensor_out(const at::Tensor& mean, const at::Tensor& std, std::optional<at::Generator> gen,
                                     at::Tensor& out) {
  auto shape = at::infer_size(mean.sizes(), std.sizes());
  return normal_tensors_out(out, read_param(mean, out), read_std(std, out), shape, gen);
}

// ---- dropout

std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p, std::optional<bool> train) {
  if (input.numel() == 0) return {input, at::empty_like(input, input.options().dtype(at::kBool))};
  if (train.has_value() && !*train) return {input.clone(), at::ones_like(input, input.options().dtype(at::kBool))};
  double p1m = 1. - p;
  // p == 1 drops everything; avoid 1/0.
  double scale = p1m == 0 ? 0. : 1. / p1m;
  shlo::Type ty = type_of(input);
  DType c = ops::random_compute_dtype(ty.dtype);
  shlo::Type mask_ty{DType::PRED, ty.shape};
  auto refs =
      op("native_dropout", {rng_state(std::nullopt, input.device()), read(input), param(p1m, c), param(scale, c)},
         {ty, mask_ty}, [](shlo::Builder& b, const Vals& in) {
           auto [out, mask] = ops::dropout(b, in[0], in[1], in[2], in[3]);
           return Vals{out, mask};
         });
  return {wrap(refs[0], input.device()), wrap(refs[1], input.device())};
}

at::Tensor native_dropout_backward(const at::Tensor& grad, const at::Tensor& mask, double scale) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "Mask should be Bool Scalar Type", mask.scalar_type());
  TORCH_CHECK(grad.sizes() == mask.sizes(), "native_dropout_backward: grad of shape ", grad.sizes(),
              " and mask of shape ", mask.sizes(), " differ");
  // grad * mask * scale: integer grads promote with the double scale (as on the CPU).
  shlo::Type ty = type_of(grad);
  ty.dtype = to_shlo(at::result_type(grad, at::Scalar(scale)));
  DType c = ops::random_compute_dtype(ty.dtype);
  engine::Ref r =
      op1("native_dropout_backward", {read_as(grad, ty.dtype), read(mask), param(scale, c)}, ty,
          [](shlo::Builder& b, const Vals& in) { return Vals{ops::dropout_backward(b, in[0], in[1], in[2])}; });
  return wrap(r, grad.device());
}

// ---- permutations and sampling

at::Tensor& randperm_generator_out(c10::SymInt n_, std::optional<at::Generator> gen, at::Tensor& out) {
  int64_t n = n_.guard_int(__FILE__, __LINE__);
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  TORCH_CHECK(!out.is_complex() && out.scalar_type() != at::kBool, "randperm is not implemented for ",
              out.scalar_type());
  // The largest value, n - 1, must be exact in the result type.
  switch (out.scalar_type()) {
    case at::kHalf:
      TORCH_CHECK(n <= (int64_t(1) << 11) + 1, "n cannot be greater than 2049 for Half type.");
      break;
    case at::kBFloat16:
      TORCH_CHECK(n <= (int64_t(1) << 8) + 1, "n cannot be greater than 2^8+1 for BFloat16 type.");
      break;
    case at::kFloat:
      TORCH_CHECK(n <= (int64_t(1) << 24) + 1, "n cannot be greater than 2^24+1 for Float type.");
      break;
    case at::kDouble:
      TORCH_CHECK(n <= (int64_t(1) << 53) + 1, "n cannot be greater than 2^53+1 for Double type.");
      break;
    default:
      if (at::isIntegralType(out.scalar_type(), false) && out.element_size() < 8)
        TORCH_CHECK(
            n - 1 <= (int64_t(1) << (8 * out.element_size() - (at::isSignedType(out.scalar_type()) ? 1 : 0))) - 1,
            "n is too large for result tensor type: '", out.toString(), "'");
  }
  at::native::resize_output(out, {n});
  if (n == 0) return out;
  DType d = to_shlo(out.scalar_type());
  write(out,
        op1(
            "randperm", {rng_state(gen, out.device())}, shlo::Type{d, {n}},
            [](shlo::Builder& b, const Vals& in, int64_t n, DType d) { return Vals{ops::randperm(b, in[0], n, d)}; }, n,
            d));
  return out;
}

at::Tensor& multinomial_out(const at::Tensor& self, c10::SymInt n, bool replacement, std::optional<at::Generator> gen,
                            at::Tensor& out) {
  int64_t n_sample = n.guard_int(__FILE__, __LINE__);
  TORCH_CHECK(out.device() == self.device(), "multinomial arguments must have the same device");
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "multinomial only supports floating-point dtypes for input, got: ", self.scalar_type());
  TORCH_CHECK(out.scalar_type() == at::kLong, "multinomial expects Long tensor out, got: ", out.scalar_type());
  TORCH_CHECK(n_sample > 0, "cannot sample n_sample <= 0 samples");
  int64_t cats = self.size(-1);
  TORCH_CHECK(replacement || n_sample <= cats,
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  TORCH_CHECK(cats <= (int64_t(1) << 24), "number of categories cannot exceed 2^24");
  // Negative, non-finite or all-zero rows raise at the next host read.
  check_probabilities(self, n_sample, replacement);
  int64_t rows = self.dim() == 1 ? 1 : self.size(0);
  if (self.dim() == 1)
    at::native::resize_output(out, {n_sample});
  else
    at::native::resize_output(out, {rows, n_sample});
  if (out.numel() == 0) return out;
  engine::Ref r = op1(
      "multinomial", {rng_state(gen, self.device()), read(self)}, type_of(out),
      [](shlo::Builder& b, const Vals& in, int64_t rows, int64_t cats, int64_t n_sample, bool replacement,
         const shlo::Shape& shape) {
        shlo::Value p = b.reshape(in[1], {rows, cats});
        return Vals{b.reshape(ops::multinomial(b, in[0], p, n_sample, replacement), shape)};
      },
      rows, cats, n_sample, replacement, type_of(out).shape);
  write(out, r);
  return out;
}

at::Tensor multinomial(const at::Tensor& self, c10::SymInt n_sample, bool replacement,
                       std::optional<at::Generator> gen) {
  at::Tensor out = at::empty({0}, self.options().dtype(at::kLong));
  return multinomial_out(self, n_sample, replacement, gen, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("bernoulli.out", &bernoulli_out);
  m.impl("bernoulli_.Tensor", &bernoulli__Tensor);
  m.impl("bernoulli_.float", &bernoulli__float);
  m.impl("cauchy_", &cauchy_);
  m.impl("exponential_", &exponential_);
  m.impl("geometric_", &geometric_);
  m.impl("log_normal_", &log_normal_);
  m.impl("multinomial", &multinomial);
  m.impl("multinomial.out", &multinomial_out);
  m.impl("native_dropout", &native_dropout);
  m.impl("native_dropout_backward", &native_dropout_backward);
  m.impl("normal.Tensor_Tensor", &normal_Tensor_Tensor);
  m.impl("normal.Tensor_Tensor_out", &normal_Tensor_Tensor_out);
  m.impl("normal.Tensor_float", &normal_Tensor_float);
  m.impl("normal.Tensor_float_out", &normal_Tensor_float_out);
  m.impl("normal.float_Tensor", &normal_float_Tensor);
  m.impl("normal.float_Tensor_out", &normal_float_Tensor_out);
  m.impl("normal_", &normal_);
  m.impl("random_", &random_);
  m.impl("random_.from", &random_from);
  m.impl("random_.to", &random_to);
  m.impl("randperm.generator_out", &randperm_generator_out);
  m.impl("uniform_", &uniform_);
}

}  // namespace tpu
