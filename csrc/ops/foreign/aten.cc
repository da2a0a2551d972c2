// Foreign StableHLO modules on the tpu: adding one (its text, exported by
// JAX) and calling it on tpu tensors as one node of the op graph, so it
// runs in every eager mode, fuses with the ops around it and is recorded
// into torch.compile programs like any kernel. The lowering is foreign.h.
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include "aten/errors.h"
#include "aten/tensor.h"
#include "engine/mode.h"
#include "engine/program.h"
#include "ops/foreign/foreign.h"
#include "ops/foreign/python.h"

namespace tpu {

namespace {

namespace py = pybind11;
using Vals = std::vector<shlo::Value>;

py::list types_of(const std::vector<shlo::Type>& ts) {
  py::list l;
  for (const shlo::Type& t : ts)
    l.append(py::make_tuple(py::cast(t.shape), py::cast(std::string(shlo::dtype_name(t.dtype)))));
  return l;
}

// Adds a module's text; returns (digest, input types, output types), each
// type as (shape, element type name).
py::tuple add_module(const std::string& text) {
  auto m = guarded("reading a StableHLO module", [&] { return ops::foreign::add(text); });
  return py::make_tuple(m->digest, types_of(m->inputs), types_of(m->outputs));
}

// Gives up the donated inputs' storages (see jax_op's donate_argnums): each
// such tensor becomes an empty tensor, so when nothing else shares its
// storage the op's node holds the last reference to the old value and its
// program consumes that buffer in place. Done before the scope launches
// the node, which a later release would be too late for. A tensor autograd
// may still need is kept, and a compiled graph's trace ignores donation
// (its program decides what it consumes).
void release(const std::vector<at::Tensor>& inputs, const std::vector<int64_t>& donate) {
  if (engine::tracing()) return;
  for (int64_t i : donate) {
    at::Tensor t = inputs[i];
    // (.data / .detach() views may not change their metadata: kept too.)
    if (t.requires_grad() || !t.unsafeGetTensorImpl()->allow_tensor_metadata_change()) continue;
    t.set_();
  }
}

std::vector<at::Tensor> call_module(const std::string& digest, const std::vector<at::Tensor>& inputs,
                                    const std::vector<int64_t>& donate) {
  auto m = guarded("calling a StableHLO module", [&] { return ops::foreign::find(digest); });
  TORCH_CHECK_VALUE(inputs.size() == m->inputs.size(), "jax_op: the function takes ", m->inputs.size(), " arrays, got ",
                    inputs.size(), " tensors");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor& t = inputs[i];
    TORCH_CHECK(t.defined() && t.device().type() == c10::DeviceType::PrivateUse1, "jax_op: input ", i,
                " must be a tpu tensor, got one on ", t.defined() ? t.device().str() : std::string("(undefined)"));
    shlo::Type want = m->inputs[i];
    TORCH_CHECK_TYPE(type_of(t) == want, "jax_op: input ", i, " is ", t.scalar_type(), shape_str(t.sizes()),
                     " but the exported function takes ", want.str());
  }
  for (int64_t i : donate)
    TORCH_CHECK_VALUE(i >= 0 && i < static_cast<int64_t>(inputs.size()), "jax_op: cannot donate argument ", i, " of ",
                      inputs.size());
  // guarded: a plugin error met here (debug mode runs the op at once, a
  // sticky error from earlier work) becomes the PyTorch exception other
  // kernels raise.
  return guarded("running a jax_op", [&] {
    engine::OpScope scope;
    const at::Device device = inputs.empty() ? common_device({}) : inputs[0].device();
    std::vector<engine::Ref> in;
    in.reserve(inputs.size());
    for (const at::Tensor& t : inputs) {
      TORCH_CHECK(t.device() == device, "jax_op: all inputs must be on one device, got ", device, " and ", t.device());
      in.push_back(read(t));
    }
    std::vector<engine::Ref> outs = op(
        "jax_op", std::move(in), m->outputs,
        [](shlo::Builder& b, const Vals& v, const std::string& d) { return ops::foreign::call(b, v, d); }, digest);
    std::vector<at::Tensor> result;
    result.reserve(outs.size());
    for (engine::Ref& r : outs) result.push_back(wrap(std::move(r), device));
    release(inputs, donate);
    return result;
  });
}

}  // namespace

void bind_foreign(py::module& m) {
  m.def("_foreign_add", &add_module, py::arg("text"));
  m.def("_foreign_call", &call_module, py::arg("digest"), py::arg("inputs"),
        py::arg("donate") = std::vector<int64_t>{});
}

}  // namespace tpu
