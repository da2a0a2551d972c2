// Grouped row products on the host (see grouped_rows_host.h).
#include "ops/linalg/grouped_rows_host.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

namespace ops {

shlo::Value grouped_rows_host(shlo::Builder& b, shlo::Value x, shlo::Value counts, shlo::Value w) {
  const int64_t rows = x.shape()[0], cols = w.shape()[1] * w.shape()[3];
  return b.native_call(kGroupedRowsTarget, {x, counts, w}, {shlo::Type{shlo::DType::F32, {rows, cols}}})[0];
}

shlo::Value rows_host(shlo::Builder& b, shlo::Value x, shlo::Value w) {
  const shlo::Shape& s = w.shape();
  return grouped_rows_host(b, x, b.constant(shlo::DType::S32, static_cast<double>(x.shape()[0]), {1}),
                           b.reshape(w, {1, s[0], s[1], s[2]}));
}

namespace {

constexpr int kP = static_cast<int>(kHostPanel);
// Sixteen floats: one AVX-512 register, two AVX ones; the compiler splits it
// for narrower targets.
typedef float v16 __attribute__((vector_size(64)));
static_assert(kP == 32, "a panel is two v16 columns");

// R rows of x (row stride k) through one panel [k][kP]: y's kP columns
// from `col` (row stride n). The 2R accumulators stay in registers.
template <int R>
[[gnu::always_inline]] inline void panel_rows(const float* x, int64_t k, const float* panel, float* y, int64_t n,
                                              int64_t col) {
  v16 acc[R][2] = {};
  for (int64_t i = 0; i < k; ++i, panel += kP) {
    v16 w0, w1;
    std::memcpy(&w0, panel, sizeof w0);
    std::memcpy(&w1, panel + 16, sizeof w1);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const float s = x[r * k + i];
      acc[r][0] += s * w0;
      acc[r][1] += s * w1;
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    std::memcpy(y + r * n + col, &acc[r][0], sizeof(v16));
    std::memcpy(y + r * n + col + 16, &acc[r][1], sizeof(v16));
  }
}

template <int R>
[[gnu::always_inline]] inline void panel_tail(int rows, const float* x, int64_t k, const float* panel, float* y,
                                              int64_t n, int64_t col) {
  if constexpr (R > 1) {
    if (rows < R) return panel_tail<R - 1>(rows, x, k, panel, y, n, col);
  }
  panel_rows<R>(x, k, panel, y, n, col);
}

struct Problem {
  const float* x;
  const int32_t* counts;
  const float* w;
  float* y;
  int64_t rows, k, n, groups;
};

// Each group's rows, panel by panel (a panel stays in cache for all of the
// group's row blocks), in blocks of up to R rows.
template <int R>
[[gnu::always_inline]] inline void run(const Problem& p) {
  const int64_t panels = p.n / kP;
  int64_t start = 0;
  for (int64_t g = 0; g < p.groups && start < p.rows; ++g) {
    const int64_t c = std::min<int64_t>(std::max<int32_t>(p.counts[g], 0), p.rows - start);
    if (c == 0) continue;
    const float* wg = p.w + g * panels * p.k * kP;
    for (int64_t j = 0; j < panels; ++j)
      for (int64_t r = start; r < start + c; r += R)
        panel_tail<R>(static_cast<int>(std::min<int64_t>(R, start + c - r)), p.x + r * p.k, p.k, wg + j * p.k * kP,
                      p.y + r * p.n, p.n, j * kP);
    start += c;
  }
  std::fill(p.y + start * p.n, p.y + p.rows * p.n, 0.0f);
}

// One build per instruction set, chosen at run time: AVX-512 holds 8 rows'
// accumulators (16 registers), narrower sets 4.
__attribute__((target("avx512f"))) void run_avx512(const Problem& p) { run<8>(p); }
__attribute__((target("avx2,fma"))) void run_avx2(const Problem& p) { run<4>(p); }
void run_baseline(const Problem& p) { run<4>(p); }

using Runner = void (*)(const Problem&);
Runner pick_runner() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return run_avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return run_avx2;
  return run_baseline;
}

std::atomic<int64_t> g_calls{0};

}  // namespace

pjrt::ffi::Error* grouped_rows_handler(pjrt::ffi::CallFrame* frame) {
  using pjrt::ffi::DataType;
  if (pjrt::ffi::answer_metadata(frame) || frame->stage != pjrt::ffi::kExecuteStage) return nullptr;
  if (frame->args.size != 3 || frame->rets.size != 1)
    return pjrt::ffi::error(frame, std::string(kGroupedRowsTarget) + ": expects 3 operands and 1 result");
  pjrt::ffi::Buffer *x = pjrt::ffi::arg(frame, 0), *counts = pjrt::ffi::arg(frame, 1), *w = pjrt::ffi::arg(frame, 2),
                    *y = pjrt::ffi::ret(frame, 0);
  const bool shapes_fit = x->dtype == DataType::F32 && x->rank == 2 && counts->dtype == DataType::S32 &&
                          counts->rank == 1 && w->dtype == DataType::F32 && w->rank == 4 && w->dims[3] == kP &&
                          w->dims[0] == counts->dims[0] && w->dims[2] == x->dims[1] && y->dtype == DataType::F32 &&
                          y->rank == 2 && y->dims[0] == x->dims[0] && y->dims[1] == w->dims[1] * kP;
  if (!shapes_fit)
    return pjrt::ffi::error(
        frame, std::string(kGroupedRowsTarget) + ": expects f32 [R,K], s32 [G], f32 [G,N/32,K,32] -> f32 [R,N]");
  static const Runner runner = pick_runner();
  g_calls.fetch_add(1, std::memory_order_relaxed);
  runner(Problem{static_cast<const float*>(x->data), static_cast<const int32_t*>(counts->data),
                 static_cast<const float*>(w->data), static_cast<float*>(y->data), x->dims[0], x->dims[1], y->dims[1],
                 counts->dims[0]});
  return nullptr;
}

int64_t grouped_rows_host_calls() { return g_calls.load(std::memory_order_relaxed); }

}  // namespace ops
