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
// The variable's value, else the table's fallback: a default is written
// once, in the table, never again where it is read.
const char* value(const char* name);
// A positive integer: the variable's, else the table's fallback (a number).
int64_t positive(const char* name);
// The same for a variable whose default is computed when read (the table
// says how).
int64_t positive(const char* name, int64_t computed);
// A count, 0 included (0 usually turns a feature off): the variable's,
// else the table's fallback.
int64_t count(const char* name);
// On: the value, else the table's fallback, is "1" or another non-"0"
// text ("unset" as a fallback is off).
bool flag(const char* name);

}  // namespace engine::env
