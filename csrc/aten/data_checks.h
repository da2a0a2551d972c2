// Checks of tensor values that the CPU kernels make before computing
// (class targets, probabilities): on device data they are deferred device
// checks (engine/checks.h), raised at the next host read or sync with the
// CPU's error, at the call in debug mode; they never wait.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <optional>

namespace tpu {

// Every element of t other than `skip` lies in [lo, hi); fail(v) raises the
// op's error for the first value v outside, in t's element order (the one
// the CPU loop reports).
void check_first_in_range(const at::Tensor& t, int64_t lo, int64_t hi, std::optional<int64_t> skip,
                          std::function<void(int64_t)> fail);

// Every element of the floating tensor t lies in [lo, hi] (NaN does not);
// fail() raises the op's error otherwise.
void check_all_within(const at::Tensor& t, double lo, double hi, std::function<void()> fail);

// No element of t, taken in the integer dtype dt an op computes in, is
// zero; fail() raises the op's error otherwise (integer division).
void check_no_zero(const at::Tensor& t, at::ScalarType dt, std::function<void()> fail);

// multinomial's checks of its probability rows p (1-D or 2-D), in the
// order and with the messages of the CPU kernel for this call.
void check_probabilities(const at::Tensor& p, int64_t n_sample, bool replacement);

}  // namespace tpu
