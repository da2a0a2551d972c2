// The torch_pjrt operator library: ops of this device that are not ATen's
// (torch.ops.torch_pjrt.*). Each op family declares its own ops into it
// with TORCH_LIBRARY_FRAGMENT(torch_pjrt, m) in its folder.
#include <torch/library.h>

TORCH_LIBRARY(torch_pjrt, m) {}
