#include "shlo/builder.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace shlo {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::PRED:
      return "i1";
    case DType::S8:
      return "i8";
    case DType::S16:
      return "i16";
    case DType::S32:
      return "i32";
    case DType::S64:
      return "i64";
    case DType::U8:
      return "ui8";
    case DType::U16:
      return "ui16";
    case DType::U32:
      return "ui32";
    case DType::U64:
      return "ui64";
    case DType::F16:
      return "f16";
    case DType::BF16:
      return "bf16";
    case DType::F32:
      return "f32";
    case DType::F64:
      return "f64";
    case DType::C64:
      return "complex<f32>";
    case DType::C128:
      return "complex<f64>";
  }
  return "?";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::PRED:
    case DType::S8:
    case DType::U8:
      return 1;
    case DType::S16:
    case DType::U16:
    case DType::F16:
    case DType::BF16:
      return 2;
    case DType::S32:
    case DType::U32:
    case DType::F32:
      return 4;
    case DType::S64:
    case DType::U64:
    case DType::F64:
    case DType::C64:
      return 8;
    case DType::C128:
      return 16;
  }
  return 0;
}

bool is_float(DType t) { return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64; }
bool is_complex(DType t) { return t == DType::C64 || t == DType::C128; }
bool is_signed_int(DType t) { return t == DType::S8 || t == DType::S16 || t == DType::S32 || t == DType::S64; }
bool is_unsigned_int(DType t) { return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64; }

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string Type::str() const {
  std::string s = "tensor<";
  for (int64_t d : shape) s += std::to_string(d) + "x";
  return s + dtype_name(dtype) + ">";
}

std::string i64_list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string i64_array(const std::vector<int64_t>& v) {
  std::string s = "array<i64";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : ": ") + std::to_string(v[i]);
  return s + ">";
}

namespace {

std::string name(const Value& v) { return "%" + std::to_string(v.id); }

std::string type_list(const std::vector<Type>& ts, bool parens_for_one) {
  if (ts.size() == 1 && !parens_for_one) return ts[0].str();
  std::string s = "(";
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + ts[i].str();
  return s + ")";
}

std::string hex(uint64_t bits, int digits) {
  static const char* d = "0123456789ABCDEF";
  std::string s = "0x";
  for (int i = digits - 1; i >= 0; --i) s += d[(bits >> (4 * i)) & 0xF];
  return s;
}

uint32_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

uint16_t bf16_bits(float f) {
  uint32_t b = f32_bits(f);
  if (std::isnan(f)) return 0x7FC0;
  b += 0x7FFF + ((b >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(b >> 16);
}

uint16_t f16_bits(float f) {
  uint32_t x = f32_bits(f);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xFF) - 127 + 15;
  uint32_t mant = x & 0x7FFFFF;
  if (((x >> 23) & 0xFF) == 0xFF) return sign | 0x7C00 | (mant ? 0x200 : 0);
  if (exp >= 31) return sign | 0x7C00;
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant |= 0x800000;
    int shift = 14 - exp;
    uint32_t half = 1u << (shift - 1);
    uint32_t r = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    if (rem > half || (rem == half && (r & 1))) ++r;
    return sign | r;
  }
  uint32_t r = (exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) ++r;
  return sign | r;
}

std::string literal(DType t, double v) {
  switch (t) {
    case DType::PRED:
      return v != 0 ? "true" : "false";
    case DType::F32:
      return hex(f32_bits(static_cast<float>(v)), 8);
    case DType::BF16:
      return hex(bf16_bits(static_cast<float>(v)), 4);
    case DType::F16:
      return hex(f16_bits(static_cast<float>(v)), 4);
    case DType::F64: {
      uint64_t b;
      std::memcpy(&b, &v, 8);
      return hex(b, 16);
    }
    case DType::C64:
    case DType::C128: {
      // Both parts must be float literals: "(1.0e+00, 0.0e+00)".
      char buf[64];
      std::snprintf(buf, sizeof(buf), "(%.17e, 0.0e+00)", v);
      return buf;
    }
    default:
      if (is_unsigned_int(t)) return std::to_string(static_cast<uint64_t>(v));
      return std::to_string(static_cast<int64_t>(v));
  }
}

}  // namespace

Value Builder::param(const Type& t) {
  params_.push_back(t);
  return Value{next_id_++, t};
}

std::vector<Value> Builder::op(const std::string& opname, const std::vector<Value>& operands,
                               const std::vector<Type>& results, const std::string& attrs,
                               const std::vector<std::string>& regions) {
  std::vector<Value> outs;
  std::string& o = out();
  o.append(indent_, ' ');
  for (size_t i = 0; i < results.size(); ++i) {
    outs.push_back(Value{next_id_++, results[i]});
    o += (i ? ", " : "") + name(outs.back());
  }
  if (!results.empty()) o += " = ";
  o += "\"" + opname + "\"(";
  std::vector<Type> in_types;
  for (size_t i = 0; i < operands.size(); ++i) {
    o += (i ? ", " : "") + name(operands[i]);
    in_types.push_back(operands[i].type);
  }
  o += ")";
  if (!regions.empty()) {
    o += " (";
    for (size_t i = 0; i < regions.size(); ++i) o += (i ? ", " : "") + regions[i];
    o += ")";
  }
  if (!attrs.empty()) o += " {" + attrs + "}";
  o += " : " + type_list(in_types, true) + " -> " + type_list(results, results.size() != 1) + "\n";
  return outs;
}

std::string Builder::region(const std::vector<Type>& args, const RegionFn& fn) {
  std::vector<Value> vals;
  std::string head = "{\n" + std::string(indent_, ' ') + "^bb0(";
  for (size_t i = 0; i < args.size(); ++i) {
    vals.push_back(Value{next_id_++, args[i]});
    head += (i ? ", " : "") + name(vals.back()) + ": " + args[i].str();
  }
  head += "):\n";
  blocks_.push_back(head);
  indent_ += 2;
  std::vector<Value> rets = fn(*this, vals);
  std::vector<Type> rt;
  std::string r(indent_, ' ');
  r += "\"stablehlo.return\"(";
  for (size_t i = 0; i < rets.size(); ++i) {
    r += (i ? ", " : "") + name(rets[i]);
    rt.push_back(rets[i].type);
  }
  r += ") : " + type_list(rt, true) + " -> ()\n";
  out() += r;
  indent_ -= 2;
  std::string text = std::move(blocks_.back());
  blocks_.pop_back();
  return text + std::string(indent_, ' ') + "}";
}

std::string Builder::finish(const std::vector<Value>& results, const std::vector<std::pair<int, int>>& aliases) {
  std::string s = "module @torch_pjrt " + (module_attrs_.empty() ? "" : "attributes {" + module_attrs_ + "} ") +
                  "{\n  func.func public @main(";
  for (size_t i = 0; i < params_.size(); ++i) {
    s += (i ? ", " : "") + std::string("%") + std::to_string(i) + ": " + params_[i].str();
    for (const auto& [param, result] : aliases)
      if (param == static_cast<int>(i)) s += " {tf.aliasing_output = " + std::to_string(result) + " : i32}";
  }
  std::vector<Type> rt;
  for (const Value& v : results) rt.push_back(v.type);
  s += ") -> " + type_list(rt, true) + " {\n";
  s += blocks_.front();
  s += "    \"func.return\"(";
  for (size_t i = 0; i < results.size(); ++i) s += (i ? ", " : "") + name(results[i]);
  s += ") : " + type_list(rt, true) + " -> ()\n  }\n";
  for (const auto& f : functions_) s += f.second;
  return s + "}\n";
}

void Builder::add_functions(const std::string& key, const std::string& text) {
  for (const auto& f : functions_)
    if (f.first == key) return;
  std::string t = text;
  if (!t.empty() && t.back() != '\n') t += '\n';
  functions_.emplace_back(key, std::move(t));
}

std::vector<Value> Builder::call(const std::string& callee, const std::vector<Value>& operands,
                                 const std::vector<Type>& results) {
  return op("func.call", operands, results, "callee = @" + callee);
}

std::vector<Value> Builder::native_call(const std::string& target, const std::vector<Value>& operands,
                                        const std::vector<Type>& results) {
  return op(
      "stablehlo.custom_call", operands, results,
      "call_target_name = \"" + target + "\", api_version = 4 : i32, backend_config = {}, has_side_effect = false");
}

// ------------------------------------------------------------ constants

Value Builder::constant(DType t, double v, const Shape& shape) {
  Type ty{t, shape};
  return op1("stablehlo.constant", {}, ty, "value = dense<" + literal(t, v) + "> : " + ty.str());
}

Value Builder::constant_i64(const std::vector<int64_t>& v) {
  Type ty{DType::S64, {static_cast<int64_t>(v.size())}};
  return op1("stablehlo.constant", {}, ty, "value = dense<" + i64_list(v) + "> : " + ty.str());
}

Value Builder::lowest(DType t) {
  if (is_float(t)) return constant(t, -std::numeric_limits<double>::infinity());
  if (t == DType::PRED) return constant(t, 0);
  if (is_unsigned_int(t)) return constant(t, 0);
  int bits = static_cast<int>(dtype_size(t)) * 8;
  Type ty{t, {}};
  std::string v = bits == 64 ? "-9223372036854775808" : std::to_string(-(int64_t{1} << (bits - 1)));
  return op1("stablehlo.constant", {}, ty, "value = dense<" + v + "> : " + ty.str());
}

Value Builder::highest(DType t) {
  if (is_float(t)) return constant(t, std::numeric_limits<double>::infinity());
  if (t == DType::PRED) return constant(t, 1);
  int bits = static_cast<int>(dtype_size(t)) * 8;
  Type ty{t, {}};
  std::string v;
  if (is_unsigned_int(t))
    v = bits == 64 ? "18446744073709551615" : std::to_string((uint64_t{1} << bits) - 1);
  else
    v = bits == 64 ? "9223372036854775807" : std::to_string((int64_t{1} << (bits - 1)) - 1);
  return op1("stablehlo.constant", {}, ty, "value = dense<" + v + "> : " + ty.str());
}

// ------------------------------------------------------------ elementwise

Value Builder::compare(Cmp dir, Value a, Value b) {
  static const char* names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  std::string attrs =
      std::string("comparison_direction = #stablehlo<comparison_direction ") + names[static_cast<int>(dir)] + ">";
  if (is_float(a.dtype()))
    attrs += ", compare_type = #stablehlo<comparison_type FLOAT>";
  else if (is_unsigned_int(a.dtype()) || a.dtype() == DType::PRED)
    attrs += ", compare_type = #stablehlo<comparison_type UNSIGNED>";
  else if (is_signed_int(a.dtype()))
    attrs += ", compare_type = #stablehlo<comparison_type SIGNED>";
  return op1("stablehlo.compare", {a, b}, Type{DType::PRED, a.shape()}, attrs);
}

Value Builder::binary(const char* name, Value a, Value b) {
  const std::string n = name;
  if (!is_int(a.dtype()) || (n != "divide" && n != "remainder")) return op1("stablehlo." + n, {a, b}, a.type);
  Value zero = constant(a.dtype(), 0, b.shape());
  Value is0 = compare(Cmp::EQ, b, zero);
  Value r = op1("stablehlo." + n, {a, select(is0, constant(a.dtype(), 1, b.shape()), b)}, a.type);
  return select(is0, n == "divide" ? unary("not", zero) : a, r);
}

Value Builder::select(Value pred, Value t, Value f) { return op1("stablehlo.select", {pred, t, f}, t.type); }

Value Builder::clamp(Value lo, Value x, Value hi) { return op1("stablehlo.clamp", {lo, x, hi}, x.type); }

Value Builder::convert(Value x, DType to) {
  if (x.dtype() == to) return x;
  return op1("stablehlo.convert", {x}, Type{to, x.shape()});
}

Value Builder::bitcast_convert(Value x, const Type& to) { return op1("stablehlo.bitcast_convert", {x}, to); }

// ------------------------------------------------------------ shape

Value Builder::reshape(Value x, const Shape& shape) {
  if (x.shape() == shape) return x;
  return op1("stablehlo.reshape", {x}, Type{x.dtype(), shape});
}

Value Builder::broadcast_in_dim(Value x, const Shape& shape, const std::vector<int64_t>& dims) {
  bool identity = x.shape() == shape;
  for (size_t i = 0; identity && i < dims.size(); ++i) identity = dims[i] == static_cast<int64_t>(i);
  if (identity) return x;
  return op1("stablehlo.broadcast_in_dim", {x}, Type{x.dtype(), shape}, "broadcast_dimensions = " + i64_array(dims));
}

Value Builder::broadcast_to(Value x, const Shape& shape) {
  if (x.shape() == shape) return x;
  int64_t lead = static_cast<int64_t>(shape.size()) - x.rank();
  if (lead < 0) throw std::invalid_argument("broadcast_to: rank of operand exceeds target");
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (x.shape()[i] != 1 && x.shape()[i] != shape[lead + i])
      throw std::invalid_argument("broadcast_to: incompatible shapes");
    dims.push_back(lead + i);
  }
  return broadcast_in_dim(x, shape, dims);
}

Value Builder::transpose(Value x, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity) return x;
  Shape s;
  for (int64_t p : perm) s.push_back(x.shape()[p]);
  Value t = op1("stablehlo.transpose", {x}, Type{x.dtype(), s}, "permutation = " + i64_array(perm));
  transposes_.emplace(t.id, std::make_pair(x, perm));
  return t;
}

const std::pair<Value, std::vector<int64_t>>* Builder::transposed_from(Value v) const {
  auto it = transposes_.find(v.id);
  return it == transposes_.end() ? nullptr : &it->second;
}

Value Builder::slice(Value x, const Shape& start, const Shape& limit, const Shape& strides) {
  Shape s;
  bool identity = true;
  for (size_t i = 0; i < start.size(); ++i) {
    s.push_back((limit[i] - start[i] + strides[i] - 1) / strides[i]);
    identity &= start[i] == 0 && limit[i] == x.shape()[i] && strides[i] == 1;
  }
  if (identity) return x;
  return op1("stablehlo.slice", {x}, Type{x.dtype(), s},
             "start_indices = " + i64_array(start) + ", limit_indices = " + i64_array(limit) +
                 ", strides = " + i64_array(strides));
}

Value Builder::dynamic_slice(Value x, const std::vector<Value>& starts, const Shape& sizes) {
  std::vector<Value> in{x};
  in.insert(in.end(), starts.begin(), starts.end());
  return op1("stablehlo.dynamic_slice", in, Type{x.dtype(), sizes}, "slice_sizes = " + i64_array(sizes));
}

Value Builder::dynamic_update_slice(Value x, Value update, const std::vector<Value>& starts) {
  std::vector<Value> in{x, update};
  in.insert(in.end(), starts.begin(), starts.end());
  return op1("stablehlo.dynamic_update_slice", in, x.type);
}

Value Builder::pad(Value x, Value pv, const Shape& lo, const Shape& hi, const Shape& interior) {
  Shape s;
  for (size_t i = 0; i < lo.size(); ++i) {
    int64_t d = x.shape()[i];
    s.push_back(lo[i] + hi[i] + d + (d > 0 ? (d - 1) * interior[i] : 0));
  }
  return op1("stablehlo.pad", {x, pv}, Type{x.dtype(), s},
             "edge_padding_low = " + i64_array(lo) + ", edge_padding_high = " + i64_array(hi) +
                 ", interior_padding = " + i64_array(interior));
}

Value Builder::concatenate(const std::vector<Value>& xs, int64_t dim) {
  if (xs.size() == 1) return xs[0];
  Shape s = xs[0].shape();
  s[dim] = 0;
  for (const Value& x : xs) s[dim] += x.shape()[dim];
  return op1("stablehlo.concatenate", xs, Type{xs[0].dtype(), s}, "dimension = " + std::to_string(dim) + " : i64");
}

Value Builder::iota(const Type& t, int64_t dim) {
  return op1("stablehlo.iota", {}, t, "iota_dimension = " + std::to_string(dim) + " : i64");
}

Value Builder::reverse(Value x, const std::vector<int64_t>& dims) {
  return op1("stablehlo.reverse", {x}, x.type, "dimensions = " + i64_array(dims));
}

// ------------------------------------------------------------ reductions

std::vector<Value> Builder::reduce_multi(const std::vector<Value>& xs, const std::vector<Value>& inits,
                                         const std::vector<int64_t>& dims, const RegionFn& body) {
  std::vector<Type> args, outs;
  for (const Value& v : inits) args.push_back(Type{v.dtype(), {}});
  for (const Value& v : inits) args.push_back(Type{v.dtype(), {}});
  for (const Value& x : xs) {
    Shape s;
    for (int64_t i = 0; i < x.rank(); ++i) {
      bool reduced = false;
      for (int64_t d : dims) reduced |= d == i;
      if (!reduced) s.push_back(x.shape()[i]);
    }
    outs.push_back(Type{x.dtype(), s});
  }
  std::string r = region(args, body);
  std::vector<Value> in(xs);
  in.insert(in.end(), inits.begin(), inits.end());
  return op("stablehlo.reduce", in, outs, "dimensions = " + i64_array(dims), {r});
}

Value Builder::reduce(Value x, Value init, const std::vector<int64_t>& dims, const char* body_op) {
  std::string opname = std::string("stablehlo.") + body_op;
  return reduce_multi({x}, {init}, dims, [&](Builder& b, const std::vector<Value>& a) {
    return std::vector<Value>{b.op1(opname, {a[0], a[1]}, a[0].type)};
  })[0];
}

Value Builder::dot_general(Value a, Value b, const std::vector<int64_t>& lb, const std::vector<int64_t>& rb,
                           const std::vector<int64_t>& lc, const std::vector<int64_t>& rc, DType out_t) {
  auto contains = [](const std::vector<int64_t>& v, int64_t x) {
    for (int64_t y : v)
      if (y == x) return true;
    return false;
  };
  Shape s;
  for (int64_t d : lb) s.push_back(a.shape()[d]);
  for (int64_t i = 0; i < a.rank(); ++i)
    if (!contains(lb, i) && !contains(lc, i)) s.push_back(a.shape()[i]);
  for (int64_t i = 0; i < b.rank(); ++i)
    if (!contains(rb, i) && !contains(rc, i)) s.push_back(b.shape()[i]);
  std::string dn = "dot_dimension_numbers = #stablehlo.dot<";
  std::vector<std::string> parts;
  if (!lb.empty()) parts.push_back("lhs_batching_dimensions = " + i64_list(lb));
  if (!rb.empty()) parts.push_back("rhs_batching_dimensions = " + i64_list(rb));
  parts.push_back("lhs_contracting_dimensions = " + i64_list(lc));
  parts.push_back("rhs_contracting_dimensions = " + i64_list(rc));
  for (size_t i = 0; i < parts.size(); ++i) dn += (i ? ", " : "") + parts[i];
  dn += ">";
  return op1("stablehlo.dot_general", {a, b}, Type{out_t, s}, dn);
}

// ------------------------------------------------------------ data movement

Value Builder::gather(Value x, Value indices, const std::vector<int64_t>& offset_dims,
                      const std::vector<int64_t>& collapsed, const std::vector<int64_t>& start_index_map,
                      int64_t index_vector_dim, const Shape& slice_sizes, const Shape& out_shape,
                      const std::vector<int64_t>& obd, const std::vector<int64_t>& sibd) {
  std::string dn = "dimension_numbers = #stablehlo.gather<offset_dims = " + i64_list(offset_dims) +
                   ", collapsed_slice_dims = " + i64_list(collapsed);
  if (!obd.empty())
    dn += ", operand_batching_dims = " + i64_list(obd) + ", start_indices_batching_dims = " + i64_list(sibd);
  dn += ", start_index_map = " + i64_list(start_index_map) +
        ", index_vector_dim = " + std::to_string(index_vector_dim) + ">";
  return op1("stablehlo.gather", {x, indices}, Type{x.dtype(), out_shape},
             dn + ", slice_sizes = " + i64_array(slice_sizes) + ", indices_are_sorted = false");
}

Value Builder::scatter(Value x, Value indices, Value updates, const std::vector<int64_t>& uwd,
                       const std::vector<int64_t>& iwd, const std::vector<int64_t>& sdod, int64_t index_vector_dim,
                       const std::string& body_op, const std::vector<int64_t>& ibd, const std::vector<int64_t>& sibd) {
  std::string dn = "scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = " + i64_list(uwd) +
                   ", inserted_window_dims = " + i64_list(iwd);
  if (!ibd.empty())
    dn += ", input_batching_dims = " + i64_list(ibd) + ", scatter_indices_batching_dims = " + i64_list(sibd);
  dn += ", scatter_dims_to_operand_dims = " + i64_list(sdod) +
        ", index_vector_dim = " + std::to_string(index_vector_dim) + ">";
  Type scalar{x.dtype(), {}};
  std::string r = region({scalar, scalar}, [&](Builder& b, const std::vector<Value>& a) {
    if (body_op.empty()) return std::vector<Value>{a[1]};
    return std::vector<Value>{b.op1("stablehlo." + body_op, {a[0], a[1]}, scalar)};
  });
  return op("stablehlo.scatter", {x, indices, updates}, {x.type},
            dn + ", indices_are_sorted = false, unique_indices = false", {r})[0];
}

std::vector<Value> Builder::sort(const std::vector<Value>& xs, int64_t dim, const RegionFn& comparator) {
  std::vector<Type> args, outs;
  for (const Value& x : xs) {
    args.push_back(Type{x.dtype(), {}});
    args.push_back(Type{x.dtype(), {}});
    outs.push_back(x.type);
  }
  std::string r = region(args, comparator);
  return op("stablehlo.sort", xs, outs, "dimension = " + std::to_string(dim) + " : i64, is_stable = true", {r});
}

std::pair<Value, Value> Builder::rng_bit_generator(Value state, const Type& t) {
  auto r =
      op("stablehlo.rng_bit_generator", {state}, {state.type, t}, "rng_algorithm = #stablehlo<rng_algorithm DEFAULT>");
  return {r[0], r[1]};
}

}  // namespace shlo
