// Searching and counting: searchsorted / bucketize, bincount, histc and
// isin (generate()'s stopping criteria use it). The lowerings are search.h,
// histc.h and membership.h.
#include <ATen/native/Resize.h>
#include <ATen/ops/isin_meta.h>
#include <c10/util/bit_cast.h>

#include <cmath>
#include <limits>
#include <mutex>

#include "aten/library.h"
#include "engine/checks.h"
#include "ops/common/aten_common.h"
#include "ops/indexing/indexing.h"
#include "ops/sort/histc.h"
#include "ops/sort/membership.h"
#include "ops/sort/search.h"

namespace tpu {

namespace {

using shlo::Builder;
using shlo::Value;
using Vals = std::vector<Value>;

// A Scalar argument as the 0-d wrapped-number tensor ATen's composites pass.
at::Tensor scalar_operand(const at::Scalar& s) {
  at::Tensor t = c10::scalar_to_tensor(s);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

// ---- searchsorted / bucketize

at::Tensor search_impl(const at::Tensor& boundaries, const at::Tensor& values, bool out_int32, bool right,
                       std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter,
                       const at::Tensor* out_arg, const char* name) {
  if (side.has_value()) {
    TORCH_CHECK(*side == "left" || *side == "right",
                "torch.searchsorted(): side can only be 'left' or 'right' "
                "but got ",
                *side);
    TORCH_CHECK(!right || *side == "right",
                "torch.searchsorted(): side and right can't be set to opposites, "
                "got side of ",
                *side, " while right was True");
    right = *side == "right";
  }
  TORCH_CHECK(boundaries.dim() >= 1, name,
              "(): boundaries tensor should be 1 dimension or the first N-1 "
              "dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor ",
              boundaries.sizes(), " and input value tensor ", values.sizes());
  if (boundaries.dim() > 1) {
    bool ok = values.dim() == boundaries.dim() &&
              boundaries.sizes().slice(0, boundaries.dim() - 1) == values.sizes().slice(0, values.dim() - 1);
    TORCH_CHECK(ok, name,
                "(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
                "tensor and input value tensor must match, but we got boundaries tensor ",
                boundaries.sizes(), " and input value tensor ", values.sizes());
  }
  bool has_sorter = sorter.has_value() && sorter->defined();
  if (has_sorter) {
    TORCH_CHECK(sorter->scalar_type() == at::kLong, name, "(): sorter must be a tensor of long dtype but got dtype ",
                sorter->scalar_type());
    TORCH_CHECK(sorter->sizes() == boundaries.sizes(), name,
                "(): boundary and sorter must have the same size, but "
                "got boundary tensor ",
                boundaries.sizes(), "and got sorter tensor ", sorter->sizes());
    int64_t n = boundaries.size(-1);
    check_index_bounds(*sorter, 0, n, [name](int64_t) { TORCH_CHECK(false, name, "(): sorter index out of range"); });
  }
  // The CPU's warnings (it copies such tensors; the device reads them in
  // place, but code written against the CPU may watch for them).
  auto warn = [](const char* what) {
    TORCH_WARN("torch.searchsorted(): ", what, " tensor is non-contiguous, this will lower the performance due ",
               "to extra data copy when converting non-contiguous tensor to contiguous, please use contiguous ", what,
               " tensor if possible. This message will only appear once per program.");
  };
  static std::once_flag values_warned, boundaries_warned, sorter_warned;
  if (!values.is_contiguous()) std::call_once(values_warned, warn, "input value");
  if (!boundaries.is_contiguous()) std::call_once(boundaries_warned, warn, "boundary");
  if (has_sorter && !sorter->is_contiguous()) std::call_once(sorter_warned, warn, "sorter");
  at::ScalarType common = at::result_type(boundaries, values);
  at::ScalarType odt = out_int32 ? at::kInt : at::kLong;
  at::Tensor out;
  if (out_arg) {
    out = *out_arg;
    TORCH_CHECK(out.scalar_type() == odt, name,
                "(): output tensor's dtype is wrong, it can only be Int(int32) or "
                "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype ",
                out.scalar_type(), " and out_int32 flag is ", (out_int32 ? "True" : "False"));
    at::native::resize_output(out, values.sizes());
  } else {
    out = empty(values.sizes(), odt, common_device({&boundaries, &values}));
  }
  if (out.numel() == 0) return out;
  shlo::DType c = to_shlo(common), o = to_shlo(odt);
  std::vector<engine::Ref> in{read_as(boundaries, c), read_as(values, c)};
  if (has_sorter) in.push_back(read(*sorter));
  write_all(
      {out}, "searchsorted", std::move(in),
      [](Builder& b, const Vals& v, bool right, bool has_sorter, int64_t last, shlo::DType o) {
        Value bd = v[0];
        if (has_sorter) bd = ops::gather_dim(b, bd, last, v[2]);
        return Vals{ops::search_sorted(b, bd, v[1], right, o)};
      },
      right, has_sorter, boundaries.dim() - 1, o);
  return out;
}

at::Tensor searchsorted_Tensor(const at::Tensor& seq, const at::Tensor& self, bool out_int32, bool right,
                               std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter) {
  return search_impl(seq, self, out_int32, right, side, sorter, nullptr, "torch.searchsorted");
}
at::Tensor& searchsorted_Tensor_out(const at::Tensor& seq, const at::Tensor& self, bool out_int32, bool right,
                                    std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter,
                                    at::Tensor& out) {
  search_impl(seq, self, out_int32, right, side, sorter, &out, "torch.searchsorted");
  return out;
}
at::Tensor searchsorted_Scalar(const at::Tensor& seq, const at::Scalar& self, bool out_int32, bool right,
                               std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter) {
  TORCH_CHECK(seq.dim() == 1,
              "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
              "dimension is 1, but we got boundaries tensor dim(",
              seq.dim(), ") and input value's dim(0) numel(1)");
  return search_impl(seq, scalar_operand(self), out_int32, right, side, sorter, nullptr, "torch.searchsorted");
}
at::Tensor& searchsorted_Scalar_out(const at::Tensor& seq, const at::Scalar& self, bool out_int32, bool right,
                                    std::optional<c10::string_view> side, const std::optional<at::Tensor>& sorter,
                                    at::Tensor& out) {
  search_impl(seq, scalar_operand(self), out_int32, right, side, sorter, &out, "torch.searchsorted");
  return out;
}
at::Tensor bucketize_Tensor(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32, bool right) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return search_impl(boundaries, self, out_int32, right, std::nullopt, std::nullopt, nullptr, "torch.bucketize");
}
at::Tensor& bucketize_Tensor_out(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32, bool right,
                                 at::Tensor& out) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  search_impl(boundaries, self, out_int32, right, std::nullopt, std::nullopt, &out, "torch.bucketize");
  return out;
}
at::Tensor bucketize_Scalar(const at::Scalar& self, const at::Tensor& boundaries, bool out_int32, bool right) {
  return bucketize_Tensor(scalar_operand(self), boundaries, out_int32, right);
}

// ---- bincount

at::Tensor bincount(const at::Tensor& self, const std::optional<at::Tensor>& weights, c10::SymInt minlength_s) {
  int64_t minlength = minlength_s.expect_int();
  // The CPU's order: the dtype (its integral dispatch), then the length, then the shape.
  TORCH_CHECK(at::isIntegralType(self.scalar_type(), false), "\"bincount_tpu\" not implemented for '",
              at::toString(self.scalar_type()), "'");
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  TORCH_CHECK(self.dim() == 1, "bincount only supports 1-d non-negative integral inputs.");
  bool has_w = weights.has_value() && weights->defined();
  if (has_w)
    TORCH_CHECK(weights->dim() == 1 && weights->size(0) == self.size(0),
                "weights should be 1-d and have the same length as input");
  at::ScalarType ot = !has_w ? at::kLong : weights->scalar_type() == at::kFloat ? at::kFloat : at::kDouble;
  int64_t length = minlength;
  if (self.numel() > 0) {
    // The output length depends on the data: one read of [min, max].
    engine::Ref mm = op1("bincount_range", {read(self)}, shlo::Type{shlo::DType::S64, {2}},
                         [](Builder& b, const Vals& in) { return Vals{ops::index_bounds(b, in[0])}; });
    std::vector<int64_t> r = fetch_i64(mm, "reading a value back");
    TORCH_CHECK(r[0] >= 0, "bincount only supports 1-d non-negative integral inputs.");
    length = std::max(length, r[1] + 1);
  }
  at::Tensor out = empty({length}, ot, self.device());
  if (length == 0) return out;
  shlo::DType o = to_shlo(ot);
  std::vector<engine::Ref> in{read(self)};
  if (has_w) in.push_back(read(*weights));
  write_all(
      {out}, "bincount", std::move(in),
      [](Builder& b, const Vals& v, int64_t length, shlo::DType o) {
        std::optional<Value> w;
        if (v.size() > 1) w = v[1];
        return Vals{ops::bincount(b, v[0], w, length, o)};
      },
      length, o);
  return out;
}

// ---- histc

void histc_impl(const at::Tensor& self, int64_t bins, const at::Scalar& min, const at::Scalar& max, at::Tensor& out) {
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  at::ScalarType st = self.scalar_type();
  TORCH_CHECK(st != at::kBool && !at::isComplexType(st), "\"histc\" not implemented for '", st, "'");
  TORCH_CHECK(out.scalar_type() == st,
              "torch.histogram: input tensor and hist tensor should have the same dtype, but got input ", self.dtype(),
              " and hist ", out.dtype());
  double lo = min.toDouble(), hi = max.toDouble();
  // Equal bounds mean "use the data's range": computed on the device, so
  // histc never waits for the host.
  bool auto_range = lo == hi && self.numel() > 0;
  if (!auto_range) {
    if (lo == hi) {
      lo -= 1;
      hi += 1;
    }
    TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi, "] is not finite");
    TORCH_CHECK(lo < hi, "torch.histc: max must be larger than min");
  }
  at::native::resize_output(out, {bins});
  shlo::DType dt = to_shlo(st);
  if (auto_range && at::isFloatingType(st)) {
    // PyTorch refuses a data range that is not finite, naming the range:
    // the data's min and max come back from the device with the check.
    bool f64 = st == at::kDouble, f32 = st == at::kFloat, bf16 = st == at::kBFloat16;
    engine::Ref range = op1("histc_range", {read(self)}, shlo::Type{shlo::DType::S64, {3}},
                            [](Builder& b, const Vals& v) { return Vals{ops::range_bits(b, v[0])}; });
    engine::defer_check(range, [f64, f32, bf16](const std::vector<int64_t>& a) {
      auto value = [f64](int64_t bits) {
        if (f64) return c10::bit_cast<double>(bits);
        return static_cast<double>(c10::bit_cast<float>(static_cast<int32_t>(bits)));
      };
      double l = value(a[1]), h = value(a[2]);
      // The CPU's min / max answer NaN for both as soon as one element is
      // NaN, and the NaN it prints is the negative one its float kernels
      // produce (bfloat16's rounding makes it positive): the same text.
      if (a[0]) l = h = std::copysign(std::numeric_limits<double>::quiet_NaN(), bf16 ? 1.0 : -1.0);
      // Equal edges move 1 apart as histc's own edges do, except where the
      // CPU widens in the data's dtype: a float / double infinity pair
      // keeps one infinity and brings the other to the largest finite value.
      if (l == h && std::isinf(l) && (f64 || f32)) {
        double big = f64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
        (l > 0 ? l : h) = l > 0 ? big : -big;
      } else if (l == h) {
        l -= 1;
        h += 1;
      }
      TORCH_CHECK(std::isfinite(l) && std::isfinite(h), "torch.histc: range of [", l, ", ", h, "] is not finite");
    });
  }
  write_all(
      {out}, "histc", {read(self), scalar_of(lo, dt), scalar_of(hi, dt)},
      [](Builder& b, const Vals& v, int64_t bins, bool auto_range) {
        return Vals{ops::histc(b, v[0], v[1], v[2], bins, auto_range)};
      },
      bins, auto_range);
}

at::Tensor histc(const at::Tensor& self, int64_t bins, const at::Scalar& min, const at::Scalar& max) {
  at::Tensor out = at::empty({0}, self.options());
  histc_impl(self, bins, min, max, out);
  return out;
}

at::Tensor& histc_out(const at::Tensor& self, int64_t bins, const at::Scalar& min, const at::Scalar& max,
                      at::Tensor& out) {
  histc_impl(self, bins, min, max, out);
  return out;
}

// ---- isin

void write_isin(const at::Tensor& out, const at::Tensor& elements, const at::Tensor& test, bool invert) {
  // The Scalar_Tensor meta allocates a placeholder shape; the result has
  // the elements' shape.
  at::native::resize_output(out, elements.sizes());
  shlo::DType common = to_shlo(at::result_type(elements, test));
  engine::Ref x = cast(read(elements), common), t = cast(read(test), common);
  write_all(
      {out}, "isin", {x, t},
      [](Builder& b, const Vals& in, bool invert) { return Vals{ops::isin(b, in[0], in[1], invert)}; }, invert);
}

at::Tensor scalar_tensor_on(const at::Scalar& s, const at::Tensor& like) {
  return at::scalar_tensor(s, like.options().dtype(s.type()));
}

struct IsinTensorTensor {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& e, const at::Tensor& t, bool, bool invert) const {
    write_isin(out, e, t, invert);
  }
};
struct IsinTensorScalar {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& e, const at::Scalar& t, bool, bool invert) const {
    write_isin(out, e, scalar_tensor_on(t, e), invert);
  }
};

// Its meta takes the scalar first: registered by hand.
at::Tensor isin_Scalar_Tensor(const at::Scalar& e, const at::Tensor& t, bool assume_unique, bool invert) {
  Structured<at::meta::structured_isin_Scalar_Tensor> m;
  m.meta(e, t, assume_unique, invert);
  write_isin(m.outs[0], scalar_tensor_on(e, t), t, invert);
  return m.outs[0];
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("bincount", &bincount);
  m.impl("bucketize.Scalar", &bucketize_Scalar);
  m.impl("bucketize.Tensor", &bucketize_Tensor);
  m.impl("bucketize.Tensor_out", &bucketize_Tensor_out);
  m.impl("histc", &histc);
  m.impl("histc.out", &histc_out);
  m.impl("isin.Scalar_Tensor", &isin_Scalar_Tensor);
  m.structured<at::meta::structured_isin_Tensor_Scalar>("isin.Tensor_Scalar", nullptr, nullptr, IsinTensorScalar{});
  m.structured<at::meta::structured_isin_Tensor_Tensor>("isin.Tensor_Tensor", nullptr, "isin.Tensor_Tensor_out",
                                                        IsinTensorTensor{});
  m.impl("searchsorted.Scalar", &searchsorted_Scalar);
  m.impl("searchsorted.Scalar_out", &searchsorted_Scalar_out);
  m.impl("searchsorted.Tensor", &searchsorted_Tensor);
  m.impl("searchsorted.Tensor_out", &searchsorted_Tensor_out);
}

}  // namespace tpu
