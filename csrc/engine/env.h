// Every TORCH_PJRT_* environment variable, declared once: its name, its
// default and what it does. The core reads them only through here; the
// Python layer reads through torch_pjrt._env, which refuses a name this
// table does not declare; the README's table is generated from it
// (`python -m torch_pjrt env`) and a test keeps the two equal. A variable
// added anywhere else fails that test.
#pragma once

#include <cstdint>
#include <vector>

namespace engine::env {

struct Var {
  const char* name;
  const char* fallback;  // what an unset variable means
  const char* doc;
};

const std::vector<Var>& all();

// The variable's value, or nullptr when unset or empty. Throws for a name
// the table does not declare.
const char* get(const char* name);
// A positive integer, else fallback.
int64_t positive(const char* name, int64_t fallback);
// Set, non-empty and not "0".
bool flag(const char* name);

}  // namespace engine::env
