// torch.compile's tpu backend, native side: a captured ATen graph becomes
// one program of the engine's cache. The graph is run once per input
// signature through the ordinary kernels on placeholder storages (values
// with types and no data), so it lowers exactly as eager ops do; the
// storages it wrote are the program's outputs. Each later call with the
// same signature only looks the program up and launches it on the caller's
// buffers: no dispatch, recording, planning or key building.
#include "aten/compiled.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>

#include <mutex>
#include <set>
#include <unordered_map>

#include "aten/compiled_args.h"
#include "aten/errors.h"
#include "aten/tensor.h"
#include "engine/checks.h"
#include "engine/mode.h"
#include "engine/program.h"
#include "engine/reads.h"
#include "engine/runtime.h"
#include "engine/timeline.h"

namespace py = pybind11;

namespace tpu {

namespace {

// Where a value the program needs (a parameter) or makes (a stored value)
// comes from on each call.
struct Source {
  enum Kind { Arg, Out, Const, Fresh, Host, Empty } kind = Empty;
  int index = 0;      // argument (Arg, Host), program output (Out) or fresh parameter (Fresh)
  engine::Ref value;  // Const: a buffer captured while tracing
};

// An output tensor: a view of a new storage or of an argument's storage.
struct OutView {
  enum Kind { Tensor, Object } kind = Tensor;
  bool alias = false;  // a view of argument `storage`'s storage
  int storage = 0;     // argument index (alias) or index into new_storages
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  at::ScalarType dtype = at::kFloat;
  c10::Device device{c10::DeviceType::PrivateUse1, 0};
  py::object object;  // Object: returned as is (ints, None)
};

struct NewStorage {
  size_t nbytes = 0;
  Source value;
  shlo::Type type;
};

struct Mutation {
  int arg;  // the first argument with this storage
  Source value;
  shlo::Type type;
};

struct Entry {
  std::shared_ptr<engine::Program> prog;
  std::vector<Source> params;  // one per program parameter
  std::vector<std::function<pjrt::BufferPtr()>> fresh;
  std::vector<Mutation> mutations;
  std::vector<NewStorage> new_storages;
  std::vector<OutView> outs;
  std::vector<std::pair<int, engine::Verify>> checks;  // program output, verify
  std::vector<shlo::Type> check_types;
  std::vector<char> compact;  // per argument: passed by value (see compact_flags)
};

using compiled::compact_value;
using compiled::host_scalar_buffer;
using compiled::host_scalar_type;
using compiled::is_host_scalar;
using compiled::is_tpu;
using compiled::new_storage;
using compiled::signature;
using compiled::span_of;
using compiled::spans_storage;
using compiled::strides_positive;
using compiled::tensor_on;

class CompiledGraph {
 public:
  explicit CompiledGraph(std::string name) : name_(std::move(name)) {}

  // The outputs, or None when no program fits these arguments yet.
  py::object call(const py::list& args) {
    guarded("running a compiled graph", [] { engine::check_not_forked(); });
    std::string sig = signature(args, compact_flags(args)).str();
    std::shared_ptr<Entry> e;
    {
      std::lock_guard<std::mutex> g(mu_);
      auto it = entries_.find(sig);
      if (it == entries_.end()) return py::none();
      e = it->second;
    }
    return run(*e, args);
  }

  // Starts tracing on this thread: returns the arguments with every tpu
  // tensor replaced by one of the same geometry on a placeholder storage.
  py::list begin(const py::list& args) {
    TORCH_CHECK(!engine::tracing(), "tpu: a compiled graph is already being traced on this thread");
    // Settle queued work first, so captured constants are computed values.
    guarded("running queued ops", [] { engine::flush(); });
    trace_ = std::make_unique<Trace>();
    trace_->compact = compact_flags(args);
    trace_->sig = signature(args, trace_->compact).str();
    py::list out;
    std::unordered_map<const c10::StorageImpl*, int> group;
    int i = 0;
    for (const py::handle& h : args) {
      PyObject* o = h.ptr();
      if (!THPVariable_Check(o) || !is_tpu(THPVariable_Unpack(o))) {
        if (THPVariable_Check(o) && is_host_scalar(THPVariable_Unpack(o))) {
          const at::Tensor& t = THPVariable_Unpack(o);
          engine::Ref r = engine::placeholder(host_scalar_type(t));
          trace_->engine.host_scalars.emplace(t.unsafeGetTensorImpl(), r);
          trace_->hosts.emplace_back(i, r);
        }
        out.append(h);
        ++i;
        continue;
      }
      const at::Tensor& t = THPVariable_Unpack(o);
      if (trace_->compact[i]) {
        // Its own placeholder storage holding just the stretch it spans:
        // the same strides (views of it behave alike), offset 0.
        const int64_t n = span_of(t);
        c10::Storage ph = new_storage(static_cast<size_t>(n) * t.element_size(), t.device());
        engine::Ref v = engine::placeholder(shlo::Type{to_shlo(t.scalar_type()), {n}});
        static_cast<StorageState*>(ph.data_ptr().get_context())->value() = v;
        trace_->storages.push_back(Placeholder{ph, i, v, true});
        out.append(py::reinterpret_steal<py::object>(
            THPVariable_Wrap(tensor_on(ph, t.scalar_type(), t.sizes(), t.strides(), 0))));
        ++i;
        continue;
      }
      const c10::StorageImpl* st = t.storage().unsafeGetStorageImpl();
      auto it = group.find(st);
      int g;
      if (it != group.end()) {
        g = it->second;
      } else {
        g = static_cast<int>(trace_->storages.size());
        group.emplace(st, g);
        StorageState& s = state_of(t);
        c10::Storage ph = new_storage(s.nbytes, t.device());
        engine::Ref v = s.value() ? engine::placeholder(s.value().type()) : engine::Ref{};
        static_cast<StorageState*>(ph.data_ptr().get_context())->value() = v;
        trace_->storages.push_back(Placeholder{ph, i, v, false});
      }
      out.append(py::reinterpret_steal<py::object>(THPVariable_Wrap(
          tensor_on(trace_->storages[g].storage, t.scalar_type(), t.sizes(), t.strides(), t.storage_offset()))));
      ++i;
    }
    engine::set_tracing(&trace_->engine);
    return out;
  }

  void abort() {
    engine::set_tracing(nullptr);
    trace_.reset();
  }

  // Ends the trace: `outs` is what the graph returned on the placeholders.
  // Compiles the program and runs it on the real arguments.
  py::object finish(const py::list& args, const py::list& outs) {
    TORCH_CHECK(trace_, "tpu: finish() without begin()");
    engine::set_tracing(nullptr);
    std::unique_ptr<Trace> tr = std::move(trace_);
    // A compact argument must only be read: one the graph writes, returns
    // (or a view of it) or stores as another tensor's value needs its real
    // storage. Such an argument is passed whole from now on, and the
    // caller traces again (None).
    {
      std::vector<int> whole;
      std::unordered_map<const c10::StorageImpl*, int> compact_storage;
      std::unordered_map<const engine::Node*, int> compact_value;
      for (const Placeholder& p : tr->storages) {
        if (!p.compact) continue;
        compact_storage.emplace(p.storage.unsafeGetStorageImpl(), p.arg);
        compact_value.emplace(p.value.node.get(), p.arg);
      }
      for (const Placeholder& p : tr->storages) {
        const engine::Ref& now = static_cast<StorageState*>(p.storage.data_ptr().get_context())->value();
        if (p.compact && now.node != p.value.node) whole.push_back(p.arg);
        auto iv = compact_value.find(now.node.get());
        if (!p.compact && iv != compact_value.end()) whole.push_back(iv->second);
      }
      if (!compact_storage.empty()) {
        for (const py::handle& h : outs) {
          if (!THPVariable_Check(h.ptr())) continue;
          const at::Tensor& t = THPVariable_Unpack(h.ptr());
          if (!is_tpu(t)) continue;
          auto it = compact_storage.find(t.storage().unsafeGetStorageImpl());
          if (it != compact_storage.end()) whole.push_back(it->second);
          auto iv = compact_value.find(state_of(t).value().node.get());
          if (iv != compact_value.end()) whole.push_back(iv->second);
        }
      }
      if (!whole.empty()) {
        std::lock_guard<std::mutex> g(mu_);
        no_compact_.insert(whole.begin(), whole.end());
        return py::none();
      }
    }
    auto e = std::make_shared<Entry>();
    e->compact = tr->compact;
    std::vector<engine::Ref> targets;
    std::vector<engine::Ref> donate;
    // Where each placeholder comes from.
    std::unordered_map<const engine::Node*, int> ph_arg, fresh_of;
    for (const Placeholder& p : tr->storages)
      if (p.value) ph_arg.emplace(p.value.node.get(), p.arg);
    std::unordered_map<const engine::Node*, int> host_of;
    for (const auto& [arg, r] : tr->hosts) host_of.emplace(r.node.get(), arg);
    for (size_t k = 0; k < tr->engine.fresh.size(); ++k) {
      fresh_of.emplace(tr->engine.fresh[k].first.node.get(), static_cast<int>(k));
      e->fresh.push_back(tr->engine.fresh[k].second);
    }
    std::vector<const engine::Node*> returned_placeholders;
    // A stored value: an argument's placeholder, a captured constant, or
    // something the program computes (then a target).
    auto source_of = [&](const engine::Ref& v) {
      Source s;
      if (!v) return s;
      if (engine::is_placeholder(v)) {
        auto it = ph_arg.find(v.node.get());
        TORCH_CHECK(it != ph_arg.end(), "tpu: a compiled graph stored a random state or a host scalar");
        s.kind = Source::Arg;
        s.index = it->second;
        returned_placeholders.push_back(v.node.get());
      } else if (v.node->materialized()) {
        s.kind = Source::Const;
        s.value = v;
      } else {
        s.kind = Source::Out;
        s.index = static_cast<int>(targets.size());
        targets.push_back(v);
      }
      return s;
    };
    for (const Placeholder& p : tr->storages) {
      engine::Ref now = static_cast<StorageState*>(p.storage.data_ptr().get_context())->value();
      if (now.node == p.value.node && now.index == p.value.index) continue;
      Source s = source_of(now);
      e->mutations.push_back(Mutation{p.arg, s, now.type()});
      if (s.kind == Source::Out && p.value) donate.push_back(p.value);
    }
    std::unordered_map<const c10::StorageImpl*, int> out_storage;
    for (const py::handle& h : outs) {
      OutView ov;
      PyObject* o = h.ptr();
      if (!THPVariable_Check(o)) {
        TORCH_CHECK(h.is_none() || PyLong_Check(o) || PyFloat_Check(o) || PyBool_Check(o),
                    "tpu: a compiled graph returned ", py::str(py::repr(h)).cast<std::string>());
        ov.kind = OutView::Object;
        ov.object = py::reinterpret_borrow<py::object>(h);
        e->outs.push_back(std::move(ov));
        continue;
      }
      const at::Tensor& t = THPVariable_Unpack(o);
      TORCH_CHECK(is_tpu(t), "tpu: a compiled graph returned a tensor on ", t.device(),
                  "; only tpu tensors can come out of a tpu program");
      ov.sizes.assign(t.sizes().begin(), t.sizes().end());
      ov.strides.assign(t.strides().begin(), t.strides().end());
      ov.offset = t.storage_offset();
      ov.dtype = t.scalar_type();
      ov.device = t.device();
      const c10::StorageImpl* st = t.storage().unsafeGetStorageImpl();
      int ph = -1;
      for (size_t k = 0; k < tr->storages.size(); ++k)
        if (tr->storages[k].storage.unsafeGetStorageImpl() == st) ph = static_cast<int>(k);
      if (ph >= 0) {
        ov.alias = true;
        ov.storage = tr->storages[ph].arg;
      } else {
        auto it = out_storage.find(st);
        if (it == out_storage.end()) {
          StorageState& s = state_of(t);
          NewStorage ns;
          ns.nbytes = s.nbytes;
          ns.value = source_of(s.value());
          if (s.value()) ns.type = s.value().type();
          it = out_storage.emplace(st, static_cast<int>(e->new_storages.size())).first;
          e->new_storages.push_back(std::move(ns));
        }
        ov.storage = it->second;
      }
      e->outs.push_back(std::move(ov));
    }
    for (auto& [v, verify] : tr->engine.checks) {
      Source s = source_of(v);
      TORCH_CHECK(s.kind == Source::Out, "tpu: internal: a compiled graph's check is not computed by it");
      e->checks.emplace_back(s.index, verify);
      e->check_types.push_back(v.type());
    }
    // A placeholder also handed back as a value keeps its buffer alive past
    // the call, so it cannot be consumed.
    std::vector<engine::Ref> kept;
    for (const engine::Ref& d : donate) {
      bool returned = false;
      for (const engine::Node* n : returned_placeholders) returned |= n == d.node.get();
      if (!returned) kept.push_back(d);
    }
    if (!targets.empty()) {
      e->prog = guarded("compiling a graph for torch.compile", [&] { return engine::compile_program(targets, kept); });
      // Outputs are numbered per target; the program returns every output
      // of each distinct target node, in its own order.
      auto remap = [&](Source& s) {
        if (s.kind == Source::Out) s.index = e->prog->target_out[s.index];
      };
      for (Mutation& m : e->mutations) remap(m.value);
      for (NewStorage& ns : e->new_storages) remap(ns.value);
      for (auto& c : e->checks) c.first = e->prog->target_out[c.first];
      for (const engine::Ref& p : e->prog->params) {
        Source s;
        if (engine::is_placeholder(p)) {
          auto a = ph_arg.find(p.node.get());
          auto hs = host_of.find(p.node.get());
          if (a != ph_arg.end()) {
            s.kind = Source::Arg;
            s.index = a->second;
          } else if (hs != host_of.end()) {
            s.kind = Source::Host;
            s.index = hs->second;
          } else {
            s.kind = Source::Fresh;
            s.index = fresh_of.at(p.node.get());
          }
        } else {
          s.kind = Source::Const;
          s.value = p;
        }
        e->params.push_back(s);
      }
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      entries_[tr->sig] = e;
      ++programs_;
    }
    return run(*e, args);
  }

  // Which arguments are passed by value: tpu views that are not their
  // whole storage, share it with no other argument, and have not been seen
  // written or returned by this graph. Their offset then stays out of the
  // program, so one program serves every position of the view.
  std::vector<char> compact_flags(const py::list& args) {
    std::vector<char> f(args.size(), 0);
    std::unordered_map<const c10::StorageImpl*, int> uses;
    for (const py::handle& h : args)
      if (THPVariable_Check(h.ptr()) && is_tpu(THPVariable_Unpack(h.ptr())))
        ++uses[THPVariable_Unpack(h.ptr()).storage().unsafeGetStorageImpl()];
    std::lock_guard<std::mutex> g(mu_);
    for (size_t i = 0; i < args.size(); ++i) {
      PyObject* o = args[i].ptr();
      if (!THPVariable_Check(o)) continue;
      const at::Tensor& t = THPVariable_Unpack(o);
      if (!is_tpu(t) || no_compact_.count(static_cast<int>(i))) continue;
      if (uses[t.storage().unsafeGetStorageImpl()] == 1 && t.numel() > 0 && strides_positive(t) && !spans_storage(t))
        f[i] = 1;
    }
    return f;
  }

  int64_t programs() const { return programs_; }
  std::string name() const { return name_; }

 private:
  struct Placeholder {
    c10::Storage storage;
    int arg;            // first argument with this storage
    engine::Ref value;  // its placeholder (empty: the storage was never written)
    bool compact;       // holds only the argument's view, passed by value
  };
  struct Trace {
    std::string sig;
    std::vector<char> compact;
    std::vector<Placeholder> storages;
    std::vector<std::pair<int, engine::Ref>> hosts;  // host scalar arguments
    engine::Trace engine;
  };

  py::object run(const Entry& e, const py::list& args) {
    std::vector<at::Tensor> ts(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      PyObject* o = args[i].ptr();
      if (THPVariable_Check(o)) ts[i] = THPVariable_Unpack(o);
    }
    std::vector<pjrt::BufferPtr> outs;
    if (e.prog) {
      std::vector<pjrt::BufferPtr> in(e.params.size());
      {
        py::gil_scoped_release nogil;
        guarded("running a compiled graph", [&] {
          for (size_t i = 0; i < e.params.size(); ++i) {
            const Source& s = e.params[i];
            if (s.kind == Source::Arg && e.compact[s.index])
              in[i] = compact_value(ts[s.index]);
            else if (s.kind == Source::Arg)
              in[i] = engine::buffer(state_of(ts[s.index]).value());
            else if (s.kind == Source::Fresh)
              in[i] = e.fresh[s.index]();
            else if (s.kind == Source::Host)
              in[i] = host_scalar_buffer(ts[s.index], e.prog->params[i].type());
            else
              in[i] = s.value.node->buffers[s.value.index];
          }
          // A consumed input must be held by nothing but its storage; else
          // the program gets a copy (the old value stays visible elsewhere).
          for (const auto& [param, out] : e.prog->aliases) {
            const engine::Ref& cur = state_of(ts[e.params[param].index]).value();
            if (cur.node.use_count() != 1 || in[param].use_count() != 2)
              in[param] = engine::copy_buffer(in[param], e.prog->params[param].type());
          }
          outs = engine::run_program(*e.prog, in);
          if (engine::mode() == engine::Mode::Debug) {
            engine::timeline::Scoped span(engine::timeline::Kind::Wait, "wait for the graph (debug mode)");
            for (const pjrt::BufferPtr& b : outs) b->await_ready("running a compiled graph");
          }
        });
      }
    }
    auto value_of = [&](const Source& s, const shlo::Type& type) -> engine::Ref {
      switch (s.kind) {
        case Source::Out:
          return engine::leaf(outs[s.index], type);
        case Source::Arg:
          return state_of(ts[s.index]).value();
        case Source::Const:
          return s.value;
        default:
          return engine::Ref{};
      }
    };
    // Argument values are read before any mutation lands, as the graph did.
    std::vector<engine::Ref> new_values;
    for (const NewStorage& ns : e.new_storages) new_values.push_back(value_of(ns.value, ns.type));
    std::vector<engine::Ref> mutated;
    for (const Mutation& m : e.mutations) mutated.push_back(value_of(m.value, m.type));
    for (size_t k = 0; k < e.mutations.size(); ++k) {
      const at::Tensor& t = ts[e.mutations[k].arg];
      state_of(t).value() = mutated[k];
      if (!t.is_inference()) t.unsafeGetTensorImpl()->bump_version();
    }
    for (size_t k = 0; k < e.checks.size(); ++k)
      guarded("checking a compiled graph", [&] {
        engine::defer_check(engine::leaf(outs[e.checks[k].first], e.check_types[k]), e.checks[k].second);
      });
    std::vector<c10::Storage> storages;
    py::list result;
    for (const OutView& ov : e.outs) {
      if (ov.kind == OutView::Object) {
        result.append(ov.object);
        continue;
      }
      c10::Storage st;
      if (ov.alias) {
        st = ts[ov.storage].storage();
      } else {
        if (storages.empty()) storages.resize(e.new_storages.size());
        if (!storages[ov.storage]) {
          storages[ov.storage] = new_storage(e.new_storages[ov.storage].nbytes, ov.device);
          static_cast<StorageState*>(storages[ov.storage].data_ptr().get_context())->value() = new_values[ov.storage];
        }
        st = storages[ov.storage];
      }
      result.append(py::reinterpret_steal<py::object>(
          THPVariable_Wrap(tensor_on(st, ov.dtype, ov.sizes, ov.strides, ov.offset))));
    }
    return result;
  }

  std::string name_;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> entries_;
  std::set<int> no_compact_;  // arguments this graph writes or returns
  std::unique_ptr<Trace> trace_;
  int64_t programs_ = 0;
};

}  // namespace

void bind_compiled(py::module& m) {
  py::class_<CompiledGraph>(m, "CompiledGraph")
      .def(py::init<std::string>())
      .def("call", &CompiledGraph::call)
      .def("begin", &CompiledGraph::begin)
      .def("finish", &CompiledGraph::finish)
      .def("abort", &CompiledGraph::abort)
      .def_property_readonly("programs", &CompiledGraph::programs)
      .def_property_readonly("name", &CompiledGraph::name);
}

}  // namespace tpu
