// Reductions sum, mean, max and min over `axes` (None: all; keepdims only changes the shape).
//
// Layout.  The input's dimensions are tagged reduced or kept, dimensions of size 1 are dropped
// and neighbours with the same tag merged, so (2, 3, 4) over axes (1, 2) is one kept group of 2
// and one reduced group of 12.  The kernel walks the input in memory order, folding each
// innermost run into an accumulator per output element: a reduced run folds into one
// accumulator, a kept run folds elementwise into a row of them.  Threads split the outermost
// kept group (disjoint outputs); a reduction to a single element is split into fixed blocks
// whose partial results are combined in order, so results never depend on the thread count.
//
// Accumulators: sums of floating types in double (complex in complex<double>), integer sums
// in uint64 (the result wraps exactly as a sum in the input type does), max/min in the compute
// type with NaN propagating.
#include <algorithm>
#include <cmath>
#include <limits>

#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/scalar_math.hpp"

namespace mskernel_cpu {
namespace {

// ---- reducers ---------------------------------------------------------------------------

template <class T> struct SumAccumulator { using type = double; };
template <class R> struct SumAccumulator<std::complex<R>> { using type = std::complex<double>; };

struct Sum {
  template <class T>
  using acc = std::conditional_t<std::is_integral_v<T>, uint64_t,
                                 typename SumAccumulator<T>::type>;
  template <class A> static A identity() { return A(0); }
  template <class A> static A combine(A a, A b) { return a + b; }
  template <class A, class T> static A lift(T x) {
    if constexpr (std::is_integral_v<T>) {
      return A(static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(x));
    } else {
      return A(load(x));
    }
  }
  template <class T, class A> static T finish(A total, int64_t) {
    if constexpr (std::is_integral_v<T>) {
      return T(total);  // wraps
    } else {
      return convert<T>(total);
    }
  }
};

struct Mean : Sum {
  template <class T, class A> static T finish(A total, int64_t count) {
    return convert<T>(total / double(count));
  }
};

template <bool Largest> struct Extreme {
  template <class T> using acc = compute_t<T>;
  template <class A> static A identity() {
    if constexpr (std::is_floating_point_v<A>) {
      return Largest ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
    } else {
      return Largest ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
    }
  }
  template <class A> static A combine(A a, A b) {
    return Largest ? nan_maximum(a, b) : nan_minimum(a, b);
  }
  template <class A, class T> static A lift(T x) { return load(x); }
  template <class T, class A> static T finish(A value, int64_t) { return convert<T>(value); }
};

// ---- layout -----------------------------------------------------------------------------

struct Layout {
  std::vector<int64_t> sizes;      // merged groups, outermost first
  std::vector<char> reduced;       // per group
  std::vector<int64_t> in_strides;
  std::vector<int64_t> out_strides;  // 0 for reduced groups
  int64_t in_numel = 1, out_numel = 1, count = 1;  // count: elements folded per output
  int split = -1;                  // the group threads split: the outermost kept one

  int groups() const { return static_cast<int>(sizes.size()); }
};

Layout make_layout(const KernelContext& ctx) {
  const std::vector<int64_t>& shape = ctx.inputs[0].shape;
  const int rank = static_cast<int>(shape.size());
  std::vector<char> is_reduced(rank, 0);
  if (auto axes = ctx.attrs.get_optional_ints("axes")) {
    for (int64_t a : *axes) is_reduced[((a % rank) + rank) % rank] = 1;
  } else {
    std::fill(is_reduced.begin(), is_reduced.end(), 1);
  }
  Layout L;
  for (int d = 0; d < rank; ++d) {
    L.in_numel *= shape[d];
    (is_reduced[d] ? L.count : L.out_numel) *= shape[d];
    if (shape[d] == 1) continue;
    if (!L.sizes.empty() && L.reduced.back() == is_reduced[d]) {
      L.sizes.back() *= shape[d];
    } else {
      L.sizes.push_back(shape[d]);
      L.reduced.push_back(is_reduced[d]);
    }
  }
  const int G = L.groups();
  L.in_strides.assign(G, 0);
  L.out_strides.assign(G, 0);
  int64_t in_stride = 1, out_stride = 1;
  for (int g = G - 1; g >= 0; --g) {
    L.in_strides[g] = in_stride;
    in_stride *= L.sizes[g];
    if (!L.reduced[g]) {
      L.out_strides[g] = out_stride;
      out_stride *= L.sizes[g];
    }
  }
  for (int g = 0; g < G && L.split < 0; ++g) {
    if (!L.reduced[g]) L.split = g;
  }
  return L;
}

// Visit every innermost run whose index in the split group lies in [lo, hi):
// f(input offset, output offset, length, run is reduced).
template <class F>
void walk(const Layout& L, int64_t lo, int64_t hi, F&& f) {
  const int G = L.groups();
  const int inner = G - 1;
  std::vector<int64_t> index(G, 0), first(G, 0), last(G);
  for (int g = 0; g < G; ++g) last[g] = L.sizes[g];
  if (L.split >= 0) {
    first[L.split] = lo;
    last[L.split] = hi;
  }
  int64_t in = 0, out = 0;
  for (int g = 0; g < inner; ++g) {
    index[g] = first[g];
    in += first[g] * L.in_strides[g];
    out += first[g] * L.out_strides[g];
  }
  const int64_t run_start = first[inner];
  const int64_t run_length = last[inner] - first[inner];
  const int64_t run_out = L.reduced[inner] ? 0 : run_start;
  for (;;) {
    f(in + run_start, out + run_out, run_length, L.reduced[inner] != 0);
    int g = inner - 1;
    for (; g >= 0; --g) {
      in += L.in_strides[g];
      out += L.out_strides[g];
      if (++index[g] < last[g]) break;
      in -= (last[g] - first[g]) * L.in_strides[g];
      out -= (last[g] - first[g]) * L.out_strides[g];
      index[g] = first[g];
    }
    if (g < 0) return;
  }
}

// Fold a contiguous run into one accumulator with 8 independent partial results (so the
// compiler can vectorise without reassociating), combined in a fixed order.
template <class Op, class A, class T>
A fold_run(const T* x, int64_t length) {
  constexpr int lanes = 8;
  A partial[lanes];
  for (A& p : partial) p = Op::template identity<A>();
  int64_t i = 0;
  for (; i + lanes <= length; i += lanes) {
    for (int l = 0; l < lanes; ++l) {
      partial[l] = Op::combine(partial[l], Op::template lift<A>(x[i + l]));
    }
  }
  for (; i < length; ++i) partial[0] = Op::combine(partial[0], Op::template lift<A>(x[i]));
  A total = partial[0];
  for (int l = 1; l < lanes; ++l) total = Op::combine(total, partial[l]);
  return total;
}

constexpr int64_t kBlock = 1 << 15;  // elements per partial result of a full reduction

template <class Op, class T>
Kernel reduction_kernel(KernelContext& ctx) {
  using A = typename Op::template acc<T>;
  const Layout L = make_layout(ctx);
  if (L.out_numel == 0) return [](const Args&) {};
  if (L.groups() == 0 || L.in_numel == 0) {  // nothing to fold across: each output is its input
    const int64_t n = L.out_numel, count = L.count;
    return [n, count](const Args& args) {
      const T* x = args.in<T>(0);
      T* y = args.out<T>(0);
      for (int64_t i = 0; i < n; ++i) {
        const A value = count == 0 ? Op::template identity<A>() : Op::template lift<A>(x[i]);
        y[i] = Op::template finish<T>(value, count);
      }
    };
  }
  if (L.split < 0) {  // everything reduces to one element: blocked partial results
    const int64_t n = L.in_numel;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    ctx.workspace_bytes = sizeof(A) * static_cast<size_t>(blocks);
    return [n, blocks](const Args& args) {
      const T* x = args.in<T>(0);
      A* partials = args.scratch<A>();
      parallel_for(blocks, 2, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          partials[b] = fold_run<Op, A>(x + b * kBlock, std::min(kBlock, n - b * kBlock));
        }
      });
      A total = partials[0];
      for (int64_t b = 1; b < blocks; ++b) total = Op::combine(total, partials[b]);
      args.out<T>(0)[0] = Op::template finish<T>(total, n);
    };
  }
  ctx.workspace_bytes = sizeof(A) * static_cast<size_t>(L.out_numel);
  const int64_t per_index = L.in_numel / L.sizes[L.split];
  const int64_t grain = std::max<int64_t>(1, kBlock / std::max<int64_t>(1, per_index));
  return [L, grain](const Args& args) {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    A* acc = args.scratch<A>();
    std::fill(acc, acc + L.out_numel, Op::template identity<A>());
    parallel_for(L.sizes[L.split], grain, [&](int64_t lo, int64_t hi) {
      walk(L, lo, hi, [&](int64_t in, int64_t out, int64_t length, bool reduced) {
        if (reduced) {
          acc[out] = Op::combine(acc[out], fold_run<Op, A>(x + in, length));
        } else {
          for (int64_t j = 0; j < length; ++j) {
            acc[out + j] = Op::combine(acc[out + j], Op::template lift<A>(x[in + j]));
          }
        }
      });
    });
    for (int64_t i = 0; i < L.out_numel; ++i) y[i] = Op::template finish<T>(acc[i], L.count);
  };
}

template <class Op, DTypeSet Set>
Kernel reduction(KernelContext& ctx) {
  return dispatch<Set>(ctx.inputs[0].dtype, [&](auto tag) -> Kernel {
    return reduction_kernel<Op, typename decltype(tag)::type>(ctx);
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("sum", kNumeric, (reduction<Sum, kNumeric>));
MSKERNEL_CPU_KERNEL("mean", kInexact, (reduction<Mean, kInexact>));
MSKERNEL_CPU_KERNEL("max", kReal, (reduction<Extreme<true>, kReal>));
MSKERNEL_CPU_KERNEL("min", kReal, (reduction<Extreme<false>, kReal>));

}  // namespace mskernel_cpu
