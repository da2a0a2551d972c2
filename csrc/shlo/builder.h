// StableHLO builder: typed values and ops, printed as MLIR text in the
// generic op form (one printer for every op, stable across StableHLO
// versions). No torch here; ops/ turns PyTorch semantics into these calls.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace shlo {

enum class DType : uint8_t { PRED, S8, S16, S32, S64, U8, U16, U32, U64, F16, BF16, F32, F64, C64, C128 };

const char* dtype_name(DType t);  // MLIR element type: f32, i64, ui8, i1...
size_t dtype_size(DType t);
bool is_float(DType t);
bool is_complex(DType t);
bool is_signed_int(DType t);
bool is_unsigned_int(DType t);
inline bool is_int(DType t) { return is_signed_int(t) || is_unsigned_int(t); }

using Shape = std::vector<int64_t>;
int64_t numel(const Shape& s);

struct Type {
  DType dtype = DType::F32;
  Shape shape;
  std::string str() const;  // tensor<2x3xf32>
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  bool operator==(const Type& o) const { return dtype == o.dtype && shape == o.shape; }
};

struct Value {
  int id = -1;
  Type type;
  const Shape& shape() const { return type.shape; }
  DType dtype() const { return type.dtype; }
  int64_t rank() const { return type.rank(); }
};

enum class Cmp { EQ, NE, LT, LE, GT, GE };

class Builder;
// Builds the body of a region (reduce, sort, scatter...) from its block args.
using RegionFn = std::function<std::vector<Value>(Builder&, const std::vector<Value>&)>;

class Builder {
 public:
  // Adds a function argument (in call order).
  Value param(const Type& t);
  // Finishes the function with these results and returns the module text.
  // aliases: (param, result) pairs whose result may reuse the param's device
  // buffer (the caller donates that param when it runs the program).
  std::string finish(const std::vector<Value>& results, const std::vector<std::pair<int, int>>& aliases = {});
  // Attributes of the module itself, such as a replicated program's
  // "mhlo.num_replicas = 2 : i32" (comma-separated).
  void module_attributes(std::string attrs) { module_attrs_ = std::move(attrs); }

  // Generic op: "name"(operands) ({regions}) {attrs} : (in types) -> (out types)
  std::vector<Value> op(const std::string& name, const std::vector<Value>& operands, const std::vector<Type>& results,
                        const std::string& attrs = "", const std::vector<std::string>& regions = {});
  Value op1(const std::string& name, const std::vector<Value>& operands, const Type& result,
            const std::string& attrs = "") {
    return op(name, operands, {result}, attrs)[0];
  }
  // A region whose block takes `args`; fn emits the body, we add the return.
  std::string region(const std::vector<Type>& args, const RegionFn& fn);

  // ---- constants
  Value constant(DType t, double v, const Shape& shape = {});  // splat
  Value constant_i64(const std::vector<int64_t>& v);           // 1-D i64
  Value zero(DType t) { return constant(t, 0); }
  // Smallest / largest finite-or-infinite value of t (init for max / min).
  Value lowest(DType t);
  Value highest(DType t);

  // ---- elementwise (same shapes; callers broadcast first)
  Value unary(const char* name, Value x) { return op1(std::string("stablehlo.") + name, {x}, x.type); }
  // An integer "divide" or "remainder" never sees a zero divisor: the
  // compiler's constant folder would trap on one (SIGFPE in the process). A
  // zero divisor gives what XLA defines for it (all bits set; the dividend).
  Value binary(const char* name, Value a, Value b);
  Value add(Value a, Value b) { return binary("add", a, b); }
  Value sub(Value a, Value b) { return binary("subtract", a, b); }
  Value mul(Value a, Value b) { return binary("multiply", a, b); }
  Value div(Value a, Value b) { return binary("divide", a, b); }
  Value max(Value a, Value b) { return binary("maximum", a, b); }
  Value min(Value a, Value b) { return binary("minimum", a, b); }
  Value compare(Cmp dir, Value a, Value b);
  Value select(Value pred, Value on_true, Value on_false);
  Value clamp(Value lo, Value x, Value hi);
  Value convert(Value x, DType to);
  Value bitcast_convert(Value x, const Type& to);

  // ---- shape
  Value reshape(Value x, const Shape& shape);
  Value broadcast_in_dim(Value x, const Shape& shape, const std::vector<int64_t>& dims);
  // Broadcasts x (numpy rules, trailing alignment) to shape.
  Value broadcast_to(Value x, const Shape& shape);
  Value transpose(Value x, const std::vector<int64_t>& perm);
  // The value and permutation a transpose was taken of, or null when v is
  // no transpose: a lowering that cares how an operand lies in memory looks
  // through it, as XLA folds a transposed operand into a dot.
  const std::pair<Value, std::vector<int64_t>>* transposed_from(Value v) const;
  // The value unchanged, but opaque to the compiler's rewrites: what is
  // computed before it is not merged with what is computed after it.
  Value barrier(Value x) { return op("stablehlo.optimization_barrier", {x}, {x.type})[0]; }
  Value slice(Value x, const Shape& start, const Shape& limit, const Shape& strides);
  Value dynamic_slice(Value x, const std::vector<Value>& starts, const Shape& sizes);
  Value dynamic_update_slice(Value x, Value update, const std::vector<Value>& starts);
  Value pad(Value x, Value pad_value, const Shape& lo, const Shape& hi, const Shape& interior);
  Value concatenate(const std::vector<Value>& xs, int64_t dim);
  Value iota(const Type& t, int64_t dim);
  Value reverse(Value x, const std::vector<int64_t>& dims);

  // ---- reductions and contractions
  // Reduces x over dims with a binary body ("add", "maximum", ...).
  Value reduce(Value x, Value init, const std::vector<int64_t>& dims, const char* body_op);
  std::vector<Value> reduce_multi(const std::vector<Value>& xs, const std::vector<Value>& inits,
                                  const std::vector<int64_t>& dims, const RegionFn& body);
  Value dot_general(Value a, Value b, const std::vector<int64_t>& lhs_batch, const std::vector<int64_t>& rhs_batch,
                    const std::vector<int64_t>& lhs_contract, const std::vector<int64_t>& rhs_contract, DType out);

  // ---- data movement
  Value gather(Value x, Value indices, const std::vector<int64_t>& offset_dims,
               const std::vector<int64_t>& collapsed_slice_dims, const std::vector<int64_t>& start_index_map,
               int64_t index_vector_dim, const Shape& slice_sizes, const Shape& out_shape,
               const std::vector<int64_t>& operand_batching_dims = {},
               const std::vector<int64_t>& start_indices_batching_dims = {});
  // body_op empty: replace; otherwise combine with "add", "maximum"...
  Value scatter(Value x, Value indices, Value updates, const std::vector<int64_t>& update_window_dims,
                const std::vector<int64_t>& inserted_window_dims,
                const std::vector<int64_t>& scatter_dims_to_operand_dims, int64_t index_vector_dim,
                const std::string& body_op, const std::vector<int64_t>& input_batching_dims = {},
                const std::vector<int64_t>& scatter_indices_batching_dims = {});
  // Stable sort of xs along dim, ordered by a comparator on the block args
  // (2 per operand: lhs_i, rhs_i).
  std::vector<Value> sort(const std::vector<Value>& xs, int64_t dim, const RegionFn& comparator);
  // (new_state, random bits of shape/dtype t) from a u64[2] state.
  std::pair<Value, Value> rng_bit_generator(Value state, const Type& t);

  // ---- functions beside @main
  // Adds MLIR text defining functions (func.func ..., symbols the caller
  // made unique) to the module, printed after @main. Text added again under
  // the same key is skipped, so a program calling one foreign module from
  // several nodes defines its functions once.
  void add_functions(const std::string& key, const std::string& text);
  // "func.call" of a function of this module (one added above).
  std::vector<Value> call(const std::string& callee, const std::vector<Value>& operands,
                          const std::vector<Type>& results);
  // A native function the runtime registered under `target` (typed FFI
  // custom call, pjrt/ffi.h), without side effects.
  std::vector<Value> native_call(const std::string& target, const std::vector<Value>& operands,
                                 const std::vector<Type>& results);

  int next_id() { return next_id_++; }

 private:
  std::string& out() { return blocks_.back(); }
  std::vector<Type> params_;
  std::string module_attrs_;
  std::vector<std::string> blocks_{std::string()};
  std::vector<std::pair<std::string, std::string>> functions_;  // (key, text), in order added
  int next_id_ = 0;
  std::unordered_map<int, std::pair<Value, std::vector<int64_t>>> transposes_;  // by result id
  int indent_ = 2;
};

// Helpers for attribute text.
std::string i64_array(const std::vector<int64_t>& v);  // array<i64: 1, 2>
std::string i64_list(const std::vector<int64_t>& v);   // [1, 2]

}  // namespace shlo
