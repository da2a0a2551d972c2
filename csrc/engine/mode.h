// Eager execution modes. The mode decides only when deferred values are
// materialized, never how an op lowers.
//   debug : each op runs and is waited for before the call returns, so an
//           error surfaces on the line that caused it.
//   strict: each op is compiled (through the cache) and launched at once;
//           the plugin runs it asynchronously and the host waits only when
//           it needs data.
//   fused : ops keep recording; the pending values of all live storages are
//           compiled as one program and launched when the host needs data,
//           on synchronize(), or when the pending graph grows past a bound.
//           A cluster cut at the bound goes to the launch queue, so the next
//           one records while it compiles and runs.
#pragma once

#include <memory>
#include <string>

#include "engine/graph.h"
// Host reads go through the mode (prepare_read()): they are the modes' too.
#include "engine/reads.h"

namespace engine {

enum class Mode { Debug, Strict, Fused };

// The calling thread's mode (its own if set, else the global default).
Mode mode();
// Sets the global default (and clears the calling thread's own).
void set_mode(Mode m);
// Sets only the calling thread's mode (nullopt-like: has=false clears it).
void set_thread_mode(bool has, Mode m);
bool thread_mode(Mode* m);
Mode parse_mode(const std::string& name);
const char* mode_name(Mode m);

// A mutable cell holding one storage's current value.
struct Slot {
  Ref value;
};

// Called whenever an op stores a new value into a slot.
void commit(const std::shared_ptr<Slot>& slot);

// Marks the running of one op's kernel on the calling thread (nested scopes
// count as one). Values it commits are launched when the outermost scope
// ends, not at the commit: until the kernel returns, its own temporaries
// still hold the values it replaced, and a launch that saw those references
// would not donate them (an in-place loop would hold two copies of its
// tensor). A sticky error is still raised at the commit.
class OpScope {
 public:
  OpScope();
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;
};
// Fused mode: compiles and launches every pending value (one program).
// Every mode: returns once all queued work is launched.
void flush();
// Launches every pending and queued value and waits for all launched work,
// raising nothing: failures stay pending for the next read or synchronize()
// (for callers that must not fail, such as the end of a profiler trace).
void settle();
// Makes ref computable on the host: in fused mode flushes it together with
// all pending values, so shared subgraphs are computed once.
void prepare_read(const Ref& ref);

struct FusedStats {
  int64_t flushes = 0;
  int64_t pending_nodes = 0;
  int64_t max_nodes = 0;  // the size bound that triggers a flush
};
FusedStats fused_stats();
void set_fused_max_nodes(int64_t n);

// Ops committed so far in each mode, indexed by Mode: what a test suite run
// "in fused mode" reads to show its ops really went through that mode.
struct ModeCounts {
  int64_t ops[3] = {0, 0, 0};
};
ModeCounts mode_counts();

}  // namespace engine
