// softmax and log_softmax along `axis`: y = exp(x - peak) / sum(exp(x - peak)) and
// y = (x - peak) - log(sum(exp(x - peak))), with peak the maximum along the axis.
//
// The input is seen as [outer, extent, inner] around the axis.  A contiguous line
// (inner == 1) takes three passes: the peak; the exponentials (kept in the output, or in
// float scratch for float16/bfloat16) and their sum, in vector registers; then the result.
// With inner > 1 a tile of up to kTile neighbouring lines goes through the same passes
// together, each step working along one contiguous row of the tile, so every inner loop is
// contiguous and vectorises.  exp is exp_approx for float and std::exp for double.
//
// NaN needs no special case: the peak ignores it, and exp(NaN - peak) makes the sum NaN, so
// the whole line is NaN as in the reference (so is a line holding +inf, or only -inf).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "mskernel_cpu/axis.hpp"
#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/vector_math.hpp"

namespace mskernel_cpu {
namespace {

constexpr int64_t kTile = 256;

// The maximum of a contiguous line (NaN ignored).
template <class T, class C = compute_t<T>>
C line_peak(const T* x, int64_t n) {
  constexpr int width = lane_count<C>;
  C peak = -std::numeric_limits<C>::infinity();
  int64_t i = 0;
  if (n >= width) {
    lanes_t<C> best = load_lanes<C>(x);
    for (i = width; i + width <= n; i += width) {
      const lanes_t<C> v = load_lanes<C>(x + i);
      best = v > best ? v : best;
    }
    for (int l = 0; l < width; ++l) peak = larger(peak, best[l]);
  }
  for (; i < n; ++i) peak = larger(peak, load(x[i]));
  return peak;
}

template <bool Log, class T, class C = compute_t<T>>
void softmax_line(const T* x, T* y, C* e, int64_t n) {
  constexpr int width = lane_count<C>;
  const C peak = line_peak(x, n);
  lanes_t<C> lane_totals = {};
  int64_t i = 0;
  for (; i + width <= n; i += width) {
    const lanes_t<C> v = exp_of(load_lanes<C>(x + i) - peak);
    std::memcpy(e + i, &v, sizeof v);
    lane_totals += v;
  }
  C sum = lane_sum<C>(lane_totals);
  for (; i < n; ++i) {
    e[i] = exp_of(load(x[i]) - peak);
    sum += e[i];
  }
  if constexpr (Log) {
    const C log_sum = std::log(sum);
    for (int64_t k = 0; k < n; ++k) y[k] = convert<T>((load(x[k]) - peak) - log_sum);
  } else {
    const C scale = C(1) / sum;
    for (int64_t k = 0; k < n; ++k) y[k] = convert<T>(e[k] * scale);
  }
}

// `width` neighbouring lines of `extent` elements at distance `stride`.
template <bool Log, class T, class C = compute_t<T>>
void softmax_tile(const T* x, T* y, C* e, int64_t extent, int64_t stride, int64_t width) {
  C peak[kTile], total[kTile];
  std::fill(peak, peak + width, -std::numeric_limits<C>::infinity());
  std::fill(total, total + width, C(0));
  for (int64_t k = 0; k < extent; ++k) {
    const T* row = x + k * stride;
    for (int64_t j = 0; j < width; ++j) peak[j] = larger(peak[j], load(row[j]));
  }
  for (int64_t k = 0; k < extent; ++k) {
    const T* row = x + k * stride;
    C* e_row = e + k * stride;
    for (int64_t j = 0; j < width; ++j) {
      const C v = exp_of(load(row[j]) - peak[j]);
      if constexpr (!Log) e_row[j] = v;
      total[j] += v;
    }
  }
  for (int64_t j = 0; j < width; ++j) total[j] = Log ? std::log(total[j]) : C(1) / total[j];
  for (int64_t k = 0; k < extent; ++k) {
    const T* row = x + k * stride;
    const C* e_row = e + k * stride;
    T* y_row = y + k * stride;
    for (int64_t j = 0; j < width; ++j) {
      y_row[j] = convert<T>(Log ? (load(row[j]) - peak[j]) - total[j] : e_row[j] * total[j]);
    }
  }
}

template <bool Log>
Kernel softmax(KernelContext& ctx) {
  const AxisSplit s = split_axis(ctx.input(0).shape, ctx.attrs.get_int("axis"));
  if (s.numel() == 0) return [](const Args&) {};
  return dispatch<kFloat>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    constexpr bool in_output = std::is_same_v<T, C>;  // exponentials kept in y itself
    if (!in_output) ctx.workspace_bytes = sizeof(C) * static_cast<size_t>(s.numel());
    const int64_t tiles = (s.inner + kTile - 1) / kTile;
    const int64_t width = std::min(kTile, s.inner);
    const int64_t grain = std::max<int64_t>(1, 8192 / (s.extent * width));
    return [s, tiles, grain](const Args& args) {
      const T* x = args.in<T>(0);
      T* y = args.out<T>(0);
      C* e = nullptr;
      if constexpr (in_output) {
        e = y;
      } else {
        e = args.scratch<C>();
      }
      parallel_for(s.outer * tiles, grain, [&](int64_t begin, int64_t end) {
        for (int64_t task = begin; task < end; ++task) {
          const int64_t o = task / tiles, first = task % tiles * kTile;
          const int64_t at = o * s.extent * s.inner + first;
          if (s.inner == 1) {
            softmax_line<Log>(x + at, y + at, e + at, s.extent);
          } else {
            softmax_tile<Log>(x + at, y + at, e + at, s.extent, s.inner,
                              std::min(kTile, s.inner - first));
          }
        }
      });
    };
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("softmax", kFloat, softmax<false>);
MSKERNEL_CPU_KERNEL("log_softmax", kFloat, softmax<true>);

}  // namespace mskernel_cpu
