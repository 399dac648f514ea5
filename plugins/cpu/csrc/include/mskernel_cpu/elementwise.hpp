// Building blocks for elementwise kernels: loops that apply a scalar functor to every element
// (with broadcasting, dtype conversion and multi-threading), and one-line registration of a
// functor as the kernel of an op for a dtype set.
//
// A functor is a struct with a templated call operator taking compute-type values
// (compute_t<T>: float for float16/bfloat16) and returning the result's compute value, and a
// cost (CheapOp for arithmetic, CostlyOp for transcendental functions) that sets the grain of
// multi-threading:
//
//   struct Square : CheapOp {
//     template <class C> C operator()(C x) const { return x * x; }
//   };
//   MSKERNEL_CPU_REGISTRATIONS(my_ops) { add_unary<Square, kFloat>("square"); }
//
// Output dtype: SameType (the input's), BoolType (comparisons, predicates) or RealType
// (complex inputs give their real counterpart, as abs does).
#pragma once

#include <algorithm>
#include <cstdint>

#include "mskernel_cpu/broadcast.hpp"
#include "mskernel_cpu/functors.hpp"  // the cost tags CheapOp, CostlyOp
#include "mskernel_cpu/kernel.hpp"

namespace mskernel_cpu {

// Elements per thread range for an operation of the given cost.
constexpr int64_t kElementwiseGrain = 32768;
inline int64_t grain_for(int cost) { return std::max<int64_t>(1024, kElementwiseGrain / cost); }

struct SameType {
  template <class T> using type = T;
  static constexpr DTypeSet outputs(DTypeSet inputs) { return inputs; }
};

struct BoolType {
  template <class T> using type = bool;
  static constexpr DTypeSet outputs(DTypeSet) { return kBool; }
};

struct RealType {
  template <class T> using type = real_t<T>;
  static constexpr DTypeSet outputs(DTypeSet inputs) {
    return (inputs & ~kComplex) |
           (contains(inputs, DType::Complex64) ? bit(DType::Float32) : 0) |
           (contains(inputs, DType::Complex128) ? bit(DType::Float64) : 0);
  }
};

// y[i] = op(x[i]) for input 0 and output 0 of the same shape; T and R are storage types.
template <class T, class R, class Op>
Kernel map1(const KernelContext& ctx, Op op, int cost = Op::cost) {
  ctx.expect_shape(ctx.input(0), "the input", ctx.output(0).shape);
  const int64_t n = ctx.output(0).numel();
  const int64_t grain = grain_for(cost);
  return [n, grain, op](const Args& args) {
    const T* x = args.in<T>(0);
    R* y = args.out<R>(0);
    parallel_for(n, grain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = convert<R>(op(load(x[i])));
    });
  };
}

// z = op(x, y) with inputs 0 and 1 broadcast to output 0.
template <class A, class B, class R, class Op>
Kernel map2(const KernelContext& ctx, Op op, int cost = Op::cost) {
  const Broadcast<2> layout(ctx.input(0).shape, ctx.input(1).shape, ctx.output(0).shape);
  const int64_t grain = grain_for(cost);
  return [layout, grain, op](const Args& args) {
    const A* x = args.in<A>(0);
    const B* y = args.in<B>(1);
    R* z = args.out<R>(0);
    parallel_for(layout.numel(), grain, [&](int64_t begin, int64_t end) {
      layout.for_each_run(begin, end, [&](const int64_t* offsets, int64_t out, int64_t count,
                                          const int64_t* steps) {
        const A* xs = x + offsets[0];
        const B* ys = y + offsets[1];
        R* zs = z + out;
        if (steps[0] == 1 && steps[1] == 1) {
          for (int64_t i = 0; i < count; ++i) zs[i] = convert<R>(op(load(xs[i]), load(ys[i])));
        } else if (steps[0] == 0 && steps[1] == 1) {
          const auto xv = load(xs[0]);
          for (int64_t i = 0; i < count; ++i) zs[i] = convert<R>(op(xv, load(ys[i])));
        } else if (steps[0] == 1 && steps[1] == 0) {
          const auto yv = load(ys[0]);
          for (int64_t i = 0; i < count; ++i) zs[i] = convert<R>(op(load(xs[i]), yv));
        } else {
          for (int64_t i = 0; i < count; ++i) {
            zs[i] = convert<R>(op(load(xs[i * steps[0]]), load(ys[i * steps[1]])));
          }
        }
      });
    });
  };
}

// w = op(a, b, c) with inputs 0, 1 and 2 broadcast to output 0.
template <class A, class B, class C, class R, class Op>
Kernel map3(const KernelContext& ctx, Op op, int cost = Op::cost) {
  const Broadcast<3> layout(ctx.input(0).shape, ctx.input(1).shape, ctx.input(2).shape,
                            ctx.output(0).shape);
  const int64_t grain = grain_for(cost);
  return [layout, grain, op](const Args& args) {
    const A* a = args.in<A>(0);
    const B* b = args.in<B>(1);
    const C* c = args.in<C>(2);
    R* w = args.out<R>(0);
    parallel_for(layout.numel(), grain, [&](int64_t begin, int64_t end) {
      layout.for_each_run(begin, end, [&](const int64_t* offsets, int64_t out, int64_t count,
                                          const int64_t* steps) {
        const A* as = a + offsets[0];
        const B* bs = b + offsets[1];
        const C* cs = c + offsets[2];
        R* ws = w + out;
        for (int64_t i = 0; i < count; ++i) {
          ws[i] = convert<R>(
              op(load(as[i * steps[0]]), load(bs[i * steps[1]]), load(cs[i * steps[2]])));
        }
      });
    });
  };
}

// The kernel of a functor op of one input with dtypes `Set`.
template <class Op, DTypeSet Set, class Out = SameType>
Kernel unary_kernel(KernelContext& ctx) {
  return dispatch<Set>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    return map1<T, typename Out::template type<T>>(ctx, Op{});
  });
}

// The kernel of a functor op of two broadcast inputs of one dtype in `Set`.
template <class Op, DTypeSet Set, class Out = SameType>
Kernel binary_kernel(KernelContext& ctx) {
  return dispatch<Set>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    return map2<T, T, typename Out::template type<T>>(ctx, Op{});
  });
}

template <class Op, DTypeSet Set, class Out = SameType>
void add_unary(const char* op) {
  KernelRegistry::instance().add(op, Set | Out::outputs(Set), &unary_kernel<Op, Set, Out>);
}

template <class Op, DTypeSet Set, class Out = SameType>
void add_binary(const char* op) {
  KernelRegistry::instance().add(op, Set | Out::outputs(Set), &binary_kernel<Op, Set, Out>);
}

}  // namespace mskernel_cpu
