// The arguments of a compiled graph (compiled.cc runs it): the signature
// a program is looked up by, and how each argument reaches the program
// (a compact view's stretch of storage, a host scalar as a device value) or
// its results reach new storages. Apart from the runner so what a program's
// key holds can be read in one place.
#pragma once

#include <ATen/ATen.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/key.h"
#include "pjrt/runtime.h"
#include "shlo/builder.h"

namespace tpu::compiled {

bool is_tpu(const at::Tensor& t);

// What a program depends on besides the data: tensor geometry, which
// arguments share a storage, what type each storage's value has, and the
// values of non-tensor arguments (baked into the graph while tracing, so
// floats enter exactly, as every key's do). compact: per argument, whether
// it is passed by value (its offset stays out).
engine::Key signature(const pybind11::list& args, const std::vector<char>& compact);

bool strides_positive(const at::Tensor& t);
// The elements a view spans in its storage, from its first one.
int64_t span_of(const at::Tensor& t);
// Whether t's elements reach from the start to the end of its storage.
bool spans_storage(const at::Tensor& t);
// A compact argument's value for one call: the stretch of its storage the
// view spans, read with the offset as a runtime value (so the read's own
// program is the same for every offset).
pjrt::BufferPtr compact_value(const at::Tensor& t);

bool is_host_scalar(const at::Tensor& t);
// The type read() gives a host scalar.
shlo::Type host_scalar_type(const at::Tensor& t);
pjrt::BufferPtr host_scalar_buffer(const at::Tensor& t, const shlo::Type& type);

// A tpu tensor of this geometry on storage.
at::Tensor tensor_on(const c10::Storage& storage, at::ScalarType dtype, at::IntArrayRef sizes, at::IntArrayRef strides,
                     int64_t offset);
c10::Storage new_storage(size_t nbytes, const c10::Device& device);

}  // namespace tpu::compiled
