// Lowering primitives every op family shares: the StableHLO ops the builder
// has no method for, logical ops, constants shaped like a value, full-reduction dimensions, and the
// reduction kinds of PyTorch's scatter_reduce / index_reduce. No torch here
// (the ATen side's shared checks are in aten_common.h beside this file).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "shlo/builder.h"

namespace ops {

// StableHLO op names for Builder::op / op1 (the builder's own methods cover
// the rest).
namespace hlo {
inline constexpr char kAbs[] = "stablehlo.abs";
inline constexpr char kAdd[] = "stablehlo.add";
inline constexpr char kAllGather[] = "stablehlo.all_gather";
inline constexpr char kAllReduce[] = "stablehlo.all_reduce";
inline constexpr char kAllToAll[] = "stablehlo.all_to_all";
inline constexpr char kAnd[] = "stablehlo.and";
inline constexpr char kComplex[] = "stablehlo.complex";
inline constexpr char kConvolution[] = "stablehlo.convolution";
inline constexpr char kDivide[] = "stablehlo.divide";
inline constexpr char kDotGeneral[] = "stablehlo.dot_general";
inline constexpr char kFft[] = "stablehlo.fft";
inline constexpr char kImag[] = "stablehlo.imag";
inline constexpr char kIsFinite[] = "stablehlo.is_finite";
inline constexpr char kMaximum[] = "stablehlo.maximum";
inline constexpr char kMinimum[] = "stablehlo.minimum";
inline constexpr char kMultiply[] = "stablehlo.multiply";
inline constexpr char kNot[] = "stablehlo.not";
inline constexpr char kOr[] = "stablehlo.or";
inline constexpr char kPower[] = "stablehlo.power";
inline constexpr char kReal[] = "stablehlo.real";
inline constexpr char kReducePrecision[] = "stablehlo.reduce_precision";
inline constexpr char kReduceScatter[] = "stablehlo.reduce_scatter";
inline constexpr char kRemainder[] = "stablehlo.remainder";
inline constexpr char kShiftRightLogical[] = "stablehlo.shift_right_logical";
inline constexpr char kWhile[] = "stablehlo.while";
inline constexpr char kXor[] = "stablehlo.xor";
}  // namespace hlo

// ---- logical ops (PRED operands; bitwise on integers), result typed as x.
shlo::Value logical_and(shlo::Builder& b, shlo::Value x, shlo::Value y);
shlo::Value logical_or(shlo::Builder& b, shlo::Value x, shlo::Value y);
shlo::Value logical_xor(shlo::Builder& b, shlo::Value x, shlo::Value y);
shlo::Value logical_not(shlo::Builder& b, shlo::Value x);

// ---- constants
// v in like's dtype, splat to like's shape.
shlo::Value constant_like(shlo::Builder& b, double v, const shlo::Value& like);
// x <dir> y (same shapes and dtypes; no NaN or complex rules), and x <dir> v
// for v a constant in x's dtype.
shlo::Value compare_to(shlo::Builder& b, shlo::Cmp dir, shlo::Value x, shlo::Value y);
shlo::Value compare_to(shlo::Builder& b, shlo::Cmp dir, shlo::Value x, double v);
// Elementwise x != x.
shlo::Value is_nan(shlo::Builder& b, shlo::Value x);

// ---- complex parts
// The dtype of a complex dtype's parts (f32 for c64, f64 for c128), and the
// complex dtype with parts of dtype t (c128 for f64 or c128, else c64).
shlo::DType real_of(shlo::DType t);
shlo::DType complex_of(shlo::DType t);
// A complex x's real and imaginary parts; its modulus |x|.
shlo::Value real_part(shlo::Builder& b, shlo::Value x);
shlo::Value imag_part(shlo::Builder& b, shlo::Value x);
shlo::Value modulus(shlo::Builder& b, shlo::Value x);
// e^x; for complex x with C's special values (C99 Annex G, as PyTorch's
// CPU kernels): e^(-inf + i*y) is a signed zero and e^(+inf + i*y) is
// (inf, NaN) for an infinite or NaN y, where XLA gives NaN parts.
shlo::Value exponential(shlo::Builder& b, shlo::Value x);
// The complex value re + i*im (parts of one dtype and shape).
shlo::Value make_complex(shlo::Builder& b, shlo::Value re, shlo::Value im);

// ---- dimension lists
// 0, 1, ..., rank - 1: the dimensions of a reduction over every element.
std::vector<int64_t> all_dims(int64_t rank);

// ---- summaries of index values (read back or checked on the host)
// [min, max] of an integer value as s64[2] (bounds check of device indices).
shlo::Value index_bounds(shlo::Builder& b, shlo::Value idx);
// The number of nonzero elements of x as a 0-d s64.
shlo::Value count_true(shlo::Builder& b, shlo::Value x);

// ---- the reductions of scatter_reduce / index_reduce
enum class ReduceKind { Sum, Prod, Mean, Amax, Amin };
// PyTorch's name of a reduction ("sum", "prod", "mean", "amax", "amin");
// any other name is Sum.
ReduceKind reduce_kind(std::string_view name);

}  // namespace ops
