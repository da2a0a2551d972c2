// The Python entry points of foreign modules (torch_pjrt._C._foreign_*),
// which python/torch_pjrt/jax_op.py builds its custom ops on.
#pragma once

#include <pybind11/pybind11.h>

namespace tpu {

void bind_foreign(pybind11::module& m);

}  // namespace tpu
