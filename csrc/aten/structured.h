// Reuses PyTorch's own meta functions (the structured-kernel "meta" step) so
// every op we lower gets exactly PyTorch's shape inference, type promotion,
// broadcasting and out=/in-place checks. Our part is only the value.
#pragma once

#include <ATen/TensorIterator.h>
#include <ATen/native/Resize.h>

#include <array>
#include <type_traits>
#include <vector>

#include "aten/tensor.h"
#include "aten/torch_compat.h"

namespace tpu {

template <class Meta>
struct Structured final : Meta {
  // Functional: no tensors given. In-place / out=: the tensors to write.
  explicit Structured(std::vector<at::Tensor> given = {}, bool inplace = false) : inplace_(inplace) {
    TORCH_CHECK(given.size() <= outs.size(), "internal: more outputs than a structured op holds");
    std::move(given.begin(), given.end(), outs.begin());
  }
  // One output given and borrowed, not copied (in-place self, out=): a copy
  // of a tensor Python holds takes the GIL. outs stays empty.
  Structured(const at::Tensor& given, bool inplace) : given_(&given), inplace_(inplace) {}

  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options TPU_OUTPUT_NAMES_PARAM) override {
    set(i, sizes, strides, options);
  }
  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options TPU_OUTPUT_NAMES_PARAM) override {
    set(i, sizes, strides, options);
  }
  const at::Tensor& maybe_get_output(int64_t i) override { return i == 0 && given_ ? *given_ : outs[i]; }

  std::array<at::Tensor, 8> outs;

 private:
  void set(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides, at::TensorOptions options) {
    const at::Tensor& out = i == 0 && given_ ? *given_ : outs[i];
    if (!out.defined()) {
      outs[i] = options.device().type() == c10::DeviceType::PrivateUse1
                    ? new_empty(sizes, strides.empty() ? format_strides(sizes, options) : strides.vec(),
                                options.dtype().toScalarType(), options.device())
                : strides.empty() ? at::empty(sizes, options)
                                  : at::empty_strided(sizes, strides, options);
    } else if (inplace_) {
      TORCH_CHECK(out.sizes() == sizes, "output with shape ", out.sizes(), " doesn't match the broadcast shape ",
                  sizes);
      TORCH_CHECK(options.dtype() == out.dtype(), "Expected out tensor to have dtype ", options.dtype(), ", but got ",
                  out.dtype(), " instead");
    } else {
      TORCH_CHECK(options.dtype() == out.dtype(), "Expected out tensor to have dtype ", options.dtype(), ", but got ",
                  out.dtype(), " instead");
      TORCH_CHECK(out.device() == options.device(), "Expected out tensor to have device ", options.device(),
                  ", but got ", out.device(), " instead");
      if (at::native::resize_output(out, sizes) && !strides.empty()) out.as_strided_(sizes, strides);
    }
    if constexpr (std::is_base_of_v<at::TensorIteratorBase, Meta>)
      at::TensorIteratorBase::set_output_raw_strided(i, sizes, strides, options TPU_NO_OUTPUT_NAMES);
  }
  // The strides a meta's memory format asks for (cat of channels-last
  // inputs is channels-last, as at::empty would lay it out); none: contiguous.
  static std::vector<int64_t> format_strides(at::IntArrayRef sizes, const at::TensorOptions& options) {
    auto format = options.memory_format_opt();
    if (format == at::MemoryFormat::ChannelsLast && sizes.size() == 4) return c10::get_channels_last_strides_2d(sizes);
    if (format == at::MemoryFormat::ChannelsLast3d && sizes.size() == 5)
      return c10::get_channels_last_strides_3d(sizes);
    return {};
  }

  const at::Tensor* given_ = nullptr;
  bool inplace_;
};

// The three variants of a structured op from one implementation
// impl(meta, out, args...): functional, in-place (self is the output) and out=.
template <class Meta, class Impl, class... A>
at::Tensor functional(Impl impl, const A&... a) {
  Structured<Meta> m;
  m.meta(a...);
  impl(m, m.outs[0], a...);
  return m.outs[0];
}
template <class Meta, class Impl, class... A>
at::Tensor& inplace(at::Tensor& self, Impl impl, const A&... a) {
  Structured<Meta> m(self, true);
  m.meta(self, a...);
  impl(m, self, self, a...);
  return self;
}
template <class Meta, class Impl, class... A>
at::Tensor& out_variant(at::Tensor& out, Impl impl, const A&... a) {
  Structured<Meta> m(out, false);
  m.meta(a...);
  impl(m, out, a...);
  return out;
}

// A Python / ATen scalar as a 0-d operand of dtype d.
engine::Ref scalar_of(const at::Scalar& s, shlo::DType d);

}  // namespace tpu
