// Views as math: reading a strided view out of a flat storage value and
// writing a value back through a view. The view's storage offset is a 0-d
// runtime operand, so narrowing at a new offset reuses the same program.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

// The static part of a view over a flat storage of `storage_numel` elements.
struct StridedView {
  shlo::Shape sizes;
  std::vector<int64_t> strides;
  int64_t storage_numel = 0;
  // offset + span <= storage_numel (decided by the caller, who knows offset):
  // then no padding is needed to slice at a runtime offset.
  bool fits = true;
  auto fields() const { return std::tie(sizes, strides, storage_numel, fits); }
  // Elements of storage the decomposed read touches from offset on.
  int64_t span() const;
};

// Reinterprets a flat 1-D value as another element type (bitcast): the
// result has floor(bytes / sizeof(to)) elements.
Value reinterpret_flat(Builder& b, Value flat, shlo::DType to);
// Reads the view: result has shape v.sizes.
Value read_view(Builder& b, Value flat, Value offset, const StridedView& v);
// Writes `value` (shape v.sizes) through the view; returns the new flat.
Value write_view(Builder& b, Value flat, Value offset, Value value, const StridedView& v);

}  // namespace ops
