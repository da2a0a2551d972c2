// Foreign StableHLO modules (a JAX function exported by jax.export, a
// Pallas kernel) called from our programs. The module's text is cleaned
// (locations and module attributes dropped), its symbols renamed with a
// prefix from the digest of that text, every function made private, and
// the result is inlined beside @main and called with func.call. Nodes
// carry only the digest: it names the text by content, so a cache key
// holding it stays valid across processes (the disk cache), and the
// lowering finds the text in a process-wide table filled by add().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "shlo/builder.h"

namespace ops::foreign {

struct Module {
  std::string digest;     // 32 hex digits of the cleaned text
  std::string entry;      // the renamed @main
  std::string functions;  // the module's functions, renamed and private
  std::vector<shlo::Type> inputs, outputs;
};

// Cleans and renames `text` (the module as printed by MLIR, pretty or
// generic form). Throws std::invalid_argument with the reason when the text
// is not a module we can inline (no @main, dynamic shapes, an element type
// torch has no dtype for, ...).
Module prepare(const std::string& text);

// prepare()s and records the module in the process-wide table (once per
// digest) and returns it.
std::shared_ptr<const Module> add(const std::string& text);
// The module added under digest; std::invalid_argument if none was.
std::shared_ptr<const Module> find(const std::string& digest);

// Emits the module's functions into b (once per program) and calls its
// entry on `in`.
std::vector<shlo::Value> call(shlo::Builder& b, const std::vector<shlo::Value>& in, const std::string& digest);

// Parses a tensor type, e.g. tensor<4x3xf32>; throws std::invalid_argument.
shlo::Type parse_type(const std::string& text);

}  // namespace ops::foreign
