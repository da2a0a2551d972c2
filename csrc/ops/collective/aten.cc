// The collective family's ATen side: see aten.h. The lowering is
// collective.h; the c10d backend that meets the members is aten/distributed.cc.
#include "ops/collective/aten.h"

#include "aten/errors.h"
#include "aten/tensor.h"

namespace tpu {

std::optional<ops::Reduction> device_reduction(const c10d::ReduceOp& op, const std::vector<at::Tensor>& ts) {
  switch (op) {
    case c10d::ReduceOp::SUM:
      return ops::Reduction::Sum;
    case c10d::ReduceOp::PRODUCT:
      return ops::Reduction::Product;
    case c10d::ReduceOp::MIN:
      return ops::Reduction::Min;
    case c10d::ReduceOp::MAX:
      return ops::Reduction::Max;
    case c10d::ReduceOp::AVG:
      for (const at::Tensor& t : ts)
        TORCH_CHECK(at::isFloatingType(t.scalar_type()) || at::isComplexType(t.scalar_type()),
                    "ReduceOp.AVG needs floating point tensors, got ", t.scalar_type());
      return ops::Reduction::Avg;
    default:
      return std::nullopt;
  }
}

std::vector<engine::Ref> flat_inputs(const std::vector<at::Tensor>& ts, std::vector<shlo::Type>& types) {
  std::vector<engine::Ref> flat;
  for (const at::Tensor& t : ts) {
    flat.push_back(read(t.reshape({-1})));
    types.push_back(flat.back().type());
  }
  return flat;
}

engine::Replicas run_collective(const ops::CollectiveCall& c, const std::vector<shlo::Type>& types,
                                const std::vector<int>& devices, const std::vector<std::vector<engine::Ref>>& all) {
  engine::Key key = ops::collective_key(c, types);
  key.mark(';').add(devices);
  return guarded(ops::collective_name(c.kind), [&] {
    return engine::run_replicas(
        key, [&] { return ops::collective_program(c, types); },
        [&] { return std::string("the collective ") + ops::collective_name(c.kind); }, devices, all);
  });
}

void store_results(const ops::CollectiveCall& c, const std::vector<engine::Ref>& results,
                   const std::vector<at::Tensor>& outputs, c10::Device device) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    at::Tensor flat_out = wrap(results[i], device);
    TORCH_CHECK(flat_out.numel() == outputs[i].numel(), ops::collective_name(c.kind), ": output ", i, " holds ",
                outputs[i].numel(), " elements, the result ", flat_out.numel());
    outputs[i].copy_(flat_out.view(outputs[i].sizes()));
  }
}

}  // namespace tpu
