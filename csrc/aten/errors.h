// Turns engine / plugin failures into the PyTorch exceptions a CUDA user
// expects (RuntimeError, torch.OutOfMemoryError), with context.
#pragma once

#include <c10/util/Exception.h>

#include "pjrt/runtime.h"

namespace tpu {

template <typename F>
auto guarded(const char* what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const pjrt::Error& e) {
    if (e.out_of_memory()) TORCH_CHECK_WITH(OutOfMemoryError, false, "tpu out of memory while ", what, ": ", e.what());
    TORCH_CHECK(false, "tpu: ", what, " failed: ", e.what());
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK(false, "tpu: ", what, ": ", e.what());
  }
}

}  // namespace tpu
