// Moving data between the host and the device, and between dtypes: copy_,
// _copy_from, _copy_from_and_resize, _local_scalar_dense, registered here.
#include "aten/copy.h"

#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>

#include "aten/errors.h"
#include "aten/library.h"
#include "aten/tensor.h"
#include "engine/graph.h"
#include "engine/program.h"
#include "engine/reads.h"
#include "ops/common/aten_common.h"
#include "ops/elementwise/elementwise.h"

namespace tpu {

at::Tensor to_cpu(const at::Tensor& src) {
  // The device value's dtype (complex64 for complex32), narrowed on the host.
  at::ScalarType held = to_torch(to_shlo(src.scalar_type()));
  at::Tensor out = at::empty(src.sizes(), src.options().device(at::kCPU).dtype(held));
  // A content padded to a size class comes over whole and is cut here:
  // reading its logical value on the device would be a program per length.
  if (std::optional<Classed> c = read_classed(src); c && held == src.scalar_type()) {
    at::Tensor whole = at::empty({c->outer, c->cap, c->inner}, out.options());
    guarded("copying to the host", [&] { engine::to_host(c->value, whole.data_ptr(), whole.nbytes()); });
    out.copy_(whole.narrow(1, 0, c->len_now).reshape(src.sizes()));
    return out;
  }
  if (src.numel() > 0) {
    engine::Ref v = read(src);
    guarded("copying to the host", [&] { engine::to_host(v, out.data_ptr(), out.nbytes()); });
  }
  return held == src.scalar_type() ? out : out.to(src.scalar_type());
}

namespace {

engine::Ref upload(const at::Tensor& cpu, at::ScalarType dtype, const at::Device& device) {
  if (engine::Trace* tr = engine::tracing()) {  // a compiled graph's host scalar input
    auto it = tr->host_scalars.find(cpu.unsafeGetTensorImpl());
    if (it != tr->host_scalars.end()) return cast(it->second, to_shlo(dtype));
  }
  // Conjugate / negative views resolve to their values first.
  // In the device value's dtype: complex32 is widened here, as read() widens it.
  shlo::DType held = to_shlo(dtype);
  at::Tensor c = cpu.resolve_conj().resolve_neg().to(dtype).to(to_torch(held)).contiguous();
  shlo::Type t{held, shape_of(c.sizes())};
  return guarded("copying to the device", [&] { return engine::from_host(c.data_ptr(), t, device.index()); });
}

engine::Ref conj_value(engine::Ref v) {
  if (!shlo::is_complex(v.type().dtype)) return v;
  return op1("copy_conj", {v}, v.type(), [](shlo::Builder& b, const std::vector<shlo::Value>& in) {
    return std::vector<shlo::Value>{ops::conj(b, in[0])};
  });
}

engine::Ref neg_value(engine::Ref v) {
  return op1("copy_neg", {v}, v.type(), [](shlo::Builder& b, const std::vector<shlo::Value>& in) {
    return std::vector<shlo::Value>{b.unary("negate", in[0])};
  });
}

}  // namespace

const at::Tensor& copy_into(const at::Tensor& dst, const at::Tensor& src) {
  TORCH_CHECK(dst.defined() && src.defined(), "copy_: undefined tensor");
  // src must broadcast to dst, checked at the call as the CPU's copy_
  // checks it, with its messages (a mismatch found while compiling would
  // surface at a later read, under another op's name).
  if (!src.sizes().equals(dst.sizes())) {
    const std::vector<int64_t> shape = at::infer_size(dst.sizes(), src.sizes());
    TORCH_CHECK(dst.sizes().equals(shape), "output with shape ", dst.sizes(), " doesn't match the broadcast shape ",
                c10::IntArrayRef(shape));
  }
  if (dst.numel() == 0) return dst;
  bool dst_tpu = dst.device().type() == c10::DeviceType::PrivateUse1;
  bool src_tpu = src.device().type() == c10::DeviceType::PrivateUse1;
  if (!dst_tpu) {
    TORCH_CHECK(src_tpu, "copy_: neither tensor is on the tpu");
    // The raw storage values with src's conjugate / negative bits: the CPU copy_ resolves them.
    at::Tensor raw = to_cpu(src);
    if (src.is_conj()) raw = raw.conj();
    if (src.is_neg()) raw = raw._neg_view();
    dst.copy_(raw);
    return dst;
  }
  // As TensorIterator does for the CPU's copy_: views keep sizes, strides
  // and offsets, and the storage's handle address is a stable identity, so
  // PyTorch's own overlap tests apply unchanged (a full overlap is fine).
  at::assert_no_internal_overlap(dst);
  if (src_tpu && !dst.is_same(src)) at::assert_no_partial_overlap(dst, src);
  // A padded content (a size class) stays padded in a same-shaped copy
  // (.to(dtype), .clone()), so the copy's program serves the whole class.
  if (src_tpu && !dst.is_same(src) && src.device() == dst.device() && src.sizes().equals(dst.sizes()) &&
      !src.is_conj() && !dst.is_conj() && !src.is_neg() && !dst.is_neg() && classable(dst)) {
    if (std::optional<Classed> c = read_classed(src)) {
      engine::Ref v = cast(c->value, to_shlo(dst.scalar_type()));
      write_classed(dst, v.node == c->value.node ? v : serving_class(v, c->cap), c->outer, c->cap, c->inner);
      return dst;
    }
  }
  engine::Ref v = src_tpu ? read(src) : upload(src, dst.scalar_type(), dst.device());
  // Between two devices: the source's value, computed where it is, moves.
  if (src_tpu && src.device() != dst.device())
    v = guarded("copying between devices", [&] { return engine::to_device(v, dst.device().index()); });
  // A conjugate / negative view stores the conjugate / negation of its value:
  // one flip per side whose bit is set.
  bool conj = src_tpu && src.is_conj(), neg = src_tpu && src.is_neg();
  if (conj != dst.is_conj()) v = conj_value(v);
  if (neg != dst.is_neg()) v = neg_value(v);
  write(dst, broadcast(cast(v, to_shlo(dst.scalar_type())), shape_of(dst.sizes())));
  if (!src_tpu) note_host_indices(dst, src);
  return dst;
}

namespace {

at::Tensor& copy_(at::Tensor& self, const at::Tensor& src, bool /*non_blocking*/) {
  copy_into(self, src);
  return self;
}

at::Tensor _copy_from(const at::Tensor& self, const at::Tensor& dst, bool /*non_blocking*/) {
  copy_into(dst, self);
  return dst;
}

at::Tensor _copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  copy_into(dst, self);
  return dst;
}

at::Scalar _local_scalar_dense(const at::Tensor& self) {
  at::Tensor c = to_cpu(self);
  return c.item();
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("_copy_from", &_copy_from);
  m.impl("_copy_from_and_resize", &_copy_from_and_resize);
  m.impl("_local_scalar_dense", &_local_scalar_dense);
  m.impl("copy_", &copy_);
}

}  // namespace tpu
