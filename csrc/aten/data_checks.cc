// Deferred checks of tensor values (see data_checks.h).
#include "aten/data_checks.h"

#include "aten/structured.h"
#include "aten/tensor.h"
#include "engine/checks.h"
#include "ops/checks/checks.h"

namespace tpu {

namespace {

using Vals = std::vector<shlo::Value>;

}  // namespace

void check_first_in_range(const at::Tensor& t, int64_t lo, int64_t hi, std::optional<int64_t> skip,
                          std::function<void(int64_t)> fail) {
  int64_t n = t.numel();
  if (n == 0) return;
  if (t.device().is_cpu()) {
    at::Tensor l = t.to(at::kLong).contiguous();
    const int64_t* v = l.const_data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i)
      if ((v[i] < lo || v[i] >= hi) && (!skip || v[i] != *skip)) fail(v[i]);
    return;
  }
  // With no skip value, lo itself never matches an element outside. The
  // bounds are constants of the program (a model uses one class count and
  // ignore_index): no operand uploads on the per-step path.
  engine::Ref r = op1(
      "first_outside", {read(t)}, shlo::Type{shlo::DType::S64, {2}},
      [](shlo::Builder& b, const Vals& in, int64_t lo, int64_t hi, int64_t sk) {
        return Vals{ops::first_outside(b, in[0], lo, hi, sk)};
      },
      lo, hi, skip.value_or(lo));
  engine::defer_check(r, [n, fail = std::move(fail)](const std::vector<int64_t>& a) {
    if (a[0] < n) fail(a[1]);
  });
}

void check_all_within(const at::Tensor& t, double lo, double hi, std::function<void()> fail) {
  int64_t n = t.numel();
  if (n == 0) return;
  if (t.device().is_cpu()) {
    at::Tensor d = t.to(at::kDouble);
    if (!((d >= lo) & (d <= hi)).all().item<bool>()) fail();
    return;
  }
  shlo::DType dt = to_shlo(t.scalar_type());
  engine::Ref r =
      op1("first_outside_closed", {read(t), scalar_of(lo, dt), scalar_of(hi, dt)}, shlo::Type{shlo::DType::S64, {1}},
          [](shlo::Builder& b, const Vals& in) { return Vals{ops::first_outside_closed(b, in[0], in[1], in[2])}; });
  engine::defer_check(r, [n, fail = std::move(fail)](const std::vector<int64_t>& a) {
    if (a[0] < n) fail();
  });
}

void check_no_zero(const at::Tensor& t, at::ScalarType dt, std::function<void()> fail) {
  if (t.numel() == 0) return;
  if (t.device().is_cpu()) {
    if (t.to(dt).eq(0).any().item<bool>()) fail();
    return;
  }
  engine::Ref r = op1("any_zero", {read_as(t, to_shlo(dt))}, shlo::Type{shlo::DType::S64, {1}},
                      [](shlo::Builder& b, const Vals& in) {
                        int64_t n = shlo::numel(in[0].shape());
                        shlo::Value flat = b.reshape(in[0], {n});
                        shlo::Value zero = b.compare(shlo::Cmp::EQ, flat, b.constant(flat.dtype(), 0, {n}));
                        shlo::Value any = b.reduce(zero, b.constant(shlo::DType::PRED, 0), {0}, "or");
                        return Vals{b.reshape(b.convert(any, shlo::DType::S64), {1})};
                      });
  engine::defer_check(r, [fail = std::move(fail)](const std::vector<int64_t>& a) {
    if (a[0] != 0) fail();
  });
}

void check_probabilities(const at::Tensor& p, int64_t n_sample, bool replacement) {
  if (p.numel() == 0) return;
  int64_t rows = p.dim() == 1 ? 1 : p.size(0), cats = p.size(-1);
  engine::Ref r = op1(
      "probability_faults", {read(p)}, shlo::Type{shlo::DType::S64, {3}},
      [](shlo::Builder& b, const Vals& in, int64_t rows, int64_t cats) {
        return Vals{ops::probability_faults(b, b.reshape(in[0], {rows, cats}))};
      },
      rows, cats);
  // Without replacement or for one sample the CPU checks the whole tensor
  // first, then the row sums; otherwise its sampling loop checks each row's
  // entries in order and then that row's sum.
  bool whole_first = !replacement || n_sample == 1;
  engine::defer_check(r, [whole_first, rows, cats](const std::vector<int64_t>& a) {
    int64_t bad_at = a[0], bad_is_inf = a[1], zero_row = a[2], n = rows * cats;
    if (whole_first) {
      TORCH_CHECK(bad_at == n, "probability tensor contains either `inf`, `nan` or element < 0");
    } else if (bad_at < n && zero_row >= bad_at / cats) {
      TORCH_CHECK(bad_is_inf, "invalid multinomial distribution (encountering probability entry < 0)");
      TORCH_CHECK(false, "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
    }
    TORCH_CHECK(zero_row == rows, "invalid multinomial distribution (sum of probabilities <= 0)");
  });
}

}  // namespace tpu
