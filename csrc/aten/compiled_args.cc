// The arguments of a compiled graph: see compiled_args.h.
#include "aten/compiled_args.h"

#include <torch/csrc/autograd/python_variable.h>

#include <complex>
#include <tuple>

#include "aten/device.h"
#include "aten/tensor.h"
#include "engine/reads.h"

namespace py = pybind11;

namespace tpu::compiled {

namespace {

// A tpu tensor's device, dtype, sizes and strides.
void add_geometry(engine::Key& k, const at::Tensor& t) {
  k.add(std::make_tuple(static_cast<int64_t>(t.device().index()), c10::toString(t.scalar_type()), t.sizes().vec(),
                        t.strides().vec()));
}

}  // namespace

bool is_tpu(const at::Tensor& t) { return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1; }

engine::Key signature(const pybind11::list& args, const std::vector<char>& compact) {
  engine::Key sig;
  sig.reserve(args.size() * 24);
  std::vector<const c10::StorageImpl*> seen;
  size_t i = 0;
  for (const py::handle& h : args) {
    PyObject* o = h.ptr();
    if (compact[i++]) {
      // A view passed as the stretch of storage it spans: where that
      // stretch lies (a scheduler's timestep t[i] at each step) stays out.
      sig.mark('V');
      add_geometry(sig, THPVariable_Unpack(o));
      sig.mark(';');
      continue;
    }
    if (THPVariable_Check(o)) {
      const at::Tensor& t = THPVariable_Unpack(o);
      if (!is_tpu(t)) {
        sig.mark('C').add(c10::toString(t.scalar_type())).add(t.sizes().vec());
        // A complex host scalar is baked into the program; others are parameters.
        if (t.dim() == 0 && t.device().is_cpu() && t.is_complex()) {
          auto v = t.item<c10::complex<double>>();
          sig.add(std::complex<double>(v.real(), v.imag()));
        }
        sig.mark(';');
        continue;
      }
      sig.mark('T');
      add_geometry(sig, t);
      sig.add(t.storage_offset()).mark(',');
      const c10::StorageImpl* st = t.storage().unsafeGetStorageImpl();
      int group = -1;
      for (size_t i = 0; i < seen.size(); ++i)
        if (seen[i] == st) group = static_cast<int>(i);
      if (group >= 0) {
        sig.mark('a').add(group);
      } else {
        seen.push_back(st);
        StorageState& s = state_of(t);
        // A compiled graph reads its storages' raw values: dense ones.
        unpad_storage(s);
        sig.add(static_cast<int64_t>(s.nbytes)).mark(',');
        if (s.value())
          sig.add(s.value().type());
        else
          sig.mark('E');
      }
      sig.mark(';');
    } else if (h.is_none()) {
      sig.mark('N').mark(';');
    } else if (PyBool_Check(o)) {
      sig.mark('B').add(o == Py_True).mark(';');
    } else if (PyLong_Check(o)) {
      sig.mark('I').add(static_cast<int64_t>(PyLong_AsLongLong(o))).mark(';');
    } else if (PyFloat_Check(o)) {
      sig.mark('F').add(PyFloat_AsDouble(o)).mark(';');
    } else {
      sig.mark('O').add(py::str(py::repr(h)).cast<std::string>()).mark(';');
    }
  }
  return sig;
}

bool strides_positive(const at::Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.stride(d) < 0) return false;
  return true;
}

int64_t span_of(const at::Tensor& t) {
  int64_t span = 1;
  for (int64_t d = 0; d < t.dim(); ++d) span += (t.size(d) - 1) * t.stride(d);
  return span;
}

bool spans_storage(const at::Tensor& t) {
  return t.storage_offset() == 0 && static_cast<size_t>(span_of(t)) * t.element_size() == state_of(t).nbytes;
}

pjrt::BufferPtr compact_value(const at::Tensor& t) {
  at::Tensor stretch = t.as_strided({span_of(t)}, {1}, t.storage_offset());
  return engine::buffer(read(stretch));
}

bool is_host_scalar(const at::Tensor& t) { return t.dim() == 0 && t.device().is_cpu() && !t.is_complex(); }

shlo::Type host_scalar_type(const at::Tensor& t) {
  shlo::DType d = to_shlo(t.scalar_type());
  if (d == shlo::DType::F64) d = wide_float();
  return shlo::Type{d, {}};
}

pjrt::BufferPtr host_scalar_buffer(const at::Tensor& t, const shlo::Type& type) {
  engine::Ref r = type.dtype == shlo::DType::S64 ? engine::scalar_i64(t.item<int64_t>())
                  : t.is_floating_point()        ? engine::scalar(type.dtype, t.item<double>())
                  : t.scalar_type() == at::kBool ? engine::scalar(type.dtype, t.item<bool>() ? 1 : 0)
                                                 : engine::scalar(type.dtype, static_cast<double>(t.item<int64_t>()));
  return r.node->materialized() ? r.node->buffers[r.index] : engine::buffer(r);
}

at::Tensor tensor_on(const c10::Storage& storage, at::ScalarType dtype, at::IntArrayRef sizes, at::IntArrayRef strides,
                     int64_t offset) {
  auto t = at::detail::make_tensor<c10::TensorImpl>(
      c10::Storage(storage), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), c10::scalarTypeToTypeMeta(dtype));
  t.unsafeGetTensorImpl()->set_sizes_and_strides(sizes, strides, offset);
  return t;
}

c10::Storage new_storage(size_t nbytes, const c10::Device& device) {
  c10::DeviceGuard g(device);
  return c10::Storage(c10::Storage::use_byte_size_t(), nbytes, allocator(), /*resizable=*/true);
}

}  // namespace tpu::compiled
