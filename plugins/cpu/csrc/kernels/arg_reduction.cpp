// argmax and argmin: the int64 index of the first largest (smallest) element along `axis`
// (None: of the flattened tensor), NaN counting as more extreme than any number (so the
// first NaN wins, as np.argmax and np.argmin do).
//
// The input is seen as [outer, extent, inner] around the axis.  With inner == 1 each line is
// taken a chunk at a time: the chunk's extreme is found with vector instructions and located
// only when it beats the best so far; lines of at most kShortLine elements (a pooling window)
// are scanned element by element without branches instead.  Otherwise a tile of up to kTile
// neighbouring lines is scanned together, one contiguous row of the tile per step, keeping
// the best value and index of each line.  Threads split the lines, or the (outer, tile) pairs.
#include <algorithm>
#include <cmath>

#include "mskernel_cpu/axis.hpp"
#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/vector_math.hpp"

namespace mskernel_cpu {
namespace {

constexpr int64_t kTile = 256;   // lines scanned together when inner > 1
constexpr int64_t kChunk = 256;  // elements looked at together along a contiguous line
constexpr int64_t kShortLine = 32;  // lines this short skip the chunked search

// Whether `value` replaces `best` as the first extreme seen so far.
template <bool Largest, class C>
bool improves(C value, C best) {
  const bool beats = Largest ? value > best : value < best;
  if constexpr (std::is_floating_point_v<C>) {
    return beats || (std::isnan(value) && !std::isnan(best));
  } else {
    return beats;
  }
}

// The extreme of a and b, NaN winning, for scalars and (with Lanes) lane by lane; no branch,
// so the chunk loop below vectorises.
template <bool Largest, bool Lanes = false, class V>
V fold_extreme(V a, V b) {
  const auto wins = Largest ? b > a : b < a;
  if constexpr (Lanes) {
    if constexpr (std::is_floating_point_v<std::remove_reference_t<decltype(a[0])>>) {
      return (wins | (b != b)) ? b : a;
    } else {
      return wins ? b : a;
    }
  } else if constexpr (std::is_floating_point_v<V>) {
    return select(wins | (b != b), b, a);
  } else {
    return wins ? b : a;
  }
}

// The extreme of a chunk, NaN winning.
template <bool Largest, class T, class C = compute_t<T>>
C chunk_extreme(const T* x, int64_t n) {
  constexpr int width = lane_count<C>;
  C extreme = load(x[0]);
  int64_t i = 0;
  if (n >= width) {
    lanes_t<C> best = load_lanes<C>(x);
    for (i = width; i + width <= n; i += width) {
      best = fold_extreme<Largest, true>(best, load_lanes<C>(x + i));
    }
    for (int l = 0; l < width; ++l) extreme = fold_extreme<Largest>(extreme, C(best[l]));
  }
  for (; i < n; ++i) extreme = fold_extreme<Largest>(extreme, load(x[i]));
  return extreme;
}

// The index of the first element of x equal to `value` (the first NaN when it is NaN).
template <class T, class C>
int64_t first_position(const T* x, C value) {
  const bool find_nan = std::isnan(value);
  for (int64_t k = 0;; ++k) {
    const C v = load(x[k]);
    if (find_nan ? v != v : v == value) return k;
  }
}

// The first extreme of a contiguous line, a chunk at a time: the chunk's extreme (found with
// vector instructions) either improves on the best so far, and is then located, or the chunk
// is skipped.  A NaN ends the search.
template <bool Largest, class T, class C = compute_t<T>>
int64_t line_arg_extreme(const T* x, int64_t n) {
  C best = load(x[0]);
  int64_t index = 0;
  for (int64_t first = 0; first < n && !std::isnan(best); first += kChunk) {
    const C extreme = chunk_extreme<Largest>(x + first, std::min(kChunk, n - first));
    if (improves<Largest>(extreme, best)) {
      best = extreme;
      index = first + first_position(x + first, extreme);
    }
  }
  return index;
}

// The first extreme of a short contiguous line, with selects rather than branches (the
// winner of each comparison is data-dependent, so branches would mispredict).
template <bool Largest, class T, class C = compute_t<T>>
int64_t short_line_arg_extreme(const T* x, int64_t n) {
  C best = load(x[0]);
  int64_t index = 0;
  for (int64_t k = 1; k < n; ++k) {
    const C value = load(x[k]);
    const bool wins = improves<Largest>(value, best);
    best = wins ? value : best;
    index = wins ? k : index;
  }
  return index;
}

template <bool Largest>
Kernel arg_extreme(KernelContext& ctx) {
  const TensorInfo& input = ctx.input(0);
  const std::optional<int64_t> axis = ctx.attrs.get_optional_int("axis");
  const AxisSplit s = axis ? split_axis(input.shape, *axis) : AxisSplit{1, input.numel(), 1};
  const int64_t tiles = (s.inner + kTile - 1) / kTile;
  const int64_t tasks = s.outer * tiles;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, s.extent * kTile));
  return dispatch<kReal>(input.dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if (s.inner == 1) {
      const int64_t line_grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, s.extent));
      const bool short_lines = s.extent <= kShortLine;
      return [s, line_grain, short_lines](const Args& args) {
        const T* x = args.in<T>(0);
        int64_t* y = args.out<int64_t>(0);
        parallel_for(s.outer, line_grain, [&](int64_t begin, int64_t end) {
          if (short_lines) {
            for (int64_t o = begin; o < end; ++o) {
              y[o] = short_line_arg_extreme<Largest>(x + o * s.extent, s.extent);
            }
            return;
          }
          for (int64_t o = begin; o < end; ++o) {
            y[o] = line_arg_extreme<Largest>(x + o * s.extent, s.extent);
          }
        });
      };
    }
    return [s, tiles, tasks, grain](const Args& args) {
      const T* x = args.in<T>(0);
      int64_t* y = args.out<int64_t>(0);
      parallel_for(tasks, grain, [&](int64_t begin, int64_t end) {
        C best[kTile];
        for (int64_t task = begin; task < end; ++task) {
          const int64_t o = task / tiles, first = task % tiles * kTile;
          const int64_t width = std::min(kTile, s.inner - first);
          const T* block = x + o * s.extent * s.inner + first;
          int64_t* index = y + o * s.inner + first;
          for (int64_t j = 0; j < width; ++j) {
            best[j] = load(block[j]);
            index[j] = 0;
          }
          for (int64_t k = 1; k < s.extent; ++k) {
            const T* row = block + k * s.inner;
            for (int64_t j = 0; j < width; ++j) {
              const C value = load(row[j]);
              if (improves<Largest>(value, best[j])) {
                best[j] = value;
                index[j] = k;
              }
            }
          }
        }
      });
    };
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("argmax", kReal, arg_extreme<true>);
MSKERNEL_CPU_KERNEL("argmin", kReal, arg_extreme<false>);

}  // namespace mskernel_cpu
