// Lowerings of GradScaler's native ops (see amp.h).
#include "ops/amp/amp.h"

#include "ops/common/lowering.h"
#include "ops/elementwise/elementwise.h"

namespace ops {

using shlo::Builder;
using shlo::DType;
using shlo::Value;

namespace {

Value any_non_finite(Builder& b, Value x) {
  Value finite = b.op1(hlo::kIsFinite, {x}, shlo::Type{DType::PRED, x.shape()});
  Value bad = logical_not(b, finite);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x.rank(); ++d) dims.push_back(d);
  return dims.empty() ? bad : b.reduce(bad, b.constant(DType::PRED, 0), dims, "or");
}

}  // namespace

std::vector<Value> unscale_and_check(Builder& b, const std::vector<Value>& grads, Value found_inf, Value inv_scale) {
  Value inv = as_scalar(b, inv_scale);
  Value any = b.constant(DType::PRED, 0);
  std::vector<Value> out;
  for (const Value& g : grads) {
    DType c = opmath(g.dtype());
    Value x = convert(b, g, c);
    any = logical_or(b, any, any_non_finite(b, x));
    out.push_back(convert(b, b.mul(x, b.broadcast_to(convert(b, inv, c), x.shape())), g.dtype()));
  }
  Value found = as_scalar(b, found_inf);
  found = b.select(any, b.constant(found.dtype(), 1), found);
  out.push_back(b.reshape(found, found_inf.shape()));
  return out;
}

std::vector<Value> update_scale(Builder& b, Value scale, Value tracker, Value found_inf, Value growth, Value backoff,
                                Value interval) {
  Value s = as_scalar(b, scale), t = as_scalar(b, tracker), f = as_scalar(b, found_inf);
  Value inf = b.compare(shlo::Cmp::NE, f, b.zero(f.dtype()));
  Value zero_t = b.zero(t.dtype());
  Value successful = b.add(t, b.constant(t.dtype(), 1));
  Value grow = b.compare(shlo::Cmp::EQ, successful, interval);
  Value grown = b.mul(s, growth);
  Value grown_ok = b.op1(hlo::kIsFinite, {grown}, shlo::Type{DType::PRED, {}});
  Value ok_scale = b.select(grow, b.select(grown_ok, grown, s), s);
  Value ok_tracker = b.select(grow, zero_t, successful);
  Value new_s = b.select(inf, b.mul(s, backoff), ok_scale);
  Value new_t = b.select(inf, zero_t, ok_tracker);
  return {b.reshape(new_s, scale.shape()), b.reshape(new_t, tracker.shape())};
}

}  // namespace ops
