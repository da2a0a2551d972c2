// Grouped matrix products: a loop over the groups for grouped rows, one
// dot_general over masked operands otherwise (see grouped_mm.h).
#include "ops/linalg/grouped_mm.h"

#include <algorithm>
#include <string>

#include "ops/common/lowering.h"
#include "ops/linalg/linalg.h"

namespace ops {

namespace {

using shlo::Cmp;
using shlo::DType;
using shlo::Type;
using Vals = std::vector<Value>;

Value i32(Builder& b, int64_t v) { return b.constant(DType::S32, static_cast<double>(v)); }

// Element `i` (a 0-d S32 value) of a 1-D value, as a 0-d value.
Value at(Builder& b, Value v, Value i) { return b.reshape(b.dynamic_slice(v, {i}, {1}), {}); }

Vals run(Builder& b, const Vals& init, const shlo::RegionFn& cond, const shlo::RegionFn& body) {
  std::vector<Type> types;
  for (const Value& v : init) types.push_back(v.type);
  std::string c = b.region(types, cond), r = b.region(types, body);
  return b.op(hlo::kWhile, init, types, "", {c, r});
}

// Group g's slice of w ([G, ...]), its leading dim dropped.
Value slice_of(Builder& b, Value w, Value g) {
  std::vector<Value> at{g};
  shlo::Shape size = w.shape(), rest(w.shape().begin() + 1, w.shape().end());
  size[0] = 1;
  for (size_t i = 1; i < size.size(); ++i) at.push_back(i32(b, 0));
  return b.reshape(b.dynamic_slice(w, at, size), rest);
}

// Where each group starts: 0, then the previous group's end.
Value group_starts(Builder& b, Value ends) {
  int64_t g = ends.shape()[0];
  Value starts = b.constant(ends.dtype(), 0, {1});
  if (g > 1) starts = b.concatenate({starts, b.slice(ends, {0}, {g - 1}, {1})}, 0);
  return starts;
}

// [G, L] predicate: position i belongs to group g (offs[g-1] <= i < offs[g]).
Value group_mask(Builder& b, Value offs, int64_t length) {
  int64_t g = offs.shape()[0];
  Value ends = b.convert(offs, DType::S64), starts = group_starts(b, ends);
  shlo::Shape s{g, length};
  Value idx = b.iota(shlo::Type{DType::S64, s}, 1);
  Value ge = b.compare(shlo::Cmp::GE, idx, b.broadcast_in_dim(starts, s, {0}));
  Value lt = b.compare(shlo::Cmp::LT, idx, b.broadcast_in_dim(ends, s, {0}));
  return logical_and(b, ge, lt);
}

// x broadcast to `shape` (dims x_dims), zero where the mask (broadcast with
// mask_dims) is false.
Value masked(Builder& b, Value x, const std::vector<int64_t>& x_dims, Value mask, const std::vector<int64_t>& mask_dims,
             const shlo::Shape& shape) {
  Value xb = b.broadcast_in_dim(x, shape, x_dims);
  Value mb = b.broadcast_in_dim(mask, shape, mask_dims);
  return b.select(mb, xb, b.constant(x.dtype(), 0, shape));
}

// [M,K] x [G,K,N] with rows grouped by offs: each group's rows through its
// matrix (group_tiles); rows outside every group are zero.
Value rows_grouped(Builder& b, Value a, Value m, Value offs) {
  const int64_t rows = a.shape()[0], g = m.shape()[0], n = m.shape()[2];
  const int64_t tile = group_tile_rows(rows, g);
  Value ends = b.convert(offs, DType::S32), starts = group_starts(b, ends);
  // Offsets outside [0, rows] select no row there: clamped, a group's
  // count never negative.
  Value lo = i32(b, 0), hi = i32(b, rows);
  Value first = b.clamp(lo, starts, hi), last = b.clamp(lo, ends, hi);
  Value counts = b.max(b.sub(last, first), b.constant(DType::S32, 0, {g}));
  Value x = b.pad(a, b.zero(a.dtype()), {0, 0}, {tile, 0}, {0, 0});
  Value y = group_tiles(b, x, counts, first, {m}, tile, n, a.dtype(), [](Builder& q, Value rows_in, const Vals& w) {
    return contract(q, rows_in, w[0], {}, {}, {1}, {0});
  });
  y = b.slice(y, {0, 0}, {rows, n}, {1, 1});
  Value in_some =
      b.compare(Cmp::GT, b.reduce(b.convert(group_mask(b, offs, rows), DType::S32), i32(b, 0), {0}, "maximum"),
                b.constant(DType::S32, 0, {rows}));
  return b.select(b.broadcast_in_dim(in_some, {rows, n}, {0}), y, b.constant(y.dtype(), 0, {rows, n}));
}

}  // namespace

int64_t group_tile_rows(int64_t rows, int64_t groups) {
  int64_t mean = (rows + groups - 1) / std::max<int64_t>(groups, 1);
  int64_t tile = 8;
  while (tile < mean && tile < 256) tile *= 2;
  return tile;
}

Value group_tiles(Builder& b, Value x, Value counts, Value starts, const std::vector<Value>& weights, int64_t tile,
                  int64_t n, DType out, const GroupBody& body) {
  const int64_t groups = counts.shape()[0], c = x.shape()[1], nw = static_cast<int64_t>(weights.size());
  // The groups that have rows, ascending, and how many: ascending keeps a
  // tile's spill into the next group's rows overwritten by that group.
  const Type sg{DType::S32, {groups}};
  Value idle = b.compare(Cmp::EQ, counts, b.constant(DType::S32, 0, {groups}));
  Value active = b.sort({b.convert(idle, DType::S32), b.iota(sg, 0)}, 0,
                        [](Builder& r, const Vals& v) { return Vals{r.compare(Cmp::LT, v[0], v[1])}; })[1];
  Value n_active = b.reduce(b.convert(logical_not(b, idle), DType::S32), i32(b, 0), {0}, "add");
  // Outer state: group position, result, rows, counts, starts, active,
  // n_active, weights...; inner: tile, result, rows, count, first row,
  // the group's slices...
  Vals init{i32(b, 0), b.constant(out, 0, {x.shape()[0], n}), x, counts, starts, active, n_active};
  init.insert(init.end(), weights.begin(), weights.end());
  Vals outer = run(
      b, init, [](Builder& r, const Vals& s) { return Vals{r.compare(Cmp::LT, s[0], s[6])}; },
      [&](Builder& r, const Vals& s) {
        Value g = at(r, s[5], s[0]);
        Vals inner_init{i32(r, 0), s[1], s[2], at(r, s[3], g), at(r, s[4], g)};
        for (int64_t i = 0; i < nw; ++i) inner_init.push_back(slice_of(r, s[7 + i], g));
        Vals inner = run(
            r, inner_init,
            [tile](Builder& q, const Vals& t) { return Vals{q.compare(Cmp::LT, q.mul(t[0], i32(q, tile)), t[3])}; },
            [&](Builder& q, const Vals& t) {
              Value row = q.add(t[4], q.mul(t[0], i32(q, tile))), col = i32(q, 0);
              Value y =
                  q.convert(body(q, q.dynamic_slice(t[2], {row, col}, {tile, c}), Vals(t.begin() + 5, t.end())), out);
              Vals next{q.add(t[0], i32(q, 1)), q.dynamic_update_slice(t[1], y, {row, col})};
              next.insert(next.end(), t.begin() + 2, t.end());
              return next;
            });
        Vals next{r.add(s[0], i32(r, 1)), inner[1]};
        next.insert(next.end(), s.begin() + 2, s.end());
        return next;
      });
  return outer[1];
}

Value grouped_mm(Builder& b, Value a, Value m, const Value* offs, DType out) {
  // Widen f16/bf16 first (exact): XLA:CPU has no bf16 x bf16 -> f32 dot
  // for every layout, and the f32 products are what accumulation gives.
  DType acc = accumulate_dtype(a.dtype());
  a = b.convert(a, acc);
  m = b.convert(m, acc);
  Value r;
  if (a.rank() == 3 && m.rank() == 3) {
    r = contract(b, a, m, {0}, {0}, {2}, {1});
  } else if (a.rank() == 2 && m.rank() == 3) {
    r = rows_grouped(b, a, m, *offs);
  } else if (a.rank() == 3 && m.rank() == 2) {
    int64_t g = a.shape()[0], k = m.shape()[0], cols = m.shape()[1];
    Value mm = masked(b, m, {1, 2}, group_mask(b, *offs, cols), {0, 2}, {g, k, cols});
    r = contract(b, a, mm, {}, {}, {0, 2}, {0, 1});
  } else {
    int64_t g = offs->shape()[0], rows = a.shape()[0], k = a.shape()[1];
    Value am = masked(b, a, {1, 2}, group_mask(b, *offs, k), {0, 2}, {g, rows, k});
    r = contract(b, am, m, {}, {}, {2}, {0});
  }
  return b.convert(r, out);
}

}  // namespace ops
