// The c10d backend "tpu_dist" (distributed.cc), bound into torch_pjrt._C
// once torch.distributed is imported: its pybind classes derive from
// torch.distributed's, which exist only from then on.
#pragma once

#include <pybind11/pybind11.h>

namespace tpu {

void init_distributed(pybind11::module_& m);

}  // namespace tpu
