// Set membership (isin): PyTorch semantics over flattened test elements.
#pragma once

#include "shlo/builder.h"

namespace ops {

// For each element of x (any shape), whether it equals some element of
// test (flattened); negated when invert. Both already in one dtype.
shlo::Value isin(shlo::Builder& b, shlo::Value x, shlo::Value test, bool invert);

}  // namespace ops
