// The Python extension module torch_pjrt._C: runtime configuration and
// introspection. Device registration happens in static initializers when
// this module is loaded: device.cc's hooks, allocator and guard, and each op
// family's TORCH_LIBRARY_IMPL block (csrc/ops/<family>/aten*.cc).
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/pybind.h>

#include <cstdlib>

#include "aten/compiled.h"
#include "aten/device.h"
#include "aten/distributed.h"
#include "aten/errors.h"
#include "aten/fallback.h"
#include "aten/tensor.h"
#include "engine/env.h"
#include "engine/graph.h"
#include "engine/launch.h"
#include "engine/launch_floor.h"
#include "engine/mode.h"
#include "engine/runtime.h"
#include "ops/foreign/python.h"

namespace py = pybind11;

namespace {

py::dict runtime_info() {
  auto& rt = tpu::guarded("starting the PJRT runtime", [] { return &engine::Runtime::get(); })->client();
  py::dict d;
  const auto& cfg = engine::Runtime::get().config();
  d["platform"] = rt.platform();
  d["platform_version"] = rt.platform_version();
  d["plugin"] = cfg.plugin_name;
  d["plugin_path"] = cfg.plugin_path;
  d["pjrt_api_version"] = std::to_string(rt.api().major()) + "." + std::to_string(rt.api().minor());
  d["device_count"] = rt.device_count();
  // The compiler flags the plugin reads, the runtime's defaults included.
  const char* flags = std::getenv("XLA_FLAGS");
  d["xla_flags"] = flags ? flags : "";
  if (cfg.num_nodes > 0) {  // a node of a multi-process client
    d["node_id"] = cfg.node_id;
    d["num_nodes"] = cfg.num_nodes;
  }
  for (const auto& [k, v] : rt.api().attributes()) d[py::str(k)] = v;
  // Native functions programs may call (XLA:CPU), with their call counts.
  py::dict native;
  if (engine::Runtime::get().native_functions())
    for (const engine::NativeFunction& f : engine::native_function_list()) native[py::str(f.name)] = f.calls();
  d["native_functions"] = native;
  // The threads XLA:CPU's pool runs products on (NPROC, else the cores).
  if (rt.kind() == pjrt::Platform::Cpu) d["xla_cpu_threads"] = pjrt::ffi::host_pool_threads();
  // What this platform does differently (engine/platform.h), for the Python
  // layer's own choices (torch_pjrt._platform): the override's, if set.
  const engine::PlatformPolicy& p = tpu::platform();
  py::dict policy;
  policy["platform"] = pjrt::platform_label(p.platform);
  policy["f64"] = p.f64;
  policy["native_bf16"] = p.native_bf16;
  policy["host_memory"] = p.host_memory;
  policy["host_functions"] = p.host_functions;
  policy["weight_copies"] = p.weight_copies;
  d["policy"] = policy;
  return d;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "torch_pjrt native core";
  m.def("_configure",
        [](const std::string& path, const std::string& name, const std::string& hint, int64_t cpu_devices) {
          engine::Config c;
          c.plugin_path = path;
          c.plugin_name = name;
          c.missing_hint = hint;
          c.cpu_device_count = cpu_devices;
          c.api = engine::open_plugin(c);
          engine::Runtime::configure(c);
          // What the loaded plugin says of itself, before any client exists
          // (python -m torch_pjrt info shows it when the client fails).
          py::dict d;
          d["pjrt_api_version"] = std::to_string(c.api->major()) + "." + std::to_string(c.api->minor());
          for (const auto& [k, v] : c.api->attributes()) d[py::str(k)] = v;
          return d;
        });
  m.def("_runtime_info", &runtime_info);
  m.def("_initialized", &engine::Runtime::initialized);
  m.def("_in_bad_fork", &pjrt::in_forked_child);
  m.def("_launch_floor", [](int64_t elements, int iters) {
    TORCH_CHECK(elements > 0 && iters > 0, "_launch_floor: elements and iters must be positive");
    engine::LaunchFloor f =
        tpu::guarded("measuring the launch floor", [&] { return engine::launch_floor(elements, iters); });
    py::dict d;
    d["launch_us"] = f.launch_us;
    d["launch_event_us"] = f.launch_event_us;
    return d;
  });
  m.def("_environment", [] {
    py::list vars;
    for (const auto& v : engine::env::all()) vars.append(py::make_tuple(v.name, v.fallback, v.doc));
    return vars;
  });
  m.def("_init_distributed", [](py::module_ self) { tpu::init_distributed(self); });
  m.def("_cache_stats", [] {
    const bool on = engine::Runtime::initialized();
    engine::CacheStats s = on ? engine::Runtime::get().cache_stats() : engine::CacheStats{};
    return py::dict(py::arg("hits") = s.hits, py::arg("disk_hits") = s.disk_hits, py::arg("misses") = s.misses,
                    py::arg("light_compiles") = s.light_compiles, py::arg("quick_compiles") = s.quick_compiles,
                    py::arg("compile_seconds") = s.compile_seconds,
                    py::arg("light_compile_seconds") = s.light_compile_seconds,
                    py::arg("quick_compile_seconds") = s.quick_compile_seconds, py::arg("entries") = s.entries,
                    py::arg("evictions") = s.evictions, py::arg("corrupt_entries") = s.corrupt_entries,
                    py::arg("size_class_compiles") = s.class_compiles,
                    py::arg("size_class_compile_seconds") = s.class_compile_seconds,
                    py::arg("dir") = on ? engine::Runtime::get().cache_dir() : std::string());
  });
  m.def("_reset_cache_stats", [] {
    if (engine::Runtime::initialized()) engine::Runtime::get().reset_cache_stats();
  });
  m.def("_fallback_stats", &tpu::fallback_counts);
  m.def("_reset_fallback_stats", &tpu::reset_fallback_counts);
  m.def("_device_count", &tpu::device_count);
  m.def("_is_available", &tpu::is_available);
  m.def("_current_device", [] { return static_cast<int>(tpu::current_device()); });
  m.def("_synchronize", [] {
    py::gil_scoped_release nogil;
    tpu::guarded("synchronizing", [] { engine::synchronize(); });
  });
  m.def("_settle", [] {
    py::gil_scoped_release nogil;
    if (engine::Runtime::initialized()) tpu::guarded("settling the device", [] { engine::settle(); });
  });
  // Per device index; -1: every device together.
  m.def("_memory_allocated", [](int device) { return pjrt::live_bytes(device); }, py::arg("device") = -1);
  m.def("_max_memory_allocated", [](int device) { return pjrt::peak_bytes(device); }, py::arg("device") = -1);
  m.def("_donated_buffers", [] { return engine::donated_buffers(); });
  m.def("_reset_peak_memory_stats", [](int device) { pjrt::reset_peak_bytes(device); }, py::arg("device") = -1);
  m.def("_mem_get_info", [](int device) { return tpu::memory_info(static_cast<c10::DeviceIndex>(device)); });
  // What the plugin itself reports for a device (-1: not reported).
  m.def("_device_memory_stats", [](int device) {
    auto& c = tpu::guarded("starting the PJRT runtime", [] { return &engine::Runtime::get(); })->client();
    if (device < 0 || device >= static_cast<int>(c.device_count()))
      throw py::index_error("invalid tpu device index " + std::to_string(device) + " (" +
                            std::to_string(c.device_count()) + " device(s) available)");
    pjrt::MemoryStats s = c.memory_stats(device);
    py::dict d;
    d["bytes_in_use"] = s.bytes_in_use;
    d["peak_bytes_in_use"] = s.peak_bytes_in_use;
    d["bytes_limit"] = s.bytes_limit;
    return d;
  });
  m.def("_default_generator", [](int i) {
    const at::Generator& g = at::detail::getPrivateUse1Hooks().getDefaultGenerator(static_cast<c10::DeviceIndex>(i));
    return py::reinterpret_steal<py::object>(THPGenerator_initDefaultGenerator(g));
  });
  // What a copy derived from a tpu tensor was made from (tensor.h): the
  // compiled graphs' weight copies are current while it matches the weight,
  // by the rule dense_copy keeps eager copies by.
  py::class_<tpu::ContentView>(m, "_ContentView")
      .def(py::init([](const at::Tensor& t) {
        TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "_ContentView: expected a tpu tensor");
        return tpu::ContentView(t);
      }))
      .def("matches", [](const tpu::ContentView& c, const at::Tensor& t) {
        return t.device().type() == c10::DeviceType::PrivateUse1 && c.matches(t);
      });
  m.def("_set_eager_mode", [](const std::string& name) { engine::set_mode(engine::parse_mode(name)); });
  m.def("_eager_mode", [] { return std::string(engine::mode_name(engine::mode())); });
  m.def("_set_thread_eager_mode", [](const std::string& name) {
    if (name.empty())
      engine::set_thread_mode(false, engine::Mode::Strict);
    else
      engine::set_thread_mode(true, engine::parse_mode(name));
  });
  m.def("_thread_eager_mode", [] {
    engine::Mode md;
    return engine::thread_mode(&md) ? std::string(engine::mode_name(md)) : std::string();
  });
  m.def("_flush", [] { tpu::guarded("running fused ops", [] { engine::flush(); }); });
  m.def("_fused_stats", [] {
    auto s = engine::fused_stats();
    return py::dict(py::arg("flushes") = s.flushes, py::arg("pending_nodes") = s.pending_nodes,
                    py::arg("max_nodes") = s.max_nodes);
  });
  m.def("_set_fused_max_nodes", &engine::set_fused_max_nodes);
  m.def("_set_smallest_size_class", &tpu::set_smallest_size_class);
  m.def("_size_class", &tpu::size_class, py::arg("len"), py::arg("row_bytes") = 0);
  m.def("_mode_counts", [] {
    auto c = engine::mode_counts();
    py::dict d;
    for (auto m : {engine::Mode::Debug, engine::Mode::Strict, engine::Mode::Fused})
      d[engine::mode_name(m)] = c.ops[static_cast<int>(m)];
    return d;
  });
  // Test hook: apply another platform's dtype rules (e.g. "tpu": no float64); "" restores.
  m.def("_set_platform_override", &tpu::set_platform_override);
  m.def("_f64_supported", &tpu::f64_supported);
  tpu::bind_compiled(m);
  tpu::bind_foreign(m);
}
