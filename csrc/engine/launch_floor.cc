#include "engine/launch_floor.h"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/runtime.h"
#include "pjrt/runtime.h"
#include "shlo/builder.h"

namespace engine {

namespace {

struct Case {
  pjrt::ExecutablePtr exe;
  pjrt::BufferPtr a, b;
};

Case& case_for(int64_t n) {
  static std::mutex mu;
  static std::map<int64_t, std::unique_ptr<Case>> cases;
  std::lock_guard<std::mutex> l(mu);
  std::unique_ptr<Case>& c = cases[n];
  if (c) return *c;
  pjrt::Client& client = Runtime::get().client();
  std::string ty = shlo::Type{shlo::DType::F32, {n}}.str();
  std::string text = "module @floor {\n func.func public @main(%a: " + ty + ", %b: " + ty + ") -> " + ty +
                     " {\n  %0 = stablehlo.add %a, %b : " + ty + "\n  return %0 : " + ty + "\n }\n}\n";
  c = std::make_unique<Case>();
  c->exe = client.compile(text);
  std::vector<float> host(n, 1.0f);
  c->a = client.from_host(host.data(), PJRT_Buffer_Type_F32, {n});
  c->b = client.from_host(host.data(), PJRT_Buffer_Type_F32, {n});
  return *c;
}

}  // namespace

LaunchFloor launch_floor(int64_t elements, int iters) {
  Case& c = case_for(elements);
  std::vector<PJRT_Buffer*> args{c.a->get(), c.b->get()};
  auto per_op_us = [&](bool with_event) {
    std::vector<pjrt::BufferPtr> last;
    std::unique_ptr<pjrt::Event> done;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) last = c.exe->execute(args, {}, false, with_event ? &done : nullptr);
    last[0]->await_ready("the launch floor");
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
  };
  LaunchFloor f;
  f.launch_us = per_op_us(false);
  f.launch_event_us = per_op_us(true);
  return f;
}

}  // namespace engine
