// Indexing lowerings with PyTorch semantics: gather / scatter along a dim,
// the index_select / index_add / index_reduce family, advanced indexing,
// take, masked_scatter and embedding backward. Index operands arrive already
// validated by the caller (in range); negative indices are wrapped here
// wherever PyTorch allows them.
#pragma once

#include <string>
#include <vector>

#include "ops/common/lowering.h"
#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::Value;

// How a scatter combines an update with the value already there.
enum class Combine { Replace, Add, Mul, Max, Min };

// The integer type used to address dims of at most `extent` elements: s32
// where it fits (cheap on TPUs), s64 otherwise.
shlo::DType index_type(int64_t extent);

// torch.gather: out[..., i, ...] = x[..., idx[..., i, ...], ...] along dim;
// the result has idx's shape.
Value gather_dim(Builder& b, Value x, int64_t dim, Value idx);
// torch.scatter / scatter_add / scatter(reduce=): src is read over idx's
// shape (src may be larger).
Value scatter_dim(Builder& b, Value x, int64_t dim, Value idx, Value src, Combine c);
// torch.scatter_reduce.
Value scatter_reduce(Builder& b, Value x, int64_t dim, Value idx, Value src, ReduceKind reduce, bool include_self);

// index_select with a 1-D idx: x's shape with dim replaced by len(idx).
Value index_select(Builder& b, Value x, int64_t dim, Value idx);
// index_add / index_copy / index_fill: src (x's shape with dim replaced by
// len(idx)) combined into x at idx along dim. wrap: negative idx allowed.
Value index_scatter(Builder& b, Value x, int64_t dim, Value idx, Value src, Combine c, bool wrap);
// index_copy: src (x's shape with dim replaced by len(idx)) written into x
// at idx along dim; an index outside [0, x.shape[dim]) writes nothing.
Value index_copy(Builder& b, Value x, int64_t dim, Value idx, Value src);
// index_add: x[..., idx[i], ...] += alpha * src[..., i, ...] (alpha: 0-d).
Value index_add(Builder& b, Value x, int64_t dim, Value idx, Value src, Value alpha);
// index_reduce: reduce is Prod, Mean, Amax or Amin.
Value index_reduce(Builder& b, Value x, int64_t dim, Value idx, Value src, ReduceKind reduce, bool include_self);

// Advanced indexing x[idx...]: idx[i] indexes dim dims[i] (dims ascending);
// the idx values broadcast together to a shape B. Negative indices wrap.
shlo::Shape advanced_index_shape(const shlo::Shape& x, const std::vector<int64_t>& dims, const shlo::Shape& B);
Value advanced_index(Builder& b, Value x, const std::vector<int64_t>& dims, const std::vector<Value>& idx,
                     const shlo::Shape& B);
// x[idx...] = values (or += with accumulate; duplicates then sum). values
// broadcast to advanced_index_shape.
Value advanced_index_put(Builder& b, Value x, const std::vector<int64_t>& dims, const std::vector<Value>& idx,
                         const shlo::Shape& B, Value values, bool accumulate);

// torch.take: x read as flat, result shaped like idx; negative idx wraps.
Value take(Builder& b, Value x, Value idx);

// embedding_dense_backward: grad [..., D] summed into rows idx of a
// [num_weights, D] zero table. Rows equal to padding_idx (>= 0) get no
// gradient; scale_grad_by_freq divides by each index's count.
Value embedding_backward(Builder& b, Value grad, Value idx, int64_t num_weights, int64_t padding_idx,
                         bool scale_grad_by_freq);

// masked_scatter: the true positions of mask (x's shape) take src's
// elements in order.
Value masked_scatter(Builder& b, Value x, Value mask, Value src);

// Inclusive prefix sum of a 1-D value in log2(n) shifted adds (no
// reduce_window, whose CPU lowering is quadratic).
Value prefix_sum(Builder& b, Value x);

// [min, sum] of an integer value as s64[2] (repeat_interleave's checks and size).
Value min_and_sum(Builder& b, Value x);
// repeat_interleave(repeats): i repeated repeats[i] times, `total` in all.
Value repeat_interleave_indices(Builder& b, Value repeats, int64_t total);

}  // namespace ops
