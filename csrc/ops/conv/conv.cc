// Convolution lowerings: forward, transposed and the three gradients, all
// expressed as one general stablehlo.convolution (see conv.h).
#include "ops/conv/conv.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "ops/common/lowering.h"
#include "ops/linalg/linalg.h"

namespace ops {

namespace {

using shlo::DType;
using shlo::Shape;
using V = std::vector<int64_t>;

std::string pad_attr(const V& lo, const V& hi) {
  std::string s = "dense<[";
  for (size_t i = 0; i < lo.size(); ++i) {
    if (i) s += ", ";
    s += "[" + std::to_string(lo[i]) + ", " + std::to_string(hi[i]) + "]";
  }
  return s + "]> : tensor<" + std::to_string(lo.size()) + "x2xi64>";
}

// One stablehlo.convolution. swap_lhs: lhs is [f, b, ...] (not [b, f]);
// swap_rhs: rhs is [i, o, ...]; swap_out: result is [f, b, ...]. Padding may
// be negative: it is applied as zero and the extra outputs sliced off, which
// is exact where it is used (negative low padding only with unit window
// strides). The result stays in the accumulation dtype.
Value conv_general(Builder& b, Value lhs, Value rhs, bool swap_lhs, bool swap_rhs, bool swap_out, const V& strides,
                   const V& lo, const V& hi, const V& lhs_dil, const V& rhs_dil, int64_t fgc, int64_t bgc) {
  const size_t n = strides.size();
  V clo(n), chi(n), out_sp(n), start(n), limit(n), ones(n, 1);
  Shape full;
  bool needs_slice = false;
  int64_t batch = lhs.shape()[swap_lhs ? 1 : 0] / bgc, feat = rhs.shape()[swap_rhs ? 1 : 0];
  Shape cshape = swap_out ? Shape{feat, batch} : Shape{batch, feat};
  for (size_t i = 0; i < n; ++i) {
    int64_t in = lhs.shape()[2 + i], k = rhs.shape()[2 + i];
    int64_t din = in == 0 ? 0 : (in - 1) * lhs_dil[i] + 1, dk = (k - 1) * rhs_dil[i] + 1;
    auto count = [&](int64_t l, int64_t h) {
      int64_t span = din + l + h - dk;
      return span < 0 ? int64_t(0) : span / strides[i] + 1;
    };
    clo[i] = std::max<int64_t>(lo[i], 0);
    chi[i] = std::max<int64_t>(hi[i], 0);
    if (lo[i] < 0 && strides[i] != 1) throw std::invalid_argument("conv: negative low padding needs unit strides");
    out_sp[i] = count(lo[i], hi[i]);
    int64_t c = count(clo[i], chi[i]);
    start[i] = lo[i] < 0 ? -lo[i] : 0;
    limit[i] = start[i] + out_sp[i];
    if (c != out_sp[i]) needs_slice = true;
    cshape.push_back(c);
  }
  std::string sp;
  for (size_t i = 0; i < n; ++i) sp += ", " + std::to_string(i);
  std::string dn = std::string("dimension_numbers = #stablehlo.conv<[") + (swap_lhs ? "f, b" : "b, f") + sp + "]x[" +
                   (swap_rhs ? "i, o" : "o, i") + sp + "]->[" + (swap_out ? "f, b" : "b, f") + sp + "]>";
  std::string attrs = "batch_group_count = " + std::to_string(bgc) + " : i64, " + dn +
                      ", feature_group_count = " + std::to_string(fgc) +
                      " : i64, lhs_dilation = " + shlo::i64_array(lhs_dil) + ", padding = " + pad_attr(clo, chi) +
                      ", precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]" +
                      ", rhs_dilation = " + shlo::i64_array(rhs_dil) + ", window_strides = " + shlo::i64_array(strides);
  Value r = b.op1(hlo::kConvolution, {lhs, rhs}, shlo::Type{accumulate_dtype(lhs.dtype()), cshape}, attrs);
  if (!needs_slice) return r;
  Shape st{0, 0}, lim{cshape[0], cshape[1]}, step(n + 2, 1);
  for (size_t i = 0; i < n; ++i) {
    st.push_back(start[i]);
    lim.push_back(limit[i]);
  }
  return b.slice(r, st, lim, step);
}

V spatial(const Shape& s) { return V(s.begin() + 2, s.end()); }

// conv_transpose(x [N, C, s...], w [C, O/g, k...]) in the accumulation dtype.
Value transpose_conv(Builder& b, Value x, Value w, const ConvParams& p) {
  const int64_t n = x.rank() - 2, g = p.groups;
  const Shape& ws = w.shape();
  V dims(n);
  for (int64_t i = 0; i < n; ++i) dims[i] = 2 + i;
  // Flip the window and regroup [C, O/g] as [O, C/g]: the transpose of a
  // grouped conv is a grouped conv with each group's kernel transposed.
  Value k = b.reverse(w, dims);
  if (g == 1) {
    k = b.transpose(k, [&] {
      V perm{1, 0};
      for (int64_t i = 0; i < n; ++i) perm.push_back(2 + i);
      return perm;
    }());
  } else {
    Shape s5{g, ws[0] / g, ws[1]};
    for (int64_t i = 0; i < n; ++i) s5.push_back(ws[2 + i]);
    k = b.reshape(k, s5);
    V perm{0, 2, 1};
    for (int64_t i = 0; i < n; ++i) perm.push_back(3 + i);
    k = b.transpose(k, perm);
    Shape s4{g * ws[1], ws[0] / g};
    for (int64_t i = 0; i < n; ++i) s4.push_back(ws[2 + i]);
    k = b.reshape(k, s4);
  }
  V lo(n), hi(n), ones(n, 1);
  for (int64_t i = 0; i < n; ++i) {
    int64_t ext = p.dilation[i] * (ws[2 + i] - 1);
    lo[i] = ext - p.padding[i];
    hi[i] = ext - p.padding[i] + p.output_padding[i];
  }
  return conv_general(b, x, k, false, false, false, ones, lo, hi, p.stride, p.dilation, g, 1);
}

// conv(x [N, C, s...], w [O, C/g, k...]) in the accumulation dtype.
Value plain_conv(Builder& b, Value x, Value w, const ConvParams& p) {
  const size_t n = p.stride.size();
  return conv_general(b, x, w, false, false, false, p.stride, p.padding, p.padding, V(n, 1), p.dilation, p.groups, 1);
}

// d loss / d w of plain conv(x, w) -> gy, w [O, C/g, k...]: correlates x
// with gy, channels as the batch, batch as the contraction; groups become
// batch groups.
Value weight_grad(Builder& b, Value x, Value gy, const V& ksize, const ConvParams& p) {
  const size_t n = ksize.size();
  V hi(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t in = x.shape()[2 + i], out = gy.shape()[2 + i];
    hi[i] = (ksize[i] - 1) * p.dilation[i] + (out - 1) * p.stride[i] + 1 - in - p.padding[i];
  }
  return conv_general(b, x, gy, true, true, true, p.dilation, p.padding, hi, V(n, 1), p.stride, 1, p.groups);
}

Value fit(Builder& b, Value r, const Shape& shape) {
  if (r.shape() == shape) return r;
  return b.slice(r, Shape(shape.size(), 0), shape, Shape(shape.size(), 1));
}

}  // namespace

Shape conv_output_shape(const Shape& in, const Shape& w, const ConvParams& p) {
  Shape out{in[0], p.transposed ? w[1] * p.groups : w[0]};
  for (size_t i = 0; i + 2 < in.size(); ++i) {
    int64_t dk = p.dilation[i] * (w[2 + i] - 1);
    if (p.transposed)
      out.push_back((in[2 + i] - 1) * p.stride[i] - 2 * p.padding[i] + dk + p.output_padding[i] + 1);
    else
      out.push_back((in[2 + i] + 2 * p.padding[i] - dk - 1) / p.stride[i] + 1);
  }
  return out;
}

Value conv_forward(Builder& b, Value input, Value weight, const Value* bias, const ConvParams& p) {
  Value r = p.transposed ? transpose_conv(b, input, weight, p) : plain_conv(b, input, weight, p);
  if (bias) {
    Value bb = b.broadcast_in_dim(b.convert(*bias, r.dtype()), r.shape(), {1});
    r = b.add(r, bb);
  }
  return b.convert(r, input.dtype());
}

Value conv_grad_input(Builder& b, Value gy, Value w, const Shape& in_shape, const ConvParams& p) {
  const size_t n = p.stride.size();
  Value r;
  if (p.transposed) {
    r = fit(b, plain_conv(b, gy, w, p), in_shape);
  } else {
    // The input gradient of a conv is the transposed conv with the output
    // padding that restores the input's size.
    ConvParams q = p;
    q.output_padding.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      int64_t base =
          (gy.shape()[2 + i] - 1) * p.stride[i] - 2 * p.padding[i] + p.dilation[i] * (w.shape()[2 + i] - 1) + 1;
      q.output_padding[i] = in_shape[2 + i] - base;
    }
    r = transpose_conv(b, gy, w, q);
  }
  return b.convert(r, gy.dtype());
}

Value conv_grad_weight(Builder& b, Value gy, Value x, const Shape& w_shape, const ConvParams& p) {
  V ksize = spatial(w_shape);
  // A transposed conv is the input gradient of a plain conv from gy to x
  // with the same weight, so its weight gradient swaps the roles.
  Value r = p.transposed ? weight_grad(b, gy, x, ksize, p) : weight_grad(b, x, gy, ksize, p);
  return b.convert(r, gy.dtype());
}

Value conv_grad_bias(Builder& b, Value gy) {
  DType acc = accumulate_dtype(gy.dtype());
  V dims{0};
  for (int64_t i = 2; i < gy.rank(); ++i) dims.push_back(i);
  Value s = b.reduce(b.convert(gy, acc), b.zero(acc), dims, "add");
  return b.convert(s, gy.dtype());
}

}  // namespace ops
