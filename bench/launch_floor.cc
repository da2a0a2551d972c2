// The floor under every strict-mode op: launching one cached program
// through our PJRT runtime, straight from C++ (no Python, no dispatcher,
// no executor thread), beside the engine's full record + materialize path.
//
//   cmake --build build/release --target launch_floor
//   TORCH_PJRT_PLUGIN_PATH=<plugin .so> build/release/launch_floor [elements] [--json FILE]
//
// Prints microseconds per op (median of 7 rounds of 20000) and optionally
// writes them as JSON. No baseline of PyTorch here: compare with
// `python -m torch_pjrt bench` (add_1k) run on the same machine.
#include "engine/launch_floor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "engine/graph.h"
#include "engine/runtime.h"
#include "pjrt/runtime.h"

namespace {

double median_us(const std::function<void()>& op, const std::function<void()>& sync) {
  const int kInner = 20000;
  std::vector<double> us;
  for (int round = 0; round < 8; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kInner; ++i) op();
    sync();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (round > 0) us.push_back(s / kInner * 1e6);  // round 0 warms up
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const char* plugin = std::getenv("TORCH_PJRT_PLUGIN_PATH");
  if (!plugin) {
    std::fprintf(stderr, "set TORCH_PJRT_PLUGIN_PATH to a PJRT plugin (.so)\n");
    return 2;
  }
  int64_t n = argc > 1 && argv[1][0] != '-' ? std::atoll(argv[1]) : 1024;
  const char* json = nullptr;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--json") == 0) json = argv[i + 1];

  engine::Config cfg;
  cfg.plugin_path = plugin;
  cfg.plugin_name = "path";
  engine::Runtime::configure(cfg);
  shlo::Type t{shlo::DType::F32, {n}};
  double raw, raw_event;  // the launch floor without and with the completion event
  {
    std::vector<double> launch, event;
    for (int round = 0; round < 8; ++round) {
      engine::LaunchFloor f = engine::launch_floor(n, 20000);
      if (round == 0) continue;  // warms up
      launch.push_back(f.launch_us);
      event.push_back(f.launch_event_us);
    }
    std::sort(launch.begin(), launch.end());
    std::sort(event.begin(), event.end());
    raw = launch[launch.size() / 2];
    raw_event = event[event.size() / 2];
  }
  std::vector<float> host(n, 1.0f);
  engine::Ref ra = engine::from_host(host.data(), t), rb = engine::from_host(host.data(), t);
  auto lower = [](shlo::Builder& bld, const std::vector<shlo::Value>& in) {
    return std::vector<shlo::Value>{bld.add(in[0], in[1])};
  };
  double eng = median_us([&] { engine::materialize({engine::record1("add", {ra, rb}, t, lower)}); },
                         [] { engine::synchronize(); });

  std::printf("add of %lld f32 elements, us per op (median)\n", static_cast<long long>(n));
  std::printf("  PJRT launch                         %7.2f\n", raw);
  std::printf("  PJRT launch + completion event      %7.2f\n", raw_event);
  std::printf("  engine record + materialize         %7.2f\n", eng);
  if (json) {
    FILE* f = std::fopen(json, "w");
    if (!f) return 1;
    std::fprintf(f,
                 "{\"elements\": %lld, \"pjrt_launch_us\": %.3f, \"pjrt_launch_event_us\": %.3f, "
                 "\"engine_us\": %.3f}\n",
                 static_cast<long long>(n), raw, raw_event, eng);
    std::fclose(f);
  }
  return 0;
}
