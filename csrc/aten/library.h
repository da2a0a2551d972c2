// Registration of tpu kernels. Every kernel is registered through Kernels
//   TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) { Kernels m(lib); m.impl(...); }
// which runs it inside an engine::OpScope: the values a kernel writes are
// launched when it returns, once its temporaries no longer hold the values
// it replaced (see engine/mode.h). One wrapper here instead of a scope in
// each of the kernels.
#pragma once

#include <torch/library.h>

#include <utility>

#include "engine/mode.h"

namespace tpu {

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

 private:
  torch::Library& lib_;
};

}  // namespace tpu
