// The experts layer as one program (see moe.h).
#include "ops/moe/moe.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "ops/common/lowering.h"
#include "ops/linalg/grouped_mm.h"
#include "ops/linalg/grouped_rows_host.h"
#include "ops/linalg/linalg.h"
#include "ops/moe/moe_host.h"

namespace ops {

namespace {

using shlo::Builder;
using shlo::Cmp;
using shlo::DType;
using shlo::Type;
using shlo::Value;
using Vals = std::vector<Value>;

Value i32(Builder& b, int64_t v) { return b.constant(DType::S32, static_cast<double>(v)); }

// Rows of x ([N, C]) picked by a 1-D S32 index vector.
Value take_rows(Builder& b, Value x, Value rows) {
  int64_t n = rows.shape()[0], c = x.shape()[1];
  Value ix = b.reshape(rows, {n, 1});
  return b.gather(x, ix, {1}, {0}, {0}, 1, {1, c}, {n, c});
}

// Rounds an accumulated value to the layer's dtype and back, as the CPU's
// separate ops round each result.
Value round_to(Builder& b, Value x, DType t) { return x.dtype() == t ? x : b.convert(b.convert(x, t), x.dtype()); }

// Whether each expert id lies in [0, experts).
Value in_range(Builder& b, Value id, int64_t experts) {
  const shlo::Shape& n = id.shape();
  return logical_and(b, b.compare(Cmp::GE, id, b.constant(DType::S32, 0, n)),
                     b.compare(Cmp::LT, id, b.constant(DType::S32, static_cast<double>(experts), n)));
}

// rows -> rows @ one projection's matrix, accumulated (not yet rounded).
using Product = std::function<Value(Value)>;

// An expert's feed-forward on the rows of x: act(gate) * up, then down, each
// projection rounded to x's dtype as the layers round. [rows, H].
Value expert_ffn(Builder& b, Value x, Activation act, const Product& gate_up, const Product& down) {
  const DType dt = x.dtype();
  const int64_t rows = x.shape()[0];
  Value proj = round_to(b, gate_up(x), dt);  // [rows, 2I]
  const int64_t inter = proj.shape()[1] / 2;
  Value gate = b.convert(b.slice(proj, {0, 0}, {rows, inter}, {1, 1}), dt);
  Value up = b.slice(proj, {0, inter}, {rows, 2 * inter}, {1, 1});
  Value mid = b.convert(b.mul(b.convert(activation(b, act, gate), proj.dtype()), up), dt);
  return b.convert(down(mid), dt);
}

// The product with w (one matrix, or with batch {0} one per row) whose
// input features are dim w_in.
Product contract_with(Builder& b, Value w, int64_t w_in, const std::vector<int64_t>& batch) {
  return [&b, w, w_in, batch](Value x) { return contract(b, x, w, batch, batch, {1}, {w_in}); };
}

// One token (decoding a single sequence): its k choices are distinct
// experts, so gathering their matrices reads each once, and a batched
// product over the k choices replaces the sort, the loops and the unsort.
Value one_token(Builder& b, Value hidden, Value top_k_index, Value top_k_weights, Value gate_up, Value down,
                Activation act, ExpertLayout layout) {
  const DType dt = hidden.dtype(), acc = accumulate_dtype(dt);
  const int64_t h = hidden.shape()[1], k = top_k_index.shape()[1];
  Value id = b.convert(b.reshape(top_k_index, {k}), DType::S32);
  Value valid = in_range(b, id, gate_up.shape()[0]);
  Value ix = b.reshape(b.select(valid, id, b.constant(DType::S32, 0, {k})), {k, 1});
  auto take = [&](Value w) {
    shlo::Shape sz = w.shape(), out = w.shape();
    sz[0] = 1;
    out[0] = k;
    std::vector<int64_t> offset_dims;
    for (size_t d = 1; d < sz.size(); ++d) offset_dims.push_back(static_cast<int64_t>(d));
    return b.gather(w, ix, offset_dims, {0}, {0}, 1, sz, out);
  };
  // The gathered matrices lead with the choice: input features one dim later.
  auto product = [&](Value w) { return contract_with(b, take(w), layout == ExpertLayout::InOut ? 1 : 2, {0}); };
  Value x = b.broadcast_in_dim(b.reshape(hidden, {h}), {k, h}, {1});
  Value y = expert_ffn(b, x, act, product(gate_up), product(down));  // [k, H]
  Value w = b.broadcast_in_dim(b.convert(b.reshape(top_k_weights, {k}), acc), {k, h}, {0});
  Value weighted = b.convert(b.convert(b.mul(b.convert(y, acc), w), dt), acc);
  weighted = b.select(b.broadcast_in_dim(valid, {k, h}, {0}), weighted, b.constant(acc, 0, {k, h}));
  return b.convert(b.reshape(b.reduce(weighted, b.zero(acc), {0}, "add"), {1, h}), dt);
}

}  // namespace

Value moe_experts(Builder& b, Value hidden, Value top_k_index, Value top_k_weights, Value gate_up, Value down,
                  Activation act, ExpertLayout layout, int64_t tile) {
  const DType dt = hidden.dtype(), acc = accumulate_dtype(dt);
  const int64_t tokens = hidden.shape()[0], h = hidden.shape()[1], k = top_k_index.shape()[1];
  const int64_t experts = gate_up.shape()[0], pairs = tokens * k;
  if (layout == ExpertLayout::HostPanels) {
    // On the host the routing and the products are native code
    // (moe_host.h, grouped_rows_host.h), one token included: the kernel
    // reads its experts' panels where they are, no gathered copy. The
    // activation stays here.
    MoeDispatch d = moe_dispatch_host(b, hidden, b.convert(top_k_index, DType::S32), experts);
    Value ys = expert_ffn(
        b, d.rows, act, [&](Value x) { return grouped_rows_host(b, x, d.counts, gate_up); },
        [&](Value x) { return grouped_rows_host(b, x, d.counts, down); });
    return moe_combine_host(b, ys, d.slot, b.convert(top_k_weights, DType::F32));
  }
  if (tokens == 1) return one_token(b, hidden, top_k_index, top_k_weights, gate_up, down, act, layout);
  const Type s32{DType::S32, {pairs}};

  // Each pair's expert; ids outside [0, experts) become `experts`, which
  // sorts after every real one and belongs to no group.
  Value id = b.convert(b.reshape(top_k_index, {pairs}), DType::S32);
  id = b.select(in_range(b, id, experts), id, b.constant(DType::S32, static_cast<double>(experts), {pairs}));
  Vals sorted =
      b.sort({id, b.iota(s32, 0)}, 0, [](Builder& r, const Vals& a) { return Vals{r.compare(Cmp::LT, a[0], a[1])}; });
  Value sorted_id = sorted[0], perm = sorted[1];

  // Rows per expert.
  shlo::Shape es{experts, pairs};
  Value member = b.compare(Cmp::EQ, b.broadcast_in_dim(id, es, {1}), b.iota(Type{DType::S32, es}, 0));
  Value counts = b.reduce(b.convert(member, DType::S32), i32(b, 0), {1}, "add");
  // The sorted pairs' inputs through their experts, with one tile of zero
  // rows after them (group_tiles), each expert's rows through its matrices.
  // An idle expert's weights are never read (at decode's few tokens most
  // experts are idle).
  Value token_of = b.div(perm, b.constant(DType::S32, static_cast<double>(k), {pairs}));
  // Where each expert's rows start in the sorted order.
  shlo::Shape ee{experts, experts};
  Value before = b.compare(Cmp::LT, b.iota(Type{DType::S32, ee}, 1), b.iota(Type{DType::S32, ee}, 0));
  Value starts = b.reduce(b.select(before, b.broadcast_in_dim(counts, ee, {1}), b.constant(DType::S32, 0, ee)),
                          i32(b, 0), {1}, "add");
  // The contracted dim of each expert matrix: its input features.
  const int64_t w_in = layout == ExpertLayout::InOut ? 0 : 1;
  Value xs = b.pad(take_rows(b, hidden, token_of), b.zero(dt), {0, 0}, {tile, 0}, {0, 0});
  Value ys = group_tiles(b, xs, counts, starts, {gate_up, down}, tile, h, dt, [&](Builder& q, Value x, const Vals& w) {
    return expert_ffn(q, x, act, contract_with(q, w[0], w_in, {}), contract_with(q, w[1], w_in, {}));
  });

  // Weighted by each pair's routing weight (a sentinel pair's row is
  // dropped, not multiplied: its tile may hold anything), back in the
  // pairs' original order, summed over each token's choices.
  Value rows = b.slice(ys, {0, 0}, {pairs, h}, {1, 1});
  Value w = b.reshape(top_k_weights, {pairs, 1});
  Value ws = take_rows(b, w, perm);  // [pairs, 1]
  Value weighted = b.mul(b.convert(rows, acc), b.broadcast_in_dim(b.convert(ws, acc), {pairs, h}, {0, 1}));
  Value keep = b.broadcast_in_dim(
      b.compare(Cmp::LT, sorted_id, b.constant(DType::S32, static_cast<double>(experts), {pairs})), {pairs, h}, {0});
  weighted = b.select(keep, b.convert(b.convert(weighted, dt), acc), b.constant(acc, 0, {pairs, h}));
  Value inverse = b.sort({perm, b.iota(s32, 0)}, 0,
                         [](Builder& r, const Vals& a) { return Vals{r.compare(Cmp::LT, a[0], a[1])}; })[1];
  Value per_pair = b.reshape(take_rows(b, weighted, inverse), {tokens, k, h});
  return b.convert(b.reduce(per_pair, b.zero(acc), {1}, "add"), dt);
}

}  // namespace ops
