// The device in torch.profiler: a child profiler of kineto (the library
// behind torch.profiler) that turns the engine's device timeline into trace
// activities, the way a CUDA build turns CUPTI's records into them. With
// `activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]` a trace
// then holds, beside the host's ATen calls:
//   - one "kernel" per program executed (named by its ops, with the full op
//     list and input types as arguments), linked to the host op that caused
//     it, so key_averages() reports device time per op;
//   - "gpu_memcpy" transfers between host and device, with their bytes;
//   - "privateuse1_runtime" spans for compiles, loads from the disk cache and
//     host waits for the device.
// Registered when the module loads; it records only while a trace that asks
// for device activities runs. A torch built without kineto has no device
// activities to offer, and this file compiles to nothing.
#if __has_include(<kineto/libkineto.h>)
#include <kineto/GenericTraceActivity.h>
#include <kineto/IActivityProfiler.h>
#include <kineto/libkineto.h>
#include <kineto/output_base.h>
#include <unistd.h>

#include <memory>
#include <set>
#include <string>

#include "engine/graph.h"
#include "engine/mode.h"
#include "engine/runtime.h"
#include "engine/timeline.h"

namespace {

using engine::timeline::Kind;
using libkineto::ActivityType;

// The trace's rows on the device: programs, transfers, host-side runtime.
enum Row : int32_t { kPrograms = 0, kTransfers = 1, kRuntime = 2 };

ActivityType activity_type(Kind k) {
  switch (k) {
    case Kind::Execute:
      return ActivityType::CONCURRENT_KERNEL;
    case Kind::HostToDevice:
    case Kind::DeviceToHost:
      return ActivityType::GPU_MEMCPY;
    default:
      return ActivityType::PRIVATEUSE1_RUNTIME;
  }
}

Row row(Kind k) {
  switch (k) {
    case Kind::Execute:
      return kPrograms;
    case Kind::HostToDevice:
    case Kind::DeviceToHost:
      return kTransfers;
    default:
      return kRuntime;
  }
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Compile:
      return "compile";
    case Kind::Load:
      return "load";
    case Kind::Execute:
      return "execute";
    case Kind::HostToDevice:
      return "host_to_device";
    case Kind::DeviceToHost:
      return "device_to_host";
    case Kind::Wait:
      return "wait";
  }
  return "";
}

class Session : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    engine::timeline::start();
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    // Executions launched inside the trace belong to it: let them finish
    // (without raising: a failure is the user's to see at their next read).
    if (engine::Runtime::initialized()) engine::settle();
    spans_ = engine::timeline::stop();
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  std::vector<std::string> errors() override { return {}; }

  void processTrace(libkineto::ActivityLogger& logger) override { processTrace(logger, nullptr, 0, 0); }

  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linked, int64_t,
                    int64_t) override {
    int64_t lo = 0, hi = 0;
    for (const auto& s : spans_) {
      lo = lo ? std::min(lo, s.start_ns) : s.start_ns;
      hi = std::max(hi, s.end_ns);
    }
    buffer_.span = libkineto::TraceSpan(lo, hi, "tpu");
    const int32_t pid = static_cast<int32_t>(getpid());
    for (const auto& s : spans_) {
      buffer_.emplace_activity(buffer_.span, activity_type(s.kind), s.name);
      auto& a = libkineto::CpuTraceBuffer::toRef(buffer_.activities.back());
      a.startTime = s.start_ns;
      a.endTime = s.end_ns;
      a.device = s.device;
      a.resource = row(s.kind);
      a.threadId = pid;
      a.id = static_cast<int32_t>(s.correlation);
      a.addMetadataQuoted("kind", kind_name(s.kind));
      if (!s.detail.empty()) a.addMetadataQuoted("program", escaped(s.detail));
      // Quoted: the unquoted form formats through a library torch does not export.
      if (s.bytes) a.addMetadataQuoted("bytes", std::to_string(s.bytes));
      if (s.correlation) {
        a.flow.id = static_cast<uint32_t>(s.correlation);
        a.flow.type = libkineto::kLinkAsyncCpuGpu;
        a.flow.start = 0;
        if (linked) a.linked = linked(static_cast<int32_t>(s.correlation));
      }
      logger.handleActivity(a);
    }
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    std::string platform =
        engine::Runtime::initialized() ? engine::Runtime::get().client().platform() : std::string("pjrt");
    return std::make_unique<libkineto::DeviceInfo>(libkineto::DeviceInfo{0, 0, "tpu:0", "tpu:0 (" + platform + ")"});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::vector<libkineto::ResourceInfo> rows;
    rows.push_back({kPrograms, kPrograms, 0, "programs"});
    rows.push_back({kTransfers, kTransfers, 0, "transfers"});
    rows.push_back({kRuntime, kRuntime, 0, "compiles and waits"});
    return rows;
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    return std::make_unique<libkineto::CpuTraceBuffer>(std::move(buffer_));
  }

  void pushCorrelationId(uint64_t id) override { engine::timeline::push_correlation(id); }
  void popCorrelationId() override { engine::timeline::pop_correlation(); }

 private:
  // The trace is JSON: quotes and backslashes in a program's description
  // would end its string early.
  static std::string escaped(const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out;
  }

  std::vector<engine::timeline::Span> spans_;
  libkineto::CpuTraceBuffer buffer_;
};

class Profiler : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override {
    static const std::string n = "torch_pjrt";
    return n;
  }

  const std::set<ActivityType>& availableActivities() const override {
    static const std::set<ActivityType> types{ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY,
                                              ActivityType::PRIVATEUSE1_RUNTIME};
    return types;
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(const std::set<ActivityType>& types,
                                                                 const libkineto::Config&) override {
    // Device kernels are asked for only when a trace wants a device's
    // activities (PrivateUse1, or CUDA's); a host-only trace (CPU alone)
    // records nothing here, though it lists every runtime type.
    if (!types.count(ActivityType::CONCURRENT_KERNEL)) return nullptr;
    return std::make_unique<Session>();
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(int64_t, int64_t, const std::set<ActivityType>& types,
                                                                 const libkineto::Config& config) override {
    return configure(types, config);
  }
};

const bool registered = [] {
  libkineto::api().registerProfilerFactory([] { return std::make_unique<Profiler>(); });
  return true;
}();

}  // namespace

#endif  // kineto
