// Matrix product and cross product lowerings (see linalg.h).
#include "ops/linalg/linalg.h"

#include <algorithm>

#include "ops/common/lowering.h"
#include "ops/elementwise/elementwise.h"
#include "ops/linalg/grouped_rows_host.h"

namespace ops {

using shlo::DType;

DType accumulate_dtype(DType t) { return t == DType::F16 || t == DType::BF16 ? DType::F32 : t; }

namespace {

// dot_general in the order given: result dims batch, x free, y free.
Value emit_dot(Builder& b, Value x, Value y, const std::vector<int64_t>& xb, const std::vector<int64_t>& yb,
               const std::vector<int64_t>& xc, const std::vector<int64_t>& yc) {
  auto has = [](const std::vector<int64_t>& v, int64_t d) { return std::find(v.begin(), v.end(), d) != v.end(); };
  shlo::Shape s;
  for (int64_t d : xb) s.push_back(x.shape()[d]);
  for (int64_t i = 0; i < x.rank(); ++i)
    if (!has(xb, i) && !has(xc, i)) s.push_back(x.shape()[i]);
  for (int64_t i = 0; i < y.rank(); ++i)
    if (!has(yb, i) && !has(yc, i)) s.push_back(y.shape()[i]);
  std::string dn = "dot_dimension_numbers = #stablehlo.dot<";
  if (!xb.empty())
    dn +=
        "lhs_batching_dimensions = " + shlo::i64_list(xb) + ", rhs_batching_dimensions = " + shlo::i64_list(yb) + ", ";
  dn += "lhs_contracting_dimensions = " + shlo::i64_list(xc) + ", rhs_contracting_dimensions = " + shlo::i64_list(yc) +
        ">";
  // PyTorch's float32 matmul precision defaults to "highest"; without this
  // a TPU would multiply f32 in a single bf16 pass.
  dn += ", precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]";
  // Low-precision inputs are widened (exactly) and accumulate in f32, what
  // the CPU's kernels give. Widening before the dot rather than asking for
  // an f32 result of a bf16 dot: XLA:CPU has no bf16 x bf16 -> f32 kernel
  // for every layout (e.g. batch-1 bmm with a transposed operand).
  DType acc = accumulate_dtype(x.dtype());
  return b.op1(hlo::kDotGeneral, {b.convert(x, acc), b.convert(y, acc)}, shlo::Type{acc, s}, dn);
}

// Which side of a matrix kernel reads an operand (batch dims, then one
// free and one contracted dim) in the order it lies in memory: the lhs
// wants the contracted dim last ([.., M, K]), the rhs the one before it
// ([.., K, N]). A transpose is looked through, as XLA folds it into the dot.
enum class Side { kLhs, kRhs, kNeither };

Side stored_side(const Builder& b, Value v, const std::vector<int64_t>& batch, int64_t contracted) {
  const int64_t rank = v.rank(), nb = static_cast<int64_t>(batch.size());
  std::vector<int64_t> stored(rank);  // dim i of v is dim stored[i] in memory
  for (int64_t i = 0; i < rank; ++i) stored[i] = i;
  if (const auto* t = b.transposed_from(v)) stored = t->second;
  if (rank != nb + 2) return Side::kNeither;
  for (int64_t i = 0; i < nb; ++i)
    if (stored[batch[i]] != i) return Side::kNeither;
  return stored[contracted] == rank - 1 ? Side::kLhs : Side::kRhs;
}

}  // namespace

Value contract(Builder& b, Value x, Value y, const std::vector<int64_t>& xb, const std::vector<int64_t>& yb,
               const std::vector<int64_t>& xc, const std::vector<int64_t>& yc) {
  // An operand much larger than the other (a weight against the few rows
  // of decoding) is read as it lies: XLA:CPU's kernels read a transposed
  // one at a fraction of the speed (a linear layer's weight [out, in] as
  // the rhs: 3-7x slower for 8 to 64 rows). When it lies for the other side
  // the operands swap and the result, smaller than that operand, is
  // transposed back; the barrier keeps XLA from folding the transpose into
  // the dot again. Operands of like size (training's products) are left as
  // written: there the layouts cost about the same.
  const int64_t nb = static_cast<int64_t>(xb.size());
  if (xc.size() == 1 && yc.size() == 1 && x.rank() == nb + 2 && y.rank() == nb + 2) {
    int64_t batch = 1;
    for (int64_t d : xb) batch *= x.shape()[d];
    const int64_t k = x.shape()[xc[0]], nx = shlo::numel(x.shape()), ny = shlo::numel(y.shape());
    const bool y_larger = ny > nx;
    const int64_t larger = std::max(nx, ny), smaller = std::min(nx, ny);
    if (batch > 0 && k > 0 && larger >= 4 * smaller && (nx / k) * (ny / k) / batch < larger) {
      const Side side = y_larger ? stored_side(b, y, yb, yc[0]) : stored_side(b, x, xb, xc[0]);
      if (side == (y_larger ? Side::kLhs : Side::kRhs)) {
        std::vector<int64_t> back;  // [batch, y free, x free] -> [batch, x free, y free]
        for (int64_t i = 0; i < nb; ++i) back.push_back(i);
        back.push_back(nb + 1);
        back.push_back(nb);
        return b.transpose(b.barrier(emit_dot(b, y, x, yb, xb, yc, xc)), back);
      }
    }
  }
  return emit_dot(b, x, y, xb, yb, xc, yc);
}

namespace {
// x @ y for a 2-D y, or for y as host panels.
Value product(Builder& b, Value x, Value y) {
  return y.shape().size() == 3 ? rows_host(b, x, y) : contract(b, x, y, {}, {}, {1}, {0});
}
}  // namespace

Value mm(Builder& b, Value x, Value y) { return b.convert(product(b, x, y), x.dtype()); }

Value bmm(Builder& b, Value x, Value y) { return b.convert(contract(b, x, y, {0}, {0}, {2}, {1}), x.dtype()); }

Value mv(Builder& b, Value mat, Value vec) { return b.convert(contract(b, mat, vec, {}, {}, {1}, {0}), mat.dtype()); }

Value dot(Builder& b, Value x, Value y) { return b.convert(contract(b, x, y, {}, {}, {0}, {0}), x.dtype()); }

Value add_scaled(Builder& b, Value self, Value product, Value beta, Value alpha, DType out) {
  DType acc = product.dtype();
  Value p = b.mul(product, splat(b, alpha, product));
  Value s = b.broadcast_to(convert(b, self, acc), product.shape());
  Value bs = splat(b, beta, product);
  // A select, not a multiply by zero: 0 * NaN would propagate.
  Value zero = b.constant(acc, 0, product.shape());
  Value scaled = b.select(b.compare(shlo::Cmp::EQ, bs, zero), zero, b.mul(s, bs));
  return convert(b, b.add(scaled, p), out);
}

Value addmm(Builder& b, Value self, Value m1, Value m2, Value beta, Value alpha) {
  return add_scaled(b, self, product(b, m1, m2), beta, alpha, m1.dtype());
}

Value baddbmm(Builder& b, Value self, Value b1, Value b2, Value beta, Value alpha) {
  return add_scaled(b, self, contract(b, b1, b2, {0}, {0}, {2}, {1}), beta, alpha, b1.dtype());
}

Value addbmm(Builder& b, Value self, Value b1, Value b2, Value beta, Value alpha) {
  int64_t batches = b1.shape()[0], n = b1.shape()[1], k = b1.shape()[2], m = b2.shape()[2];
  // bf16 / f16: the CPU adds one batch's product at a time into the result,
  // rounding to the dtype after each; so do we, for any sane batch count
  // (each step is an addmm), or the sums differ by an ulp or two.
  if (accumulate_dtype(b1.dtype()) != b1.dtype() && batches > 1 && batches <= 64) {
    Value r = self;
    Value one = b.constant(beta.dtype(), 1.0);
    for (int64_t i = 0; i < batches; ++i) {
      Value x = b.reshape(b.slice(b1, {i, 0, 0}, {i + 1, n, k}, {1, 1, 1}), {n, k});
      Value y = b.reshape(b.slice(b2, {i, 0, 0}, {i + 1, k, m}, {1, 1, 1}), {k, m});
      r = add_scaled(b, r, contract(b, x, y, {}, {}, {1}, {0}), i == 0 ? beta : one, alpha, b1.dtype());
    }
    return r;
  }
  // Contracting the batch dim together with k sums the per-batch products.
  return add_scaled(b, self, contract(b, b1, b2, {}, {}, {0, 2}, {0, 1}), beta, alpha, b1.dtype());
}

Value addmv(Builder& b, Value self, Value mat, Value vec, Value beta, Value alpha) {
  return add_scaled(b, self, contract(b, mat, vec, {}, {}, {1}, {0}), beta, alpha, mat.dtype());
}

Value cross(Builder& b, Value x, Value y, int64_t dim) {
  auto part = [&](Value v, int64_t i) {
    shlo::Shape lo(v.rank(), 0), hi = v.shape();
    lo[dim] = i;
    hi[dim] = i + 1;
    return b.slice(v, lo, hi, shlo::Shape(v.rank(), 1));
  };
  Value x0 = part(x, 0), x1 = part(x, 1), x2 = part(x, 2), y0 = part(y, 0), y1 = part(y, 1), y2 = part(y, 2);
  return b.concatenate(
      {b.sub(b.mul(x1, y2), b.mul(x2, y1)), b.sub(b.mul(x2, y0), b.mul(x0, y2)), b.sub(b.mul(x0, y1), b.mul(x1, y0))},
      dim);
}

}  // namespace ops
