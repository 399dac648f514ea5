// Reductions over `axes` (None: all; keepdims only changes the shape): sum, prod, mean, max,
// min, all and any in one pass; var, std and logsumexp in two passes over the input (the
// first finds a centre per output, the mean or the peak, the second folds terms around it).
//
// Layout.  The input's dimensions are tagged reduced or kept, dimensions of size 1 are dropped
// and neighbours with the same tag merged, so (2, 3, 4) over axes (1, 2) is one kept group of 2
// and one reduced group of 12.  The kernel walks the input in memory order, folding each
// innermost run into an accumulator per output element: a reduced run folds into one
// accumulator, a kept run folds elementwise into a row of them.  Threads split the outermost
// kept group (disjoint outputs); a reduction to a single element is split into fixed blocks
// whose partial results are combined in order, so results never depend on the thread count.
//
// Accumulators: sums of floating types in double (complex in complex<double>), products in
// the compute type, integer sums and products in uint64 (the result wraps exactly as in the
// input type), max/min in the compute type with NaN propagating.  var/std sum squared
// deviations from the mean in double and divide by max(n - correction, 0); logsumexp sums
// exp(x - peak) in double, with the peak taken as 0 when it is not finite (as the reference
// does).
#include <algorithm>
#include <cmath>
#include <limits>

#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/scalar_math.hpp"
#include "mskernel_cpu/vector_math.hpp"

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

// Products of floating types multiply in the compute type, as the reference does (so they
// overflow where it does).
struct Prod : Sum {
  template <class T>
  using acc = std::conditional_t<std::is_integral_v<T>, uint64_t, compute_t<T>>;
  template <class A> static A identity() { return A(1); }
  template <class A> static A combine(A a, A b) { return a * b; }
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

template <bool Every> struct Logical {
  template <class T> using acc = bool;
  template <class A> static A identity() { return Every; }
  template <class A> static A combine(A a, A b) { return Every ? a && b : a || b; }
  template <class A, class T> static A lift(T x) { return x; }
  template <class T, class A> static T finish(A value, int64_t) { return value; }
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
  const std::vector<int64_t>& shape = ctx.input(0).shape;
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

// Fold lift(x[i]) over a contiguous run into one accumulator: kWidth independent partial
// results, each row of kWidth elements combined into them elementwise (a loop the compiler
// vectorises, lift included, without reassociating), then combined in a fixed order.
constexpr int64_t kWidth = 32;

template <class Op, class A, class T, class Lift>
A fold_run(const T* x, int64_t length, const Lift& lift) {
  A total = Op::template identity<A>();
  int64_t i = 0;
  if (length >= kWidth) {
    A partial[kWidth];
    for (int64_t j = 0; j < kWidth; ++j) partial[j] = lift(x[j]);
    for (i = kWidth; i + kWidth <= length; i += kWidth) {
      for (int64_t j = 0; j < kWidth; ++j) partial[j] = Op::combine(partial[j], lift(x[i + j]));
    }
    for (int64_t j = 0; j < kWidth; ++j) total = Op::combine(total, partial[j]);
  }
  for (; i < length; ++i) total = Op::combine(total, lift(x[i]));
  return total;
}

constexpr int64_t kBlock = 1 << 15;  // elements per partial result of a full reduction

int64_t block_count(const Layout& L) {
  return L.split < 0 && L.groups() > 0 ? (L.in_numel + kBlock - 1) / kBlock : 0;
}

// Byte offsets of arrays in a kernel's workspace, each 64-byte aligned, packed without padding
// after the last one.
class WorkspacePlan {
 public:
  template <class A> size_t add(int64_t count) {
    if (count == 0) return 0;  // never read
    const size_t at = (total_ + 63) / 64 * 64;
    total_ = at + sizeof(A) * static_cast<size_t>(count);
    return at;
  }
  size_t total() const { return total_; }

 private:
  size_t total_ = 0;
};

template <class A> A* at_offset(const Args& args, size_t offset) {
  return reinterpret_cast<A*>(args.scratch<char>() + offset);
}

// acc[o] = the Op-fold of lifts(o)(v) over the input elements v of output o, for every output:
// `lifts(o)` returns the functor lifting an element of output o to an accumulator.  Threads
// split the outermost kept group; a reduction to one element folds blocks of kBlock elements
// into `partials` (block_count(L) of them) and combines them in order, so results never depend
// on the thread count.
template <class Op, class A, class T, class Lifts>
void fold_outputs(const Layout& L, const T* x, A* acc, A* partials, const Lifts& lifts) {
  if (L.out_numel == 0) return;
  if (L.groups() == 0 || L.in_numel == 0) {  // each output folds its one input, or none
    for (int64_t o = 0; o < L.out_numel; ++o) {
      acc[o] = L.count == 0 ? Op::template identity<A>() : lifts(o)(x[o]);
    }
    return;
  }
  if (L.split < 0) {
    const int64_t n = L.in_numel, blocks = block_count(L);
    const auto lift = lifts(0);
    parallel_for(blocks, 2, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        partials[b] = fold_run<Op, A>(x + b * kBlock, std::min(kBlock, n - b * kBlock), lift);
      }
    });
    A total = partials[0];
    for (int64_t b = 1; b < blocks; ++b) total = Op::combine(total, partials[b]);
    acc[0] = total;
    return;
  }
  const int64_t per_index = L.in_numel / L.sizes[L.split];
  const int64_t grain = std::max<int64_t>(1, kBlock / std::max<int64_t>(1, per_index));
  std::fill(acc, acc + L.out_numel, Op::template identity<A>());
  parallel_for(L.sizes[L.split], grain, [&](int64_t lo, int64_t hi) {
    walk(L, lo, hi, [&](int64_t in, int64_t out, int64_t length, bool reduced) {
      if (reduced) {
        acc[out] = Op::combine(acc[out], fold_run<Op, A>(x + in, length, lifts(out)));
      } else {
        for (int64_t j = 0; j < length; ++j) {
          acc[out + j] = Op::combine(acc[out + j], lifts(out + j)(x[in + j]));
        }
      }
    });
  });
}

// The lifts of a reducer that treats every element alike.
template <class Op, class A, class T> auto plain_lifts() {
  return [](int64_t) { return [](T v) { return Op::template lift<A>(v); }; };
}

template <class Op, class T>
Kernel reduction_kernel(KernelContext& ctx) {
  using A = typename Op::template acc<T>;
  const Layout L = make_layout(ctx);
  WorkspacePlan plan;
  const size_t acc_at = plan.add<A>(L.out_numel), partials_at = plan.add<A>(block_count(L));
  ctx.workspace_bytes = plan.total();
  return [L, acc_at, partials_at](const Args& args) {
    A* acc = at_offset<A>(args, acc_at);
    fold_outputs<Op>(L, args.in<T>(0), acc, at_offset<A>(args, partials_at),
                     plain_lifts<Op, A, T>());
    T* y = args.out<T>(0);
    for (int64_t o = 0; o < L.out_numel; ++o) y[o] = Op::template finish<T>(acc[o], L.count);
  };
}

template <class Op, DTypeSet Set>
Kernel reduction(KernelContext& ctx) {
  return dispatch<Set>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    return reduction_kernel<Op, typename decltype(tag)::type>(ctx);
  });
}

// var (std with Root): the mean per output, then the sum of squared deviations from it.
template <bool Root>
Kernel moments(KernelContext& ctx) {
  return dispatch<kFloat>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    const Layout L = make_layout(ctx);
    const double divisor = double(std::max<int64_t>(L.count - ctx.attrs.get_int("correction"), 0));
    WorkspacePlan plan;
    const size_t mean_at = plan.add<double>(L.out_numel), acc_at = plan.add<double>(L.out_numel);
    const size_t partials_at = plan.add<double>(block_count(L));
    ctx.workspace_bytes = plan.total();
    return [L, divisor, mean_at, acc_at, partials_at](const Args& args) {
      const T* x = args.in<T>(0);
      double* mean = at_offset<double>(args, mean_at);
      double* acc = at_offset<double>(args, acc_at);
      double* partials = at_offset<double>(args, partials_at);
      fold_outputs<Sum>(L, x, mean, partials, plain_lifts<Sum, double, T>());
      for (int64_t o = 0; o < L.out_numel; ++o) mean[o] /= double(L.count);
      fold_outputs<Sum>(L, x, acc, partials, [mean](int64_t o) {
        return [centre = mean[o]](T v) {
          const double deviation = double(load(v)) - centre;
          return deviation * deviation;
        };
      });
      T* y = args.out<T>(0);
      for (int64_t o = 0; o < L.out_numel; ++o) {
        const double variance = acc[o] / divisor;
        y[o] = convert<T>(Root ? std::sqrt(variance) : variance);
      }
    };
  });
}

// log(sum(exp(x - peak))) + peak, with the peak (the maximum) replaced by 0 when not finite.
Kernel logsumexp(KernelContext& ctx) {
  return dispatch<kFloat>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    using Peak = Extreme<true>;
    const Layout L = make_layout(ctx);
    const int64_t blocks = block_count(L);
    WorkspacePlan plan;
    const size_t peak_at = plan.add<C>(L.out_numel), acc_at = plan.add<double>(L.out_numel);
    const size_t partials_at = plan.add<double>(blocks);  // also holds C partials
    ctx.workspace_bytes = plan.total();
    return [L, peak_at, acc_at, partials_at](const Args& args) {
      const T* x = args.in<T>(0);
      C* peak = at_offset<C>(args, peak_at);
      double* acc = at_offset<double>(args, acc_at);
      fold_outputs<Peak>(L, x, peak, at_offset<C>(args, partials_at), plain_lifts<Peak, C, T>());
      for (int64_t o = 0; o < L.out_numel; ++o) peak[o] = std::isfinite(peak[o]) ? peak[o] : C(0);
      fold_outputs<Sum>(L, x, acc, at_offset<double>(args, partials_at), [peak](int64_t o) {
        return [centre = peak[o]](T v) { return double(exp_of(load(v) - centre)); };
      });
      T* y = args.out<T>(0);
      for (int64_t o = 0; o < L.out_numel; ++o) y[o] = convert<T>(std::log(acc[o]) + peak[o]);
    };
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("sum", kNumeric, (reduction<Sum, kNumeric>));
MSKERNEL_CPU_KERNEL("prod", kNumeric, (reduction<Prod, kNumeric>));
MSKERNEL_CPU_KERNEL("mean", kInexact, (reduction<Mean, kInexact>));
MSKERNEL_CPU_KERNEL("max", kReal, (reduction<Extreme<true>, kReal>));
MSKERNEL_CPU_KERNEL("min", kReal, (reduction<Extreme<false>, kReal>));
MSKERNEL_CPU_KERNEL("all", kBool, (reduction<Logical<true>, kBool>));
MSKERNEL_CPU_KERNEL("any", kBool, (reduction<Logical<false>, kBool>));
MSKERNEL_CPU_KERNEL("var", kFloat, moments<false>);
MSKERNEL_CPU_KERNEL("std", kFloat, moments<true>);
MSKERNEL_CPU_KERNEL("logsumexp", kFloat, logsumexp);

}  // namespace mskernel_cpu
