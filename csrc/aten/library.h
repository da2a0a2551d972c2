// Registration of tpu kernels. Each op family registers its own kernels, in
// the folder that holds its lowering:
//   TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
//     tpu::Kernels m(lib);
//     m.impl("flip", &flip);
//     m.structured<at::meta::structured_add_Tensor>("add.Tensor", "add_.Tensor", "add.out", add_impl);
//   }
// Every kernel runs inside an engine::OpScope: the values a kernel writes
// are launched when it returns, once its temporaries no longer hold the
// values it replaced (see engine/mode.h). One wrapper here instead of a
// scope in each kernel.
//
// structured<Meta>() registers the three variants of a structured op
// (functional, in-place, out=) from one implementation
//   impl(meta, out, args...)
// with the argument types read off Meta::meta, so they are exactly the
// schema's. PyTorch derives nothing for an out-of-tree device (an op whose
// functional variant is not registered runs through the CPU fallback), so
// this template is what writes the two wrappers of each op.
#pragma once

#include <torch/library.h>

#include <tuple>
#include <type_traits>
#include <utility>

#include "aten/structured.h"
#include "engine/mode.h"

namespace tpu {

namespace detail {

template <class M>
struct MetaArgs;
template <class C, class R, class... A>
struct MetaArgs<R (C::*)(A...)> {
  using type = std::tuple<A...>;
};

template <class Meta, class Impl, class Args>
struct StructuredVariants;
template <class Meta, class Impl, class Self, class... Rest>
struct StructuredVariants<Meta, Impl, std::tuple<Self, Rest...>> {
  static_assert(std::is_same_v<Self, const at::Tensor&>, "structured ops take self first");
  static auto functional_kernel(Impl impl) {
    return [impl](const at::Tensor& self, Rest... rest) -> at::Tensor {
      engine::OpScope scope;
      return tpu::functional<Meta>(impl, self, rest...);
    };
  }
  static auto inplace_kernel(Impl impl) {
    return [impl](at::Tensor& self, Rest... rest) -> at::Tensor& {
      engine::OpScope scope;
      return tpu::inplace<Meta>(self, impl, rest...);
    };
  }
  static auto out_kernel(Impl impl) {
    return [impl](const at::Tensor& self, Rest... rest, at::Tensor& out) -> at::Tensor& {
      engine::OpScope scope;
      return tpu::out_variant<Meta>(out, impl, self, rest...);
    };
  }
};

}  // namespace detail

class Kernels {
 public:
  explicit Kernels(torch::Library& lib) : lib_(lib) {}

  template <class R, class... A>
  Kernels& impl(const char* name, R (*kernel)(A...)) {
    lib_.impl(name, [kernel](A... args) -> R {
      engine::OpScope scope;
      return kernel(std::forward<A>(args)...);
    });
    return *this;
  }

  // The functional, in-place and out= overloads of a structured op; a null
  // name skips that variant (ops without one).
  template <class Meta, class Impl>
  Kernels& structured(const char* functional, const char* inplace, const char* out, Impl impl) {
    using V = detail::StructuredVariants<Meta, Impl, typename detail::MetaArgs<decltype(&Meta::meta)>::type>;
    if (functional) lib_.impl(functional, V::functional_kernel(impl));
    if (inplace) lib_.impl(inplace, V::inplace_kernel(impl));
    if (out) lib_.impl(out, V::out_kernel(impl));
    return *this;
  }

 private:
  torch::Library& lib_;
};

}  // namespace tpu
