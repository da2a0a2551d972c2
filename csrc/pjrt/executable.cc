// Compiled programs: their output sizes for memory accounting, launches
// on one device or on every replica at once, and serialization for the
// compilation cache.
#include <memory>
#include <vector>

#include "pjrt/api_args.h"
#include "pjrt/runtime.h"

namespace pjrt {

Executable::Executable(const Api* api, PJRT_LoadedExecutable* e) : api_(api), exe_(e) {
  auto g = PJRT_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  g.loaded_executable = exe_;
  api_->check(api_->raw()->PJRT_LoadedExecutable_GetExecutable(&g), "PJRT_LoadedExecutable_GetExecutable");
  unloaded_ = g.executable;
  auto n = PJRT_ARGS(PJRT_Executable_NumOutputs_Args);
  n.executable = unloaded_;
  api_->check(api_->raw()->PJRT_Executable_NumOutputs(&n), "PJRT_Executable_NumOutputs");
  num_outputs_ = n.num_outputs;
  // Output sizes, for memory accounting of every result buffer.
  auto et = PJRT_ARGS(PJRT_Executable_OutputElementTypes_Args);
  et.executable = unloaded_;
  auto od = PJRT_ARGS(PJRT_Executable_OutputDimensions_Args);
  od.executable = unloaded_;
  out_bytes_.assign(num_outputs_, 0);
  if (!api_->raw()->PJRT_Executable_OutputElementTypes(&et) && !api_->raw()->PJRT_Executable_OutputDimensions(&od) &&
      et.num_output_types == num_outputs_) {
    size_t k = 0;
    for (size_t i = 0; i < num_outputs_; ++i) {
      int64_t n = static_cast<int64_t>(element_size(et.output_types[i]));
      for (size_t j = 0; j < od.dim_sizes[i]; ++j) n *= od.dims[k++];
      out_bytes_[i] = n;
    }
  }
}

Executable::~Executable() {
  if (unloaded_) {
    auto d = PJRT_ARGS(PJRT_Executable_Destroy_Args);
    d.executable = unloaded_;
    api_->raw()->PJRT_Executable_Destroy(&d);
  }
  auto d = PJRT_ARGS(PJRT_LoadedExecutable_Destroy_Args);
  d.executable = exe_;
  api_->raw()->PJRT_LoadedExecutable_Destroy(&d);
}

std::vector<BufferPtr> Executable::execute(const std::vector<PJRT_Buffer*>& in,
                                           const std::vector<int64_t>& non_donatable, bool,
                                           std::unique_ptr<Event>* done, const Launch& at) const {
  auto opts = PJRT_ARGS(PJRT_ExecuteOptions);
  opts.non_donatable_input_indices = non_donatable.data();
  opts.num_non_donatable_input_indices = non_donatable.size();
  std::vector<PJRT_Buffer*> outs(num_outputs_, nullptr);
  PJRT_Buffer* const* arg_list = in.data();
  PJRT_Buffer** out_list = outs.data();
  auto a = PJRT_ARGS(PJRT_LoadedExecutable_Execute_Args);
  a.executable = exe_;
  a.options = &opts;
  a.argument_lists = &arg_list;
  a.num_devices = 1;
  a.num_args = in.size();
  a.output_lists = &out_list;
  a.execute_device = at.on;
  // Outputs carry their own readiness and errors, which is what makes
  // dispatch asynchronous; the completion event is only for synchronize().
  PJRT_Event* complete = nullptr;
  if (done) a.device_complete_events = &complete;
  api_->check(api_->raw()->PJRT_LoadedExecutable_Execute(&a), "executing a program");
  if (done) *done = std::make_unique<Event>(api_, complete);
  std::vector<BufferPtr> result;
  result.reserve(outs.size());
  for (size_t i = 0; i < outs.size(); ++i)
    result.push_back(std::make_shared<Buffer>(api_, outs[i], out_bytes_[i], at.device));
  return result;
}

std::vector<std::vector<BufferPtr>> Executable::execute_replicas(const std::vector<std::vector<PJRT_Buffer*>>& inputs,
                                                                 const std::vector<int>& devices,
                                                                 std::vector<std::unique_ptr<Event>>* done) const {
  const size_t n = inputs.size();
  auto opts = PJRT_ARGS(PJRT_ExecuteOptions);
  std::vector<PJRT_Buffer* const*> arg_lists(n);
  std::vector<std::vector<PJRT_Buffer*>> outs(n, std::vector<PJRT_Buffer*>(num_outputs_, nullptr));
  std::vector<PJRT_Buffer**> out_lists(n);
  for (size_t i = 0; i < n; ++i) {
    arg_lists[i] = inputs[i].data();
    out_lists[i] = outs[i].data();
  }
  std::vector<PJRT_Event*> events(n, nullptr);
  auto a = PJRT_ARGS(PJRT_LoadedExecutable_Execute_Args);
  a.executable = exe_;
  a.options = &opts;
  a.argument_lists = arg_lists.data();
  a.num_devices = n;
  a.num_args = n ? inputs[0].size() : 0;
  a.output_lists = out_lists.data();
  a.device_complete_events = events.data();
  api_->check(api_->raw()->PJRT_LoadedExecutable_Execute(&a), "executing a replicated program");
  std::vector<std::vector<BufferPtr>> result(n);
  for (size_t i = 0; i < n; ++i) {
    done->push_back(std::make_unique<Event>(api_, events[i]));
    for (size_t k = 0; k < num_outputs_; ++k)
      result[i].push_back(std::make_shared<Buffer>(api_, outs[i][k], out_bytes_[k], devices.at(i)));
  }
  return result;
}

std::string Executable::serialize() const {
  auto a = PJRT_ARGS(PJRT_Executable_Serialize_Args);
  a.executable = unloaded_;
  api_->check(api_->raw()->PJRT_Executable_Serialize(&a), "serializing an executable");
  std::string bytes(a.serialized_bytes, a.serialized_bytes_size);
  if (a.serialized_executable_deleter) a.serialized_executable_deleter(a.serialized_executable);
  return bytes;
}

}  // namespace pjrt
