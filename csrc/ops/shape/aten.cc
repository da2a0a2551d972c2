// cat, constant_pad_nd, flip, roll and triu / tril: ATen entry points and
// their registration. cat's and the triangles' structured meta functions
// give the result's shape and dtype; the lowerings are shape.h.
#include <ATen/WrapDimUtils.h>
#include <ATen/ops/cat_meta.h>
#include <ATen/ops/tril_meta.h>
#include <ATen/ops/triu_meta.h>

#include <algorithm>

#include "aten/library.h"
#include "ops/shape/shape.h"

namespace tpu {

namespace {

using shlo::Builder;
using Vals = std::vector<shlo::Value>;
using MCat = at::meta::structured_cat;

// ---- cat (its meta takes a tensor list first: registered by hand)

// A cat that appends to a tensor (its first piece holds more than half of
// the result, or is itself padded along dim: a KV cache, an attention mask,
// generated ids) stores its result padded to the length's size class. Its
// program then takes the first piece padded and its length as an operand,
// and serves every length of the class: the step that grows a cache by one
// token is one program, not one per length.
bool cat_appended(const at::Tensor& out, const std::vector<at::Tensor>& pieces, int64_t dim) {
  if (pieces.empty() || !classable(out)) return false;
  return pieces[0].size(dim) * 2 > out.size(dim) || read_classed(pieces[0], dim).has_value();
}

void cat_append(const at::Tensor& out, const std::vector<at::Tensor>& pieces, int64_t dim) {
  const size_t d = static_cast<size_t>(dim);
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < d; ++i) outer *= out.size(static_cast<int64_t>(i));
  for (size_t i = d + 1; i < static_cast<size_t>(out.dim()); ++i) inner *= out.size(static_cast<int64_t>(i));
  int64_t cap = size_class(out.size(dim), outer * inner * static_cast<int64_t>(out.element_size()));
  std::vector<engine::Ref> in;
  if (std::optional<Classed> c = read_classed(pieces[0], dim)) {
    in = {c->value, c->len};
    cap = std::max(cap, c->cap);  // (a narrower dtype's rows may have had a larger class)
  } else {
    const at::Tensor& a = pieces[0];
    in = {op1(
              "cat_first_flat", {read(a)}, shlo::Type{to_shlo(a.scalar_type()), {a.numel()}},
              [](Builder& b, const Vals& x, int64_t n) { return Vals{b.reshape(x[0], {n})}; }, a.numel()),
          engine::scalar_i64(a.size(dim))};
  }
  std::vector<int64_t> lengths;
  for (size_t i = 1; i < pieces.size(); ++i) {
    in.push_back(read(pieces[i]));
    lengths.push_back(pieces[i].size(dim));
  }
  const shlo::DType to = to_shlo(out.scalar_type());
  engine::Ref r = op1(
      "cat_append", std::move(in), shlo::Type{to, {outer * cap * inner}},
      [](Builder& b, const Vals& x, int64_t outer, int64_t cap, int64_t inner, const std::vector<int64_t>& lengths,
         shlo::DType to) {
        const int64_t have = x[0].shape()[0] / (outer * inner);
        shlo::Value acc = b.convert(b.reshape(x[0], {outer, have, inner}), to);
        if (have < cap) acc = b.pad(acc, b.zero(to), {0, 0, 0}, {0, cap - have, 0}, {0, 0, 0});
        shlo::Value zero = b.constant(shlo::DType::S64, 0), at = x[1];
        for (size_t i = 0; i < lengths.size(); ++i) {
          shlo::Value piece = b.convert(b.reshape(x[2 + i], {outer, lengths[i], inner}), to);
          acc = b.dynamic_update_slice(acc, piece, {zero, at, zero});
          at = b.add(at, b.constant(shlo::DType::S64, static_cast<double>(lengths[i])));
        }
        return Vals{b.reshape(acc, {outer * cap * inner})};
      },
      outer, cap, inner, lengths, to);
  write_classed(out, serving_class(r, cap), outer, cap, inner);
}

void cat_into(const at::Tensor& out, const at::ITensorListRef& tensors, int64_t dim) {
  if (out.numel() == 0) return;
  std::vector<at::Tensor> pieces;
  for (const at::Tensor& t : tensors) {
    // Legacy 1-D empty tensors are skipped by PyTorch; so is anything empty along dim.
    if (t.dim() == 1 && t.numel() == 0) continue;
    if (t.size(dim) == 0) continue;
    pieces.push_back(t);
  }
  if (cat_appended(out, pieces, dim)) return cat_append(out, pieces, dim);
  std::vector<engine::Ref> in;
  for (const at::Tensor& t : pieces) in.push_back(read(t));
  write_all(
      {out}, "cat", std::move(in),
      [](Builder& b, const Vals& v, int64_t d, shlo::DType to) { return Vals{ops::cat(b, v, d, to)}; }, dim,
      to_shlo(out.scalar_type()));
}

at::Tensor cat(const at::ITensorListRef& tensors, int64_t dim) {
  Structured<MCat> m;
  auto pre = m.meta(tensors, dim);
  cat_into(m.outs[0], tensors, pre.dim);
  return m.outs[0];
}
at::Tensor& cat_out(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  Structured<MCat> m({out});
  auto pre = m.meta(tensors, dim);
  cat_into(out, tensors, pre.dim);
  return out;
}

// ---- flip, roll, constant padding

at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  std::vector<int64_t> d;
  std::vector<bool> seen_dim(std::max<int64_t>(self.dim(), 1), false);
  for (int64_t x : dims) {
    int64_t w = at::maybe_wrap_dim(x, self.dim());
    TORCH_CHECK(!seen_dim[w], "dim ", w, " appears multiple times in the list of dims");
    seen_dim[w] = true;
    if (self.dim() > 0) d.push_back(w);
  }
  std::sort(d.begin(), d.end());
  if (self.numel() == 0 || d.empty()) return self.clone();
  return wrap(
      op1(
          "flip", {read(self)}, type_of(self),
          [](Builder& b, const Vals& in, const std::vector<int64_t>& d) { return Vals{ops::flip(b, in[0], d)}; }, d),
      self.device());
}

at::Tensor roll(const at::Tensor& self, c10::SymIntArrayRef shifts_, at::IntArrayRef dims) {
  std::vector<int64_t> shifts;
  for (const c10::SymInt& s : shifts_) shifts.push_back(s.expect_int());
  TORCH_CHECK(!shifts.empty(), "`shifts` required");
  size_t want = dims.empty() ? 1 : dims.size();
  TORCH_CHECK(shifts.size() == want, "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  std::vector<int64_t> d;
  for (int64_t x : dims) d.push_back(at::maybe_wrap_dim(x, self.dim()));
  if (self.numel() == 0) return self.clone();
  return wrap(op1(
                  "roll", {read(self)}, type_of(self),
                  [](Builder& b, const Vals& in, const std::vector<int64_t>& shifts, const std::vector<int64_t>& d) {
                    return Vals{ops::roll(b, in[0], shifts, d)};
                  },
                  shifts, d),
              self.device());
}

at::Tensor constant_pad_nd(const at::Tensor& self, c10::SymIntArrayRef pad_, const at::Scalar& value) {
  std::vector<int64_t> pad;
  for (const c10::SymInt& p : pad_) pad.push_back(p.expect_int());
  TORCH_CHECK(pad.size() % 2 == 0, "Length of pad must be even but instead it equals ", pad.size());
  int64_t n = self.dim();
  TORCH_CHECK(static_cast<int64_t>(pad.size()) <= 2 * n,
              "Length of pad should be no more than twice the number of dimensions of the input. Pad length is ",
              pad.size(), "while the input has ", n, "dimensions.");
  at::DimVector os(self.sizes());
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t d = n - 1 - static_cast<int64_t>(i);
    os[d] = self.size(d) + pad[2 * i] + pad[2 * i + 1];
    TORCH_CHECK(os[d] >= 0, "The input size ", self.size(d), ", plus negative padding ", pad[2 * i], " and ",
                pad[2 * i + 1], " resulted in a negative output size, which is invalid. Check dimension ", d,
                " of your input.");
  }
  at::Tensor out = empty(os, self.scalar_type(), self.device());
  if (out.numel() == 0) return out;
  write_all(
      {out}, "constant_pad", {read(self), scalar_of(value, to_shlo(self.scalar_type()))},
      [](Builder& b, const Vals& in, const std::vector<int64_t>& pad) {
        return Vals{ops::constant_pad(b, in[0], in[1], pad)};
      },
      pad);
  return out;
}

// ---- triu / tril: the diagonal is an operand, so every diagonal shares a program

template <bool Upper>
struct Triangle {
  template <class M>
  void operator()(M&, const at::Tensor& out, const at::Tensor& self, int64_t diagonal) const {
    if (out.numel() == 0) return;
    write_all({out}, Upper ? "triu" : "tril", {read(self), engine::scalar_i64(diagonal)},
              [](Builder& b, const Vals& in) { return Vals{ops::triangle(b, in[0], in[1], Upper)}; });
  }
};

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, lib) {
  Kernels m(lib);
  m.impl("cat", &cat);
  m.impl("cat.out", &cat_out);
  m.impl("constant_pad_nd", &constant_pad_nd);
  m.impl("flip", &flip);
  m.impl("roll", &roll);
  m.structured<at::meta::structured_tril>("tril", "tril_", "tril.out", Triangle<false>{});
  m.structured<at::meta::structured_triu>("triu", "triu_", "triu.out", Triangle<true>{});
}

}  // namespace tpu
