#include "engine/mode.h"

#include <cstdlib>

namespace engine {

namespace {

Mode initial_mode() {
  const char* env = std::getenv("TORCH_PJRT_EAGER_MODE");
  return env ? parse_mode(env) : Mode::Strict;
}

Mode g_default = initial_mode();
thread_local bool t_has_mode = false;
thread_local Mode t_mode = Mode::Strict;

}  // namespace

Mode mode() { return t_has_mode ? t_mode : g_default; }

void set_mode(Mode m) {
  g_default = m;
  t_has_mode = false;
}

Mode parse_mode(const std::string& name) {
  if (name == "debug") return Mode::Debug;
  if (name == "strict") return Mode::Strict;
  throw std::invalid_argument("unknown eager mode '" + name + "' (expected debug or strict)");
}

const char* mode_name(Mode m) { return m == Mode::Debug ? "debug" : "strict"; }

void commit(const Ref& value) {
  materialize({value});
  if (mode() == Mode::Debug) buffer(value)->await_ready("running an op");
}

}  // namespace engine
