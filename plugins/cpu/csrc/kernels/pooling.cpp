// max_pool, max_pool_grad, avg_pool, adaptive_max_pool, adaptive_avg_pool
// (mskernel/ops/conv.py), by direct loops over each [*spatial] plane, planes split over the
// threads.
//
// Strided windows are reduced row by row: for each output row and each tap of the window, the
// outputs whose tap lies inside the input accumulate one contiguous (or strided) run of an input
// row, so the inner loop vectorises.  Taps in the padding are skipped, which is what the
// reference's fill (-inf or the lowest integer for max, 0 for sums) amounts to; a window wholly
// in the padding keeps that fill.  Max propagates NaN, as np.max does.  avg_pool divides by
// PyTorch's divisor (count_include_pad, ceil_mode windows cut at the high padding).  Adaptive
// windows [floor(i*L/out), ceil((i+1)*L/out)) differ per output and are reduced one output at
// a time.  float16/bfloat16 accumulate in float32.
//
// max_pool_grad walks each window's taps in row-major order to its first maximum (a NaN
// wins at once; a window whose first tap lies in the padding starts from that padding's
// -inf, which only a larger value or a NaN displaces, as the reference's argmax over the
// padded windows does) and adds the window's cotangent there; each plane's windows are
// visited in row-major order, so overlapping windows add up in the reference's order.
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/scalar_math.hpp"
#include "mskernel_cpu/window.hpp"

namespace mskernel_cpu {
namespace {

using Dims = WindowGeometry::Dims;

// Planes per thread range: about 64k window taps of work.
int64_t plane_grain(int64_t taps_per_plane) {
  return std::max<int64_t>(1, (int64_t(1) << 16) / std::max<int64_t>(1, taps_per_plane));
}

struct MaxOf {
  template <class C> C operator()(C acc, C v) const { return nan_maximum(acc, v); }
};

struct SumOf {
  template <class C> C operator()(C acc, C v) const { return acc + v; }
};

// The identity of the max: -inf for floats, the lowest value for integers.
template <class C> C lowest() {
  if constexpr (std::numeric_limits<C>::has_infinity) {
    return -std::numeric_limits<C>::infinity();
  } else {
    return std::numeric_limits<C>::lowest();
  }
}

// ---- strided windows --------------------------------------------------------------------

// A pooling op's windows; `reach` the taps along each dim that can read inside the input
// (tap k reads at least k * dilation - pad_lo, so the taps from ceil((in + pad_lo) / dilation)
// on read only padding, whatever the output: the kernel attribute may be far larger than the
// input, and work and tables are sized by the reach, never by the attribute); for each kw
// below the reach, the outputs whose tap kw lies inside the input along the last dim.
struct PoolWindows {
  WindowGeometry g;
  Dims reach{1, 1, 1};
  std::vector<std::pair<int64_t, int64_t>> width_ranges;

  explicit PoolWindows(const KernelContext& ctx)
      : PoolWindows(ctx, ctx.input(0).shape, ctx.output(0).shape) {}

  // The windows that pool `in` [N, C, *spatial] into `out`.
  PoolWindows(const KernelContext& ctx, const std::vector<int64_t>& in,
              const std::vector<int64_t>& out) {
    const std::vector<int64_t>& kernel = ctx.attrs.get_ints("kernel");
    g = window_geometry(spatial_dims(in), spatial_dims(out), kernel, ctx.attrs, kernel);
    for (int d = 0; d < 3; ++d) {
      const int64_t reaching = (g.in[d] + g.pad_lo[d] + g.dilation[d] - 1) / g.dilation[d];
      reach[d] = std::min(g.kernel[d], reaching);
    }
    for (int64_t kw = 0; kw < reach[2]; ++kw) width_ranges.push_back(g.valid_range(2, kw));
  }

  int64_t taps() const { return WindowGeometry::product(reach); }
};

// For each plane of x [planes, *in], each output (od, oh, ow) gets
// finish(reduce over its taps inside the input, starting from init, od, oh, ow).
template <class T, class C, class Reduce, class Finish>
void pool_windows(const PoolWindows& windows, int64_t planes, C init, const T* x, T* y,
                  Reduce reduce, Finish finish) {
  constexpr int64_t kChunk = 256;  // outputs of a row accumulated at once
  const WindowGeometry& g = windows.g;
  const int64_t in_plane = g.in_pixels(), out_plane = g.out_pixels(), step = g.stride[2];
  parallel_for(planes, plane_grain(out_plane * windows.taps()), [&](int64_t begin, int64_t end) {
    C acc[kChunk];
    for (int64_t plane = begin; plane < end; ++plane) {
      const T* xp = x + plane * in_plane;
      T* yp = y + plane * out_plane;
      for (int64_t od = 0; od < g.out[0]; ++od) {
        for (int64_t oh = 0; oh < g.out[1]; ++oh) {
          T* y_row = yp + (od * g.out[1] + oh) * g.out[2];
          for (int64_t ow0 = 0; ow0 < g.out[2]; ow0 += kChunk) {
            const int64_t count = std::min(kChunk, g.out[2] - ow0);
            std::fill(acc, acc + count, init);
            for (int64_t kd = 0; kd < windows.reach[0]; ++kd) {
              if (!g.inside(0, od, kd)) continue;
              for (int64_t kh = 0; kh < windows.reach[1]; ++kh) {
                if (!g.inside(1, oh, kh)) continue;
                const T* x_row = xp + (g.input_index(0, od, kd) * g.in[1] +
                                       g.input_index(1, oh, kh)) * g.in[2];
                for (int64_t kw = 0; kw < windows.reach[2]; ++kw) {
                  const auto [lo, hi] =
                      WindowGeometry::clip(windows.width_ranges[kw], ow0, count);
                  if (lo == hi) continue;
                  const T* src = x_row + g.input_index(2, ow0 + lo, kw);
                  C* a = acc + lo;
                  if (step == 1) {
                    for (int64_t j = 0; j < hi - lo; ++j) a[j] = reduce(a[j], C(load(src[j])));
                  } else {
                    for (int64_t j = 0; j < hi - lo; ++j) {
                      a[j] = reduce(a[j], C(load(src[j * step])));
                    }
                  }
                }
              }
            }
            for (int64_t j = 0; j < count; ++j) {
              y_row[ow0 + j] = finish(acc[j], od, oh, ow0 + j);
            }
          }
        }
      }
    }
  });
}

int64_t planes_of(const KernelContext& ctx) {
  return ctx.output(0).numel() == 0 ? 0 : ctx.output(0).shape[0] * ctx.output(0).shape[1];
}

Kernel max_pool(KernelContext& ctx) {
  const PoolWindows windows(ctx);
  const int64_t planes = planes_of(ctx);
  return dispatch<kReal>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    return [windows, planes](const Args& args) {
      pool_windows(windows, planes, lowest<C>(), args.in<T>(0), args.out<T>(0), MaxOf{},
                   [](C acc, int64_t, int64_t, int64_t) { return convert<T>(acc); });
    };
  });
}

// One tap of max_pool_grad's first-maximum search across `count` windows of a row: window j
// reads x[first + j * step] (kStep > 0: that step, known at compile time so the loop
// vectorises; 0: `step`) and takes it when larger than its best so far or its first NaN.
template <int64_t kStep, class T, class C, class Index>
void take_larger(const T* x, int64_t first, int64_t step, int64_t count, C* best, Index* at) {
  const int64_t s = kStep > 0 ? kStep : step;
  for (int64_t j = 0; j < count; ++j) {
    const C v = C(load(x[first + j * s]));
    const bool take = (v > best[j]) | ((v != v) & (best[j] == best[j]));
    best[j] = take ? v : best[j];
    at[j] = take ? Index(first + j * s) : at[j];
  }
}

// max_pool_grad on the planes [begin, end) of x: each window's cotangent added at its first
// maximum into `sums_of(plane)` (C per element of the plane: the output itself, or a scratch
// plane for the half types, handed to `store(plane, sums)`).  As in pool_windows, a row of
// outputs is walked a tap at a time, so the comparisons run across the row's windows, each
// remembering its best value and where it lies (an Index into the plane).  A window starts
// from its first tap, or, when that lies in the padding, from the padding's -inf at position
// -1; taps in the padding are skipped (their -inf displaces nothing).
template <class T, class C, class Index, class Sums, class Store>
void route_to_maxima(const PoolWindows& windows, int64_t begin, int64_t end, const T* x,
                     const T* cotangent, Sums sums_of, Store store) {
  constexpr int64_t kChunk = 256;
  const WindowGeometry& g = windows.g;
  const int64_t in_plane = g.in_pixels(), out_plane = g.out_pixels(), step = g.stride[2];
  C best[kChunk];
  Index at[kChunk];
  for (int64_t plane = begin; plane < end; ++plane) {
    const T* xp = x + plane * in_plane;
    const T* gp = cotangent + plane * out_plane;
    C* sums = sums_of(plane);
    std::fill(sums, sums + in_plane, C(0));
    for (int64_t od = 0; od < g.out[0]; ++od) {
      for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        const T* g_row = gp + (od * g.out[1] + oh) * g.out[2];
        for (int64_t ow0 = 0; ow0 < g.out[2]; ow0 += kChunk) {
          const int64_t count = std::min(kChunk, g.out[2] - ow0);
          std::fill(best, best + count, lowest<C>());
          std::fill(at, at + count, Index(-1));
          if (g.inside(0, od, 0) && g.inside(1, oh, 0)) {  // windows whose first tap is inside
            const int64_t row = (g.input_index(0, od, 0) * g.in[1] + g.input_index(1, oh, 0)) *
                                g.in[2];
            const auto [lo, hi] = WindowGeometry::clip(windows.width_ranges[0], ow0, count);
            for (int64_t j = lo; j < hi; ++j) {
              at[j] = Index(row + g.input_index(2, ow0 + j, 0));
              best[j] = C(load(xp[at[j]]));
            }
          }
          for (int64_t kd = 0; kd < windows.reach[0]; ++kd) {
            if (!g.inside(0, od, kd)) continue;
            for (int64_t kh = 0; kh < windows.reach[1]; ++kh) {
              if (!g.inside(1, oh, kh)) continue;
              const int64_t row = (g.input_index(0, od, kd) * g.in[1] +
                                   g.input_index(1, oh, kh)) * g.in[2];
              for (int64_t kw = 0; kw < windows.reach[2]; ++kw) {
                const auto [lo, hi] = WindowGeometry::clip(windows.width_ranges[kw], ow0, count);
                const int64_t first = row + g.input_index(2, ow0 + lo, kw);
                if (step == 1) {
                  take_larger<1>(xp, first, step, hi - lo, best + lo, at + lo);
                } else if (step == 2) {
                  take_larger<2>(xp, first, step, hi - lo, best + lo, at + lo);
                } else {
                  take_larger<0>(xp, first, step, hi - lo, best + lo, at + lo);
                }
              }
            }
          }
          for (int64_t j = 0; j < count; ++j) {
            if (at[j] >= 0) sums[at[j]] += C(load(g_row[ow0 + j]));
          }
        }
      }
    }
    store(plane, sums);
  }
}

Kernel max_pool_grad(KernelContext& ctx) {
  const PoolWindows windows(ctx, ctx.input(0).shape, ctx.input(1).shape);
  const int64_t planes = planes_of(ctx);
  return dispatch<kFloat>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    return [windows, planes](const Args& args) {
      const int64_t in_plane = windows.g.in_pixels();
      const T* x = args.in<T>(0);
      const T* cotangent = args.in<T>(1);
      T* dx = args.out<T>(0);
      const int64_t grain = plane_grain(windows.g.out_pixels() * windows.taps());
      parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
        const auto route = [&](auto index, auto sums_of, auto store) {
          using Index = decltype(index);
          route_to_maxima<T, C, Index>(windows, begin, end, x, cotangent, sums_of, store);
        };
        const auto run = [&](auto index) {  // positions as `index`'s type
          if constexpr (std::is_same_v<T, C>) {
            route(index, [&](int64_t plane) { return dx + plane * in_plane; },
                  [](int64_t, C*) {});
          } else {  // the half types sum in C, a plane at a time
            std::vector<C> scratch(in_plane);
            route(index, [&](int64_t) { return scratch.data(); },
                  [&](int64_t plane, const C* sums) {
                    T* out = dx + plane * in_plane;
                    for (int64_t i = 0; i < in_plane; ++i) out[i] = convert<T>(sums[i]);
                  });
          }
        };
        // 32-bit positions vectorise with float32 values; planes past 2^31 need 64 bits.
        if (in_plane <= std::numeric_limits<int32_t>::max()) {
          run(int32_t{});
        } else {
          run(int64_t{});
        }
      });
    };
  });
}

// avg_pool's divisor along each dim, per output index: the window's extent inside the padded
// input (count_include_pad) or inside the input, cut at the high padding, at least 1.
std::array<std::vector<int64_t>, 3> avg_divisors(const WindowGeometry& g, bool include_pad) {
  std::array<std::vector<int64_t>, 3> divisors;
  for (int d = 0; d < 3; ++d) {
    for (int64_t o = 0; o < g.out[d]; ++o) {
      int64_t start = o * g.stride[d] - g.pad_lo[d];
      int64_t end = std::min(start + g.kernel[d], g.in[d] + g.pad_hi[d]);
      if (!include_pad) {
        start = std::max<int64_t>(start, 0);
        end = std::min(end, g.in[d]);
      }
      divisors[d].push_back(std::max<int64_t>(end - start, 1));
    }
  }
  return divisors;
}

Kernel avg_pool(KernelContext& ctx) {
  const PoolWindows windows(ctx);
  const int64_t planes = planes_of(ctx);
  const auto divisors = avg_divisors(windows.g, ctx.attrs.get_bool("count_include_pad"));
  return dispatch<kFloat>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    return [windows, planes, divisors](const Args& args) {
      const auto mean = [&](C sum, int64_t od, int64_t oh, int64_t ow) {
        return convert<T>(sum / C(divisors[0][od] * divisors[1][oh] * divisors[2][ow]));
      };
      pool_windows(windows, planes, C(0), args.in<T>(0), args.out<T>(0), SumOf{}, mean);
    };
  });
}

// ---- adaptive windows -------------------------------------------------------------------

// Window i of `out` over a dim of size `in` is [start[i], end[i]).
struct AdaptiveWindows {
  Dims in{1, 1, 1}, out{1, 1, 1};
  std::array<std::vector<int64_t>, 3> start, end;

  explicit AdaptiveWindows(const KernelContext& ctx) {
    const std::vector<int64_t> x = spatial_dims(ctx.input(0).shape);
    const std::vector<int64_t> y = spatial_dims(ctx.output(0).shape);
    const size_t skip = 3 - x.size();
    for (size_t d = 0; d < x.size(); ++d) {
      in[skip + d] = x[d];
      out[skip + d] = y[d];
    }
    for (int d = 0; d < 3; ++d) {
      for (int64_t i = 0; i < out[d]; ++i) {
        start[d].push_back(i * in[d] / out[d]);
        end[d].push_back(((i + 1) * in[d] + out[d] - 1) / out[d]);
      }
    }
  }

  int64_t size(int d, int64_t i) const { return end[d][i] - start[d][i]; }
};

// For each plane of x [planes, *in], output (od, oh, ow) gets finish(reduce over its window,
// starting from init, its window's element count).
template <class T, class C, class Reduce, class Finish>
void pool_adaptive(const AdaptiveWindows& a, int64_t planes, C init, const T* x, T* y,
                   Reduce reduce, Finish finish) {
  const int64_t in_plane = a.in[0] * a.in[1] * a.in[2];
  const int64_t out_plane = a.out[0] * a.out[1] * a.out[2];
  const int64_t window = (a.in[0] / a.out[0] + 2) * (a.in[1] / a.out[1] + 2) *
                         (a.in[2] / a.out[2] + 2);  // about the elements of one window
  parallel_for(planes, plane_grain(out_plane * window), [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const T* xp = x + plane * in_plane;
      T* out = y + plane * out_plane;
      for (int64_t od = 0; od < a.out[0]; ++od) {
        for (int64_t oh = 0; oh < a.out[1]; ++oh) {
          for (int64_t ow = 0; ow < a.out[2]; ++ow) {
            C acc = init;
            for (int64_t id = a.start[0][od]; id < a.end[0][od]; ++id) {
              for (int64_t ih = a.start[1][oh]; ih < a.end[1][oh]; ++ih) {
                const T* row = xp + (id * a.in[1] + ih) * a.in[2];
                for (int64_t iw = a.start[2][ow]; iw < a.end[2][ow]; ++iw) {
                  acc = reduce(acc, C(load(row[iw])));
                }
              }
            }
            *out++ = finish(acc, a.size(0, od) * a.size(1, oh) * a.size(2, ow));
          }
        }
      }
    }
  });
}

Kernel adaptive_max_pool(KernelContext& ctx) {
  const AdaptiveWindows windows(ctx);
  const int64_t planes = planes_of(ctx);
  return dispatch<kReal>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    return [windows, planes](const Args& args) {
      pool_adaptive(windows, planes, lowest<C>(), args.in<T>(0), args.out<T>(0), MaxOf{},
                    [](C acc, int64_t) { return convert<T>(acc); });
    };
  });
}

Kernel adaptive_avg_pool(KernelContext& ctx) {
  const AdaptiveWindows windows(ctx);
  const int64_t planes = planes_of(ctx);
  return dispatch<kFloat>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    return [windows, planes](const Args& args) {
      pool_adaptive(windows, planes, C(0), args.in<T>(0), args.out<T>(0), SumOf{},
                    [](C sum, int64_t count) { return convert<T>(sum / C(count)); });
    };
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("max_pool", kReal, max_pool);
MSKERNEL_CPU_KERNEL("max_pool_grad", kFloat, max_pool_grad);
MSKERNEL_CPU_KERNEL("avg_pool", kFloat, avg_pool);
MSKERNEL_CPU_KERNEL("adaptive_max_pool", kReal, adaptive_max_pool);
MSKERNEL_CPU_KERNEL("adaptive_avg_pool", kFloat, adaptive_avg_pool);

}  // namespace mskernel_cpu
