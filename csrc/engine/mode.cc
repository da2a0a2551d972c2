#include "engine/mode.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "engine/checks.h"
#include "engine/env.h"
#include "engine/executor.h"
#include "engine/launch.h"
#include "engine/plan.h"
#include "engine/program.h"
#include "engine/reads.h"
#include "engine/runtime.h"
#include "engine/timeline.h"

namespace engine {

namespace {

Mode initial_mode() { return parse_mode(env::value("TORCH_PJRT_EAGER_MODE")); }

int64_t initial_max_nodes() { return env::positive("TORCH_PJRT_FUSED_MAX_NODES"); }

Mode g_default = initial_mode();
thread_local bool t_has_mode = false;
thread_local Mode t_mode = Mode::Strict;

std::mutex g_mu;
std::vector<std::weak_ptr<Slot>> g_pending;
int64_t g_flushes = 0;
int64_t g_max_nodes = initial_max_nodes();
std::atomic<int64_t> g_commits[3];

// The calling thread's open OpScopes, and what its outermost one launches
// when it ends (see OpScope).
thread_local int t_op_depth = 0;
thread_local uint64_t t_op_first_serial = 0;  // the outermost scope's first op's serial
thread_local std::vector<Ref> t_held;         // strict: values committed in the kernel
thread_local bool t_flush_due = false;        // fused: the bound was passed in the kernel

}  // namespace

Mode mode() { return t_has_mode ? t_mode : g_default; }

void set_mode(Mode m) {
  if (g_default != m) flush();
  g_default = m;
  t_has_mode = false;
}

void set_thread_mode(bool has, Mode m) {
  if (!has || m != mode()) flush();
  t_has_mode = has;
  t_mode = m;
}

bool thread_mode(Mode* m) {
  if (t_has_mode) *m = t_mode;
  return t_has_mode;
}

Mode parse_mode(const std::string& name) {
  if (name == "debug") return Mode::Debug;
  if (name == "strict") return Mode::Strict;
  if (name == "fused") return Mode::Fused;
  throw std::invalid_argument("unknown eager mode '" + name + "' (expected debug, strict or fused)");
}

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::Debug:
      return "debug";
    case Mode::Strict:
      return "strict";
    case Mode::Fused:
      return "fused";
  }
  return "?";
}

namespace {

void count_flush() {
  std::lock_guard<std::mutex> g(g_mu);
  ++g_flushes;
}

// Pending values of live slots; slots whose storage died are dropped, so a
// temporary never written to the host is never computed on its own. Whether
// a value is already materialized is left to materialize(): the executor may
// be materializing an earlier cluster right now.
std::vector<Ref> take_pending() {
  std::lock_guard<std::mutex> g(g_mu);
  std::vector<Ref> refs;
  for (auto& w : g_pending)
    if (auto s = w.lock())
      if (s->value) refs.push_back(s->value);
  g_pending.clear();
  reset_recorded_nodes();
  return refs;
}

// Hands the pending cluster to the launch queue; the caller goes on
// recording while the executor compiles and launches it.
// quietly: leaves a pending error for the next caller (a kernel's exit).
void flush_async(bool quietly = false) {
  std::vector<Ref> refs = take_pending();
  if (refs.empty()) return;
  count_flush();
  if (quietly)
    enqueue_quietly({std::move(refs)});
  else
    enqueue(std::move(refs));
}

// The values one kernel committed, in programs: values whose deferred
// graphs share a node the kernel recorded are computed by one program. An
// op with several results (attention's output and its log-sum-exp, a
// norm's output and statistics, sort's values and indices) is then
// computed once, not once per result; unrelated values keep a program
// each, so each keeps the key it has alone. Nodes recorded before the
// kernel are never followed: whether the launch queue has computed them
// yet varies from run to run, and the grouping (so the programs' keys)
// must not. In commit order by each program's first value.
std::vector<std::vector<Ref>> programs_of(std::vector<Ref>& held) {
  const size_t n = held.size();
  std::vector<size_t> root(n);
  for (size_t i = 0; i < n; ++i) root[i] = i;
  auto find = [&](size_t i) {
    while (root[i] != i) i = root[i] = root[root[i]];
    return i;
  };
  if (n > 1) {
    // The launch queue may be materializing (and trimming) these graphs.
    auto lock = lock_graph();
    std::unordered_map<const Node*, size_t> reached;  // deferred node -> the first value reaching it
    std::vector<const Node*> stack;
    for (size_t i = 0; i < n; ++i) {
      stack.assign(1, held[i].node.get());
      while (!stack.empty()) {
        const Node* node = stack.back();
        stack.pop_back();
        if (node->materialized() || node->serial < t_op_first_serial) continue;
        auto [it, fresh] = reached.emplace(node, i);
        if (!fresh) {
          root[find(i)] = find(it->second);
          continue;
        }
        for (const Ref& in : node->inputs) stack.push_back(in.node.get());
      }
    }
  }
  std::vector<std::vector<Ref>> programs;
  std::unordered_map<size_t, size_t> program_of;  // root -> its index in programs
  for (size_t i = 0; i < n; ++i) {
    auto [it, fresh] = program_of.emplace(find(i), programs.size());
    if (fresh) programs.emplace_back();
    programs[it->second].push_back(std::move(held[i]));
  }
  return programs;
}

// Queues what the calling thread's running kernel holds back: anything it
// waits for must include its own earlier writes.
void release_held() {
  if (t_held.empty()) return;
  std::vector<std::vector<Ref>> programs = programs_of(t_held);
  t_held.clear();
  enqueue_quietly(std::move(programs));
}

}  // namespace

OpScope::OpScope() {
  check_not_forked();
  if (t_op_depth++ == 0) t_op_first_serial = record_serial();
}

OpScope::~OpScope() {
  if (--t_op_depth > 0) return;
  release_held();
  if (!t_flush_due) return;
  t_flush_due = false;
  flush_async(/*quietly=*/true);
}

void flush() {
  check_not_forked();
  release_held();
  flush_async();
  drain();
}

void settle() {
  check_not_forked();
  release_held();
  flush_async(/*quietly=*/true);
  quiesce();
}

void prepare_read(const Ref& ref) {
  release_held();
  drain();
  hold_checks({});
  if (ref.node->materialized()) return;
  // The queue is idle: materialize here rather than pay a thread hop.
  std::vector<Ref> refs = take_pending();
  count_flush();
  // What the read needs runs first, alone; the rest of the pending graph, if
  // it shares no work with it, is launched behind it and not waited for. A
  // loop whose host reads a flag the step's work does not feed (generate()'s
  // "every sequence done" without an end token) then records its next step
  // while the device runs this one, as the host runs ahead of a CUDA stream.
  std::vector<Ref> with, apart;
  const std::unordered_set<const Node*> checks = refs.empty() ? std::unordered_set<const Node*>{} : deferred_checks();
  bool split = false;
  if (!refs.empty()) {
    // The launch queue is idle (drained above), but another thread's
    // strict-mode launch may be trimming nodes.
    auto lock = lock_graph();
    split = split_for_read(ref, refs, checks, with, apart);
  }
  if (!split || apart.empty()) {
    refs.push_back(ref);
    materialize(refs);
    return;
  }
  with.push_back(ref);
  materialize(with);
  std::unordered_set<const Node*> held;
  for (const Ref& r : apart)
    if (checks.count(r.node.get())) held.insert(r.node.get());
  hold_checks(std::move(held));
  count_flush();
  enqueue(std::move(apart));
}

void commit(const std::shared_ptr<Slot>& slot) {
  if (tracing()) return;  // a compiled graph: its outputs are taken at the end
  const Mode m = mode();
  g_commits[static_cast<int>(m)].fetch_add(1, std::memory_order_relaxed);
  switch (m) {
    case Mode::Debug:
      drain();
      materialize({slot->value});
      {
        timeline::Scoped span(timeline::Kind::Wait, "wait for the op (debug mode)");
        buffer(slot->value)->await_ready("running an op");
      }
      return;
    case Mode::Strict:
      if (t_op_depth == 0) {
        enqueue({slot->value});
      } else {
        raise_pending_error();
        t_held.push_back(slot->value);
      }
      return;
    case Mode::Fused: {
      raise_pending_error();
      bool over;
      {
        std::lock_guard<std::mutex> g(g_mu);
        g_pending.push_back(slot);
        over = recorded_nodes() > g_max_nodes;
      }
      if (!over) return;
      if (t_op_depth == 0)
        flush_async();
      else
        t_flush_due = true;
      return;
    }
  }
}

FusedStats fused_stats() {
  std::lock_guard<std::mutex> g(g_mu);
  return FusedStats{g_flushes, recorded_nodes(), g_max_nodes};
}

ModeCounts mode_counts() {
  ModeCounts c;
  for (int i = 0; i < 3; ++i) c.ops[i] = g_commits[i].load(std::memory_order_relaxed);
  return c;
}

void set_fused_max_nodes(int64_t n) {
  std::lock_guard<std::mutex> g(g_mu);
  g_max_nodes = n;
}

}  // namespace engine
