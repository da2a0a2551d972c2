// Eager execution modes. The mode decides only when deferred values are
// materialized, never how an op lowers.
//   debug : each op runs and is waited for before the call returns, so an
//           error surfaces on the line that caused it.
//   strict: each op is compiled (through the cache) and launched at once;
//           the plugin runs it asynchronously and the host waits only when
//           it needs data.
#pragma once

#include <string>

#include "engine/graph.h"

namespace engine {

enum class Mode { Debug, Strict };

Mode mode();
void set_mode(Mode m);
Mode parse_mode(const std::string& name);
const char* mode_name(Mode m);

// Called on every value an op stores into a tensor.
void commit(const Ref& value);

}  // namespace engine
