// The torch releases torch_pjrt builds against (2.11 to 2.14) differ in a few
// C++ interfaces it uses. Each difference is bridged here, once, with the
// release that made it; everything else is written against the newest.
#pragma once

#include <torch/headeronly/version.h>

#define TPU_TORCH_BEFORE(major, minor) \
  (TORCH_VERSION_MAJOR < (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR < (minor)))

// torch 2.13 removed named tensors: the structured kernels'
// set_output_strided / set_output_raw_strided lost their (unused)
// DimnameList parameter, and autocast's op lists their DimnameList overloads.
#if TPU_TORCH_BEFORE(2, 13)
#define TPU_HAS_DIMNAMES 1
#define TPU_OUTPUT_NAMES_PARAM , at::DimnameList = {}
#define TPU_NO_OUTPUT_NAMES \
  , at::DimnameList {}
#else
#define TPU_HAS_DIMNAMES 0
#define TPU_OUTPUT_NAMES_PARAM
#define TPU_NO_OUTPUT_NAMES
#endif

// c10d::OpType::REDUCE_SCATTER_TENSOR_COALESCED came in torch 2.12; before,
// a coalesced reduce-scatter is labelled as a plain one (the label only
// names the Work for profiling and errors).
#if TPU_TORCH_BEFORE(2, 12)
#define TPU_OPTYPE_REDUCE_SCATTER_COALESCED c10d::OpType::REDUCE_SCATTER
#else
#define TPU_OPTYPE_REDUCE_SCATTER_COALESCED c10d::OpType::REDUCE_SCATTER_TENSOR_COALESCED
#endif

// rms_norm joined autocast's fp32 list (AT_FORALL_FP32) in torch 2.12, as
// layer_norm's sibling; before, it is registered here with the same policy,
// so rms_norm under autocast runs in float32 on every release.
#define TPU_AUTOCAST_RMS_NORM_FP32 TPU_TORCH_BEFORE(2, 12)

// native_group_norm on a device without a kernel of its own runs torch's
// math_group_norm (CompositeExplicitAutograd). In torch 2.13 it computes the
// statistics with var_mean; before, it reshapes the input and calls
// native_batch_norm, which the tpu has no kernel for (group norm ran on the
// CPU). On those releases the tpu registers 2.13's decomposition itself.
#define TPU_GROUP_NORM_DECOMPOSED TPU_TORCH_BEFORE(2, 13)
