// Planning, donation and the program key (see plan.h).
#include "engine/plan.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>

#include "engine/env.h"

namespace engine {

namespace {

int param_index(Plan& p, const Ref& in) {
  for (size_t i = 0; i < p.params.size(); ++i)
    if (p.params[i].node == in.node && p.params[i].index == in.index) return static_cast<int>(i);
  p.params.push_back(in);
  return static_cast<int>(p.params.size()) - 1;
}

}  // namespace

// No maps and no walk: this runs once per op on the launch path.
bool plan_single(const std::vector<Ref>& refs, Plan& p) {
  Node* n = nullptr;
  for (const Ref& r : refs) {
    if (!r || r.node->materialized()) continue;
    if (n && n != r.node.get()) return false;
    n = r.node.get();
  }
  if (!n) return true;  // nothing to compute
  for (const Ref& in : n->inputs)
    if (!in.node->materialized()) return false;
  p.order.push_back(n);
  p.sources.emplace_back();
  for (const Ref& in : n->inputs) p.sources[0].push_back(Source{true, param_index(p, in)});
  p.targets.push_back(0);
  return true;
}

void plan_graph(const std::vector<Ref>& refs, Plan& p) {
  std::unordered_map<Node*, int> pos;                    // deferred node -> position in order
  std::unordered_map<Node*, std::vector<int>> param_of;  // materialized node -> param index per output
  std::vector<std::pair<Node*, size_t>> stack;
  std::unordered_set<Node*> pushed;  // a DAG: a pushed node is finished or an ancestor
  auto param = [&](const Ref& in) {
    auto& slots = param_of[in.node.get()];
    if (slots.size() <= static_cast<size_t>(in.index)) slots.resize(in.index + 1, -1);
    if (slots[in.index] < 0) {
      slots[in.index] = static_cast<int>(p.params.size());
      p.params.push_back(in);
    }
    return slots[in.index];
  };
  for (const Ref& r : refs) {
    if (!r || r.node->materialized() || pushed.count(r.node.get())) continue;
    stack.push_back({r.node.get(), 0});
    pushed.insert(r.node.get());
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs.size()) {
        Node* m = n->inputs[next++].node.get();
        if (!m->materialized() && pushed.insert(m).second) stack.push_back({m, 0});
        continue;
      }
      pos[n] = static_cast<int>(p.order.size());
      p.order.push_back(n);
      stack.pop_back();
    }
  }
  // Inputs resolved in program order, so parameters are numbered by first use.
  p.sources.resize(p.order.size());
  for (size_t i = 0; i < p.order.size(); ++i)
    for (const Ref& in : p.order[i]->inputs)
      p.sources[i].push_back(in.node->materialized() ? Source{true, param(in)}
                                                     : Source{false, pos[in.node.get()], in.index});
  for (const Ref& r : refs) {
    if (!r) continue;
    auto it = pos.find(r.node.get());
    if (it == pos.end()) continue;
    bool seen = false;
    for (int t : p.targets) seen |= t == it->second;
    if (!seen) p.targets.push_back(it->second);
  }
}

// Donation: a parameter whose node nothing outside this program can reach
// once it has run is consumed by the program, its buffer reused for an
// output of the same type, so x.add_(1) or an optimizer step updates in
// place instead of holding old and new copies at once.
//
// Reachability is read from reference counts: every reference to a node is
// a Ref, and the Refs this call knows of are the program's own (inputs of
// its nodes, the requested refs, the parameter list). A node with more
// references than that is held elsewhere (a tensor, a queued op, a deferred
// check) and is left alone. Nodes of the program that are not outputs live
// on only if held elsewhere; references from them count as internal only
// when they die with the program.
bool donation_enabled() {
  static const bool on = env::flag("TORCH_PJRT_DONATE");
  return on;
}

void pair_outputs(const Plan& p, const std::vector<char>& donatable, Aliases& aliases) {
  std::vector<const shlo::Type*> outs;
  for (int t : p.targets)
    for (const shlo::Type& ty : p.order[t]->out_types) outs.push_back(&ty);
  std::vector<char> taken(outs.size(), 0);
  for (size_t i = 0; i < p.params.size(); ++i) {
    if (!donatable[i]) continue;
    for (size_t o = 0; o < outs.size(); ++o) {
      if (taken[o] || !(*outs[o] == p.params[i].type())) continue;
      taken[o] = 1;
      aliases.emplace_back(static_cast<int>(i), static_cast<int>(o));
      break;
    }
  }
}

Aliases plan_donation(const Plan& p, const std::vector<Ref>& refs) {
  Aliases aliases;
  if (!donation_enabled() || p.params.empty()) return aliases;
  // For each node: Refs to it held by this program, and all Refs to it. The
  // total can only fall while we look (a holder may let go, none can be
  // added without one), so the smallest reading is kept.
  struct Count {
    long internal = 0;
    long total = std::numeric_limits<long>::max();
    std::vector<int> users;  // program nodes reading it
  };
  // Looked up linearly while the program is small (the common strict-mode
  // op: no hashing, one allocation) and through a hash index past that.
  struct Counts {
    std::vector<std::pair<const Node*, Count>> flat;
    std::unordered_map<const Node*, size_t> index;
    Count& operator[](const Node* n) {
      if (index.empty()) {
        for (auto& e : flat)
          if (e.first == n) return e.second;
        if (flat.size() < 16) return flat.emplace_back(n, Count{}).second;
        for (size_t i = 0; i < flat.size(); ++i) index.emplace(flat[i].first, i);
      }
      auto [it, fresh] = index.emplace(n, flat.size());
      if (fresh) flat.emplace_back(n, Count{});
      return flat[it->second].second;
    }
  } count;
  count.flat.reserve(16);
  auto see = [&](const Ref& r) {
    Count& c = count[r.node.get()];
    ++c.internal;
    c.total = std::min(c.total, r.node.use_count());
    return &c;
  };
  for (const Ref& r : refs)
    if (r) see(r);
  for (const Ref& r : p.params) see(r);
  for (size_t i = 0; i < p.order.size(); ++i)
    for (const Ref& in : p.order[i]->inputs) see(in)->users.push_back(static_cast<int>(i));
  auto unreachable_after = [&](const Count& c, const std::vector<char>& releases) {
    if (c.total != c.internal) return false;  // held outside this program
    for (int u : c.users)
      if (!releases[u]) return false;
    return true;
  };
  // Outputs drop their inputs after the run; any other program node dies
  // with the run when only dying program nodes hold it. Users come later in
  // topological order, so one backward pass settles it.
  std::vector<char> releases(p.order.size(), 0);
  for (int t : p.targets) releases[t] = 1;
  for (int i = static_cast<int>(p.order.size()) - 1; i >= 0; --i)
    if (!releases[i]) releases[i] = unreachable_after(count[p.order[i]], releases);

  std::vector<char> donatable(p.params.size(), 0);
  for (size_t i = 0; i < p.params.size(); ++i) {
    const Ref& r = p.params[i];
    donatable[i] = r.node->buffers[r.index].use_count() == 1 &&  // nobody holds the buffer itself
                   unreachable_after(count[r.node.get()], releases);
  }
  pair_outputs(p, donatable, aliases);
  return aliases;
}

Key program_key(const Plan& plan, const Aliases& aliases) {
  Key key;
  key.reserve(128);
  for (const Ref& p : plan.params) key.add(p.type()).mark(';');
  for (size_t i = 0; i < plan.order.size(); ++i) {
    key.mark('|');
    plan.order[i]->append_key(key);
    key.mark('(');
    for (const Source& s : plan.sources[i]) {
      key.mark(s.param ? 'p' : 'n').add(s.at);
      if (!s.param) key.mark('.').add(s.index);
      key.mark(',');
    }
    key.mark(')');
  }
  key.mark('-').mark('>');
  for (int t : plan.targets) key.add(t).mark(',');
  for (const auto& [param, out] : aliases) key.mark('~').add(param).mark('>').add(out);
  return key;
}

namespace {

// An op's name for people (its key also carries the attributes).
std::string name_of(const Node* n) { return n->name; }

// The bookkeeping around ops: reading and writing views, scalar
// conversions and the flat layout of stored results.
bool bookkeeping(const std::string& name) {
  return name.rfind("view", 0) == 0 || name == "convert_scalar" || name == "flatten";
}

}  // namespace

std::string program_text(const Plan& plan, const Aliases& aliases) {
  const std::vector<Node*>& order = plan.order;
  shlo::Builder b;
  std::vector<shlo::Value> pvals;
  for (const Ref& p : plan.params) pvals.push_back(b.param(p.type()));
  std::vector<std::vector<shlo::Value>> vals(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    Node* n = order[i];
    std::vector<shlo::Value> in;
    for (const Source& s : plan.sources[i]) in.push_back(s.param ? pvals[s.at] : vals[s.at][s.index]);
    vals[i] = n->lower(b, in, n->attrs.get());
    if (vals[i].size() != n->out_types.size())
      throw pjrt::Error("lowering of '" + name_of(n) + "' produced " + std::to_string(vals[i].size()) +
                        " values, expected " + std::to_string(n->out_types.size()));
    for (size_t k = 0; k < vals[i].size(); ++k)
      if (!(vals[i][k].type == n->out_types[k]))
        throw pjrt::Error("lowering of '" + name_of(n) + "' produced " + vals[i][k].type.str() + ", expected " +
                          n->out_types[k].str());
  }
  std::vector<shlo::Value> outs;
  for (int t : plan.targets)
    for (const shlo::Value& v : vals[t]) outs.push_back(v);
  return b.finish(outs, aliases);
}

// Built only on failure.
std::string describe(const Plan& plan) {
  std::string w;
  for (Node* n : plan.order) {
    std::string name = name_of(n);
    if (bookkeeping(name)) continue;
    if (!w.empty()) w += ", ";
    w += name;
    if (w.size() > 200) break;
  }
  if (w.empty()) w = name_of(plan.order.back());
  w = "'" + w + "' on inputs (";
  for (size_t i = 0; i < plan.params.size() && i < 8; ++i) w += (i ? ", " : "") + plan.params[i].type().str();
  return w + ")";
}

// Its ops in order, by name alone (no attributes), leaving out the bookkeeping.
std::string summary(const Plan& plan) {
  std::string w;
  int ops = 0;
  for (Node* n : plan.order) {
    std::string name = name_of(n);
    if (bookkeeping(name)) continue;
    ++ops;
    if (w.size() < 60) w += (w.empty() ? "" : "+") + name;
  }
  if (w.empty()) w = name_of(plan.order.back());
  if (w.size() > 60) w = w.substr(0, 60) + "...";
  return ops > 1 ? w + " (" + std::to_string(ops) + " ops)" : w;
}

namespace {

// The deferred nodes reachable from root (root included when deferred) and,
// when leaves is given, the materialized values they read, shared constants
// aside (every program reads those; they carry no data of anyone's).
void reach(Node* root, std::unordered_set<const Node*>& deferred, std::unordered_set<const Node*>* leaves) {
  auto visit = [&](Node* n, std::vector<Node*>& stack) {
    if (n->materialized()) {
      if (leaves && n->device != kAnyDevice) leaves->insert(n);
    } else if (deferred.insert(n).second) {
      stack.push_back(n);
    }
  };
  std::vector<Node*> stack;
  visit(root, stack);
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Ref& in : n->inputs) visit(in.node.get(), stack);
  }
}

}  // namespace

bool split_for_read(const Ref& ref, const std::vector<Ref>& pending, const std::unordered_set<const Node*>& checks,
                    std::vector<Ref>& with, std::vector<Ref>& apart) {
  std::unordered_set<const Node*> mine, reads;
  reach(ref.node.get(), mine, &reads);
  reads.insert(mine.begin(), mine.end());
  // A check of data the read's value is computed from is answered by the
  // read's own program: the read never shows data a pending check rejects.
  for (const Ref& p : pending) {
    if (!checks.count(p.node.get()) || mine.count(p.node.get())) continue;
    std::unordered_set<const Node*> d, l;
    reach(p.node.get(), d, &l);
    bool relevant = false;
    for (const auto* set : {&d, &l})
      for (const Node* n : *set) relevant = relevant || reads.count(n);
    if (relevant) mine.insert(d.begin(), d.end());
  }
  // Whether a deferred node's graph reaches the read's program, memoized
  // over the pending graph (walked once).
  std::unordered_map<const Node*, bool> memo;
  auto reaches = [&](Node* root) {
    std::vector<std::pair<Node*, size_t>> stack{{root, 0}};
    std::vector<char> hit{0};
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs.size()) {
        Node* m = n->inputs[next++].node.get();
        if (m->materialized()) continue;
        if (mine.count(m)) {
          hit.back() = 1;
          continue;
        }
        auto f = memo.find(m);
        if (f != memo.end()) {
          hit.back() |= f->second;
          continue;
        }
        stack.push_back({m, 0});
        hit.push_back(0);
        continue;
      }
      const bool h = hit.back();
      memo[n] = h;
      stack.pop_back();
      hit.pop_back();
      if (!hit.empty()) hit.back() |= h;
    }
    return memo[root];
  };
  for (const Ref& p : pending) {
    Node* n = p.node.get();
    if (n->materialized() || mine.count(n))
      with.push_back(p);
    else if (!reaches(n))
      apart.push_back(p);
    else
      return false;
  }
  return true;
}

}  // namespace engine
