// Scans along an axis: cumsum and cumprod (reverse and exclusive flags; floats accumulate in
// double, complex in complex<double>, integers wrap in their own type) and cummax/cummin
// (running extremes in the element's compute type, NaN propagating).
//
// The tensor is [outer, size, inner] around the axis.  A task scans one outer position over a
// block of up to kBlock inner positions, keeping one accumulator per position: each step of
// the scan is then a contiguous loop over the block, which vectorises whatever the axis (a
// scan along the last axis is a block of one).  Tasks are independent and split over the pool.
#include <cmath>
#include <limits>

#include "mskernel_cpu/axis.hpp"
#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/scalar_math.hpp"

namespace mskernel_cpu {
namespace {

template <class T> struct WideType { using type = double; };
template <class R> struct WideType<std::complex<R>> { using type = std::complex<double>; };

// The accumulator of a sum or product: T itself for integers (wrapping), else the wide type.
template <class T>
using product_acc = std::conditional_t<std::is_integral_v<T>, T, typename WideType<T>::type>;

template <int Identity> struct Arithmetic {
  static constexpr DTypeSet kDTypes = kNumeric;
  template <class T> using acc = product_acc<T>;
  template <class A> static A identity() { return A(Identity); }
  template <class A, class T> static A lift(T x) { return A(load(x)); }
};

struct Sum : Arithmetic<0> {
  template <class A> static A combine(A a, A b) { return wrap_add(a, b); }
};

struct Product : Arithmetic<1> {
  template <class A> static A combine(A a, A b) { return wrap_mul(a, b); }
};

template <bool Largest> struct Running {
  static constexpr DTypeSet kDTypes = kBool | kReal;
  template <class T> using acc = compute_t<T>;
  template <class A> static A identity() {
    if constexpr (std::is_floating_point_v<A>) {
      return Largest ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
    } else {
      return Largest ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
    }
  }
  template <class A, class T> static A lift(T x) { return load(x); }
  template <class A> static A combine(A a, A b) {
    return Largest ? nan_maximum(a, b) : nan_minimum(a, b);
  }
};

constexpr int64_t kBlock = 256;

template <class S, class T>
Kernel scan(KernelContext& ctx, bool reverse, bool exclusive) {
  using A = typename S::template acc<T>;
  const AxisSplit l = split_axis(ctx.input(0).shape, ctx.attrs.get_int("axis"));
  const int64_t block = std::min(l.inner, kBlock);
  const int64_t blocks = block == 0 ? 0 : (l.inner + block - 1) / block;
  const int64_t grain = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, l.extent * block));
  if (l.inner == 1) {  // scanning along the last axis: one line per task, no blocks
    const int64_t line_grain = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, l.extent));
    return [=](const Args& args) {
      const T* x = args.in<T>(0);
      T* y = args.out<T>(0);
      parallel_for(l.outer, line_grain, [&](int64_t begin, int64_t end) {
        for (int64_t line = begin; line < end; ++line) {
          const int64_t first = reverse ? (line + 1) * l.extent - 1 : line * l.extent;
          const int64_t step = reverse ? -1 : 1;
          A acc = S::template identity<A>();
          for (int64_t i = 0, at = first; i < l.extent; ++i, at += step) {
            const A next = S::combine(acc, S::template lift<A>(x[at]));
            y[at] = convert<T>(exclusive ? acc : next);
            acc = next;
          }
        }
      });
    };
  }
  return [=](const Args& args) {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    parallel_for(l.outer * blocks, grain, [&](int64_t begin, int64_t end) {
      A acc[kBlock];
      for (int64_t task = begin; task < end; ++task) {
        const int64_t o = task / blocks, q0 = (task - o * blocks) * block;
        const int64_t width = std::min(block, l.inner - q0);
        const int64_t start = o * l.extent * l.inner + q0;
        for (int64_t c = 0; c < width; ++c) acc[c] = S::template identity<A>();
        for (int64_t step = 0; step < l.extent; ++step) {
          const int64_t offset = start + (reverse ? l.extent - 1 - step : step) * l.inner;
          const T* in = x + offset;
          T* out = y + offset;
          if (exclusive) {
            for (int64_t c = 0; c < width; ++c) {
              out[c] = convert<T>(acc[c]);
              acc[c] = S::combine(acc[c], S::template lift<A>(in[c]));
            }
          } else {
            for (int64_t c = 0; c < width; ++c) {
              acc[c] = S::combine(acc[c], S::template lift<A>(in[c]));
              out[c] = convert<T>(acc[c]);
            }
          }
        }
      }
    });
  };
}

template <class S>
Kernel scan_op(KernelContext& ctx) {
  const bool reverse = ctx.attrs.has("reverse") && ctx.attrs.get_bool("reverse");
  const bool exclusive = ctx.attrs.has("exclusive") && ctx.attrs.get_bool("exclusive");
  if (ctx.output(0).numel() == 0) return [](const Args&) {};
  return dispatch<S::kDTypes>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    return scan<S, typename decltype(tag)::type>(ctx, reverse, exclusive);
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("cumsum", kNumeric, scan_op<Sum>);
MSKERNEL_CPU_KERNEL("cumprod", kNumeric, scan_op<Product>);
MSKERNEL_CPU_KERNEL("cummax", kBool | kReal, scan_op<Running<true>>);
MSKERNEL_CPU_KERNEL("cummin", kBool | kReal, scan_op<Running<false>>);

}  // namespace mskernel_cpu
