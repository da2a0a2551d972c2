// Shape-changing data movement with PyTorch semantics: concatenation,
// flips, rolls, constant padding and triangular masks.
#pragma once

#include <vector>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

// torch.cat: operands converted to `to` and joined along dim; operands with
// no elements along dim are skipped.
Value cat(Builder& b, const std::vector<Value>& xs, int64_t dim, shlo::DType to);
Value flip(Builder& b, Value x, const std::vector<int64_t>& dims);
// torch.roll; empty dims rolls the flattened tensor by shifts[0].
Value roll(Builder& b, Value x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims);
// torch.constant_pad_nd: pad = (lo, hi) pairs from the last dim backwards;
// negative pads crop. value: 0-d.
Value constant_pad(Builder& b, Value x, Value value, const std::vector<int64_t>& pad);
// triu (upper) / tril over the last two dims; diagonal: 0-d s64 operand, so
// every diagonal shares one program.
Value triangle(Builder& b, Value x, Value diagonal, bool upper);

}  // namespace ops
