// Grouped row products on the host (see grouped_rows_host.h).
#include "ops/linalg/grouped_rows_host.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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

// Consecutive panels of one group, for all of its rows: the unit of work
// the pool's threads share.
struct Piece {
  int64_t start, rows, group, first_panel, panels;
};

// A piece's panels one by one (a panel stays in cache for all of the
// group's row blocks), in blocks of up to R rows.
template <int R>
[[gnu::always_inline]] inline void run(const Problem& p, const Piece& s) {
  const float* wg = p.w + s.group * (p.n / kP) * p.k * kP;
  for (int64_t j = s.first_panel; j < s.first_panel + s.panels; ++j)
    for (int64_t r = s.start; r < s.start + s.rows; r += R)
      panel_tail<R>(static_cast<int>(std::min<int64_t>(R, s.start + s.rows - r)), p.x + r * p.k, p.k, wg + j * p.k * kP,
                    p.y + r * p.n, p.n, j * kP);
}

// One build per instruction set, chosen at run time: AVX-512 holds 8 rows'
// accumulators (16 registers), narrower sets 4.
__attribute__((target("avx512f"))) void run_avx512(const Problem& p, const Piece& s) { run<8>(p, s); }
__attribute__((target("avx2,fma"))) void run_avx2(const Problem& p, const Piece& s) { run<4>(p, s); }
void run_baseline(const Problem& p, const Piece& s) { run<4>(p, s); }

using Runner = void (*)(const Problem&, const Piece&);
Runner pick_runner() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return run_avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return run_avx2;
  return run_baseline;
}

// Multiply-adds per piece (~10 us of one core), and the fewest for which a
// product is worth waking the pool's other threads.
constexpr int64_t kPieceMacs = int64_t{1} << 19;
constexpr int64_t kParallelMacs = int64_t{1} << 21;

std::atomic<int64_t> g_calls{0}, g_pieces_elsewhere{0};

// A product's pieces, taken one at a time by whichever thread comes next;
// shared with the pool's tasks, which may start after the product is done.
struct Work {
  Problem p;
  Runner run;
  std::vector<Piece> pieces;
  std::atomic<size_t> next{0}, done{0};

  size_t drain() {
    size_t ran = 0;
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < pieces.size(); ++ran) {
      run(p, pieces[i]);
      done.fetch_add(1, std::memory_order_release);
    }
    return ran;
  }
};

void helper(void* data) {
  auto* work = static_cast<std::shared_ptr<Work>*>(data);
  g_pieces_elsewhere.fetch_add(static_cast<int64_t>((*work)->drain()), std::memory_order_relaxed);
  delete work;
}

// Splits each group's panels into pieces; zeros the rows past the last
// group. Returns the multiply-adds of all pieces.
int64_t split(Work& w) {
  const Problem& p = w.p;
  const int64_t panels = p.n / kP;
  int64_t start = 0, macs = 0;
  for (int64_t g = 0; g < p.groups && start < p.rows; ++g) {
    const int64_t c = std::min<int64_t>(std::max<int32_t>(p.counts[g], 0), p.rows - start);
    if (c == 0) continue;
    const int64_t per = std::max<int64_t>(1, kPieceMacs / std::max<int64_t>(1, c * p.k * kP));
    for (int64_t j = 0; j < panels; j += per) w.pieces.push_back({start, c, g, j, std::min(per, panels - j)});
    macs += c * p.k * p.n;
    start += c;
  }
  std::fill(p.y + start * p.n, p.y + p.rows * p.n, 0.0f);
  return macs;
}

}  // namespace

pjrt::ffi::Error* grouped_rows_handler(pjrt::ffi::CallFrame* frame) {
  using pjrt::ffi::DataType;
  if (pjrt::ffi::idle(frame)) return nullptr;
  if (!pjrt::ffi::arity_is(frame, 3, 1))
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
  auto work = std::make_shared<Work>();
  work->p = Problem{static_cast<const float*>(x->data),
                    static_cast<const int32_t*>(counts->data),
                    static_cast<const float*>(w->data),
                    static_cast<float*>(y->data),
                    x->dims[0],
                    x->dims[1],
                    y->dims[1],
                    counts->dims[0]};
  work->run = runner;
  const int64_t macs = split(*work);
  // The pool's other threads take pieces too, as XLA's own products split
  // over them; this thread waits only for pieces a helper has started.
  const int64_t helpers = macs < kParallelMacs ? 0
                                               : std::min<int64_t>(pjrt::ffi::host_pool_threads() - 1,
                                                                   static_cast<int64_t>(work->pieces.size()) - 1);
  for (int64_t i = 0; i < helpers; ++i) {
    auto* share = new std::shared_ptr<Work>(work);
    if (!pjrt::ffi::schedule(frame, helper, share)) {
      delete share;
      break;
    }
  }
  work->drain();
  while (work->done.load(std::memory_order_acquire) < work->pieces.size()) std::this_thread::yield();
  return nullptr;
}

int64_t grouped_rows_host_calls() { return g_calls.load(std::memory_order_relaxed); }
int64_t grouped_rows_host_pieces_elsewhere() { return g_pieces_elsewhere.load(std::memory_order_relaxed); }

}  // namespace ops
