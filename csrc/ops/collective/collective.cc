#include "ops/collective/collective.h"

#include <stdexcept>

#include "ops/common/lowering.h"

namespace ops {

using shlo::Builder;
using shlo::DType;
using shlo::Type;
using shlo::Value;

namespace {

std::string replica_groups(int n) {
  std::string g = "replica_groups = dense<[[";
  for (int i = 0; i < n; ++i) g += (i ? ", " : "") + std::to_string(i);
  return g + "]]> : tensor<1x" + std::to_string(n) + "xi64>";
}

// The combining region of a reduction over dtype d (a predicate sums as
// "or" and multiplies as "and", as PyTorch's bool reductions do).
std::string combiner(Builder& b, Reduction r, DType d) {
  const bool pred = d == DType::PRED;
  const char* op = hlo::kAdd;
  switch (r) {
    case Reduction::Sum:
    case Reduction::Avg:
      op = pred ? hlo::kOr : hlo::kAdd;
      break;
    case Reduction::Product:
      op = pred ? hlo::kAnd : hlo::kMultiply;
      break;
    case Reduction::Min:
      op = hlo::kMinimum;
      break;
    case Reduction::Max:
      op = hlo::kMaximum;
      break;
  }
  return b.region({Type{d, {}}, Type{d, {}}}, [op](Builder& b, const std::vector<Value>& a) {
    return std::vector<Value>{b.op1(op, {a[0], a[1]}, a[0].type)};
  });
}

Value averaged(Builder& b, Value v, const CollectiveCall& c) {
  if (c.reduction != Reduction::Avg) return v;
  return b.op1(hlo::kDivide, {v, b.constant(v.dtype(), c.group_size, v.type.shape)}, v.type);
}

Value lower_one(Builder& b, const CollectiveCall& c, Value x) {
  const std::string groups = replica_groups(c.group_size);
  const Type out = collective_result(c, x.type);
  switch (c.kind) {
    case Collective::AllReduce:
      return averaged(b, b.op(hlo::kAllReduce, {x}, {out}, groups, {combiner(b, c.reduction, x.dtype())})[0], c);
    case Collective::ReduceScatter:
      return averaged(b,
                      b.op(hlo::kReduceScatter, {x}, {out}, "scatter_dimension = 0 : i64, " + groups,
                           {combiner(b, c.reduction, x.dtype())})[0],
                      c);
    case Collective::AllGather:
      return b.op1(hlo::kAllGather, {x}, out, "all_gather_dim = 0 : i64, " + groups);
    case Collective::AllToAll:
      return b.op1(hlo::kAllToAll, {x}, out,
                   "split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = " +
                       std::to_string(c.group_size) + " : i64, " + groups);
    case Collective::Broadcast: {
      // Everyone gathers every row and keeps the root's: exact for every
      // dtype (NaN and infinities included), unlike masking and summing.
      const int64_t k = x.type.shape[0];
      Value row = b.reshape(x, {1, k});
      Value all =
          b.op1(hlo::kAllGather, {row}, Type{x.dtype(), {c.group_size, k}}, "all_gather_dim = 0 : i64, " + groups);
      Value mine = b.slice(all, {c.root, 0}, {c.root + 1, k}, {1, 1});
      return b.reshape(mine, {k});
    }
  }
  throw std::logic_error("unknown collective");
}

}  // namespace

const char* collective_name(Collective kind) {
  switch (kind) {
    case Collective::AllReduce:
      return "all_reduce";
    case Collective::AllGather:
      return "all_gather";
    case Collective::ReduceScatter:
      return "reduce_scatter";
    case Collective::AllToAll:
      return "all_to_all";
    case Collective::Broadcast:
      return "broadcast";
  }
  return "collective";
}

Type collective_result(const CollectiveCall& c, const Type& input) {
  if (input.shape.size() != 1) throw std::invalid_argument("collective inputs are flat");
  const int64_t k = input.shape[0], n = c.group_size;
  switch (c.kind) {
    case Collective::AllGather:
      return Type{input.dtype, {k * n}};
    case Collective::ReduceScatter:
      if (k % n) throw std::invalid_argument("reduce_scatter: the input does not split evenly over the group");
      return Type{input.dtype, {k / n}};
    case Collective::AllToAll:
      if (k % n) throw std::invalid_argument("all_to_all: the input does not split evenly over the group");
      return input;
    default:
      return input;
  }
}

std::string collective_program(const CollectiveCall& c, const std::vector<Type>& inputs) {
  Builder b;
  b.module_attributes("mhlo.num_replicas = " + std::to_string(c.group_size) + " : i32, mhlo.num_partitions = 1 : i32");
  std::vector<Value> outs;
  for (const Type& t : inputs) outs.push_back(lower_one(b, c, b.param(t)));
  return b.finish(outs);
}

engine::Key collective_key(const CollectiveCall& c, const std::vector<Type>& inputs) {
  return engine::Key::op(std::string("collective:") + collective_name(c.kind), c.reduction, c.group_size, c.root,
                         inputs);
}

}  // namespace ops
