// torch.compile's native side (compiled.cc): Python bindings of the
// compiled-graph runner.
#pragma once

#include <pybind11/pybind11.h>

namespace tpu {

void bind_compiled(pybind11::module& m);

}  // namespace tpu
