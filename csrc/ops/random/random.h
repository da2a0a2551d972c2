// Random distributions and range factories as StableHLO. Random bits come
// from stablehlo.rng_bit_generator driven by a runtime u64[2] state operand,
// so one compiled program serves every seed and every call; this file shapes
// those bits into PyTorch's distributions. Scalar parameters (from, to, p,
// mean, std...) are 0-d operands, never constants. No torch here.
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include "shlo/builder.h"

namespace ops {

using shlo::Builder;
using shlo::DType;
using shlo::Shape;
using shlo::Value;

// The u64[2] rng state of one random op from its generator's (seed, call
// counter). Hashed so that consecutive counters give unrelated streams
// whatever algorithm the plugin's DEFAULT rng_bit_generator uses.
std::array<uint64_t, 2> random_state(uint64_t seed, uint64_t counter);

// The dtype a distribution for `out` is computed in: F64 for F64, else F32
// (half types are generated in f32 and converted once).
DType random_compute_dtype(DType out);
// Random mantissa bits PyTorch uses for uniform floats of dtype t
// (24 for f32, 53 for f64, 11 for f16, 8 for bf16).
int random_digits(DType t);

// Raw random bits (U32 or U64) of `shape`.
Value random_bits(Builder& b, Value state, const Shape& shape, DType bits);

enum class Interval { ClosedOpen, OpenClosed, Open };  // [0,1), (0,1], (0,1)
// Uniform floats of dtype c (F32 or F64) on the unit interval, carrying
// `digits` random bits: every value is k * 2^-digits (+ 2^-digits / 2 for
// Open), so the interval's excluded ends are never hit.
Value unit_uniform(Builder& b, Value state, const Shape& shape, DType c, int digits, Interval iv);
// Standard normal floats of dtype c (Box-Muller).
Value standard_normal(Builder& b, Value state, const Shape& shape, DType c);

// Complex values from a [2, shape...] float value: row 0 real, row 1
// imaginary (complex random fills draw both parts like a real [..., 2]).
Value complex_from_parts(Builder& b, Value parts);

// ---- distributions. Parameters are 0-d (or already out-shaped) values of
// random_compute_dtype(out.dtype) unless said otherwise.

// Uniform on [from, to): a value that rounds up to `to` becomes `from`.
Value uniform(Builder& b, Value state, Value from, Value to, const shlo::Type& out);
// mean + std * N(0, 1); mean and std broadcast (numpy rules) to out.
Value normal(Builder& b, Value state, Value mean, Value std, const shlo::Type& out);
Value log_normal(Builder& b, Value state, Value mean, Value std, const shlo::Type& out);
// Integers (bits % range) + from, as PyTorch's random_: from is an S64
// 0-d value, range an S64 0-d value holding the unsigned range's bits;
// bits64 picks 64 random bits per element instead of 32.
Value random_int(Builder& b, Value state, Value from, Value range, const shlo::Type& out, bool bits64);
// Every int64 equally likely (random_(from=int64 min, to=None)).
Value random_full_range(Builder& b, Value state, const shlo::Type& out);
// 1 with probability p (p broadcast to out; any float dtype), else 0.
Value bernoulli(Builder& b, Value state, Value p, const shlo::Type& out);
Value exponential(Builder& b, Value state, Value lambda, const shlo::Type& out);
Value geometric(Builder& b, Value state, Value p, const shlo::Type& out);
Value cauchy(Builder& b, Value state, Value median, Value sigma, const shlo::Type& out);

// native_dropout in training: mask keeps each element with probability p1m
// (a 0-d of x's compute dtype); out = x * mask * scale. Returns (out, mask
// as PRED).
std::pair<Value, Value> dropout(Builder& b, Value state, Value x, Value p1m, Value scale);
// grad * mask * scale (scale: 0-d of grad's compute dtype).
Value dropout_backward(Builder& b, Value grad, Value mask, Value scale);

// A random permutation of 0..n-1 (sorting random 64-bit keys), as `out`.
Value randperm(Builder& b, Value state, int64_t n, DType out);
// n samples per row of probs [rows, categories] (any float dtype; need not
// be normalized) as S64 [rows, n]: argmax / top-n of probs / Exp(1) noise.
Value multinomial(Builder& b, Value state, Value probs, int64_t n, bool replacement);

}  // namespace ops
