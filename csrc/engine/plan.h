// Planning: the program behind some deferred values, as data. A plan orders
// the deferred nodes behind the requested refs, resolves each input to a
// parameter (a materialized value) or an earlier node's output, and lists
// the nodes whose outputs the program returns. Donation pairs parameters
// nothing outside the program can reach with outputs of their type; the
// program key names a plan and its donation in the cache, and the program
// text is its StableHLO. Nothing here launches, waits or changes the graph:
// the launch path (engine/launch.h) and compiled graphs (engine/program.h)
// plan through these, holding the graph lock while they read the graph.
#pragma once

#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/graph.h"
#include "engine/key.h"

namespace engine {

// Where a deferred node's input comes from inside one program: a parameter
// (a materialized value) or an output of an earlier node of the program.
struct Source {
  bool param;
  int at;         // parameter index, or position of the node in the order
  int index = 0;  // output index of that node
};

// The program behind some refs: deferred nodes in topological order, each
// input resolved to a Source, and the materialized values it reads.
struct Plan {
  std::vector<Node*> order;
  std::vector<std::vector<Source>> sources;  // per node of order
  std::vector<Ref> params;
  std::vector<int> targets;  // positions in order whose outputs the program returns
};

// (param, output) pairs: the parameter's buffer is reused for the output.
using Aliases = std::vector<std::pair<int, int>>;

// The common strict-mode case, one op whose inputs are all on the device,
// planned with no graph walk; false when refs need plan_graph().
bool plan_single(const std::vector<Ref>& refs, Plan& p);
// The deferred graph behind refs; parameters numbered by first use.
void plan_graph(const std::vector<Ref>& refs, Plan& p);

// Whether programs may consume their inputs (TORCH_PJRT_DONATE, default on).
bool donation_enabled();
// Pairs the parameters marked donatable with unused outputs of their type.
void pair_outputs(const Plan& p, const std::vector<char>& donatable, Aliases& aliases);
// The parameters of p that nothing outside the program (refs are what the
// caller asked for) can reach once it has run, paired with outputs.
Aliases plan_donation(const Plan& p, const std::vector<Ref>& refs);

// The plan's cache key: parameter types, each node's key and sources, the
// outputs and the donation.
Key program_key(const Plan& plan, const Aliases& aliases);
// The plan as a StableHLO module.
std::string program_text(const Plan& plan, const Aliases& aliases);
// The ops and input types, for error messages.
std::string describe(const Plan& plan);
// A program's name on the device timeline: its ops by name.
std::string summary(const Plan& plan);

// Sorts the pending values of a host read of ref (fused mode) into those to
// compute with ref in one program (`with`: values inside ref's deferred
// graph, and the checks among `checks` that read any data ref's graph reads)
// and those whose deferred graph shares no node with that program
// (`apart`). False when a value shares only part of it: shared work must not
// run twice, so one program then computes everything. The caller holds the
// graph lock.
bool split_for_read(const Ref& ref, const std::vector<Ref>& pending, const std::unordered_set<const Node*>& checks,
                    std::vector<Ref>& with, std::vector<Ref>& apart);

}  // namespace engine
