// Selection and conversion: where (broadcast select), clip (attribute bounds) and cast
// (every dtype to every dtype, with NumPy's astype semantics; see convert.hpp).
#include "mskernel_cpu/elementwise.hpp"
#include "mskernel_cpu/scalar_math.hpp"

namespace mskernel_cpu {
namespace {

// where moves elements without looking at them, so it dispatches on the element size only.
template <size_t Size> struct Bytes { unsigned char b[Size]; };

struct Select : CheapOp {
  template <class T> T operator()(bool condition, T x, T y) const { return condition ? x : y; }
};

Kernel where(KernelContext& ctx) {
  switch (itemsize(ctx.inputs[1].dtype)) {
    case 1: return map3<bool, uint8_t, uint8_t, uint8_t>(ctx, Select{});
    case 2: return map3<bool, uint16_t, uint16_t, uint16_t>(ctx, Select{});
    case 4: return map3<bool, uint32_t, uint32_t, uint32_t>(ctx, Select{});
    case 8: return map3<bool, uint64_t, uint64_t, uint64_t>(ctx, Select{});
    case 16: return map3<bool, Bytes<16>, Bytes<16>, Bytes<16>>(ctx, Select{});
    default: throw Error(ErrorKind::Type, "where: unsupported element size");
  }
}

// np.maximum(x, min) then np.minimum(.., max); the bounds are converted to x's type first
// (truncated toward zero for integers, as the reference's astype).
template <class C> struct Clip : CheapOp {
  Clip(std::optional<double> low_bound, std::optional<double> high_bound)
      : has_low(low_bound.has_value()), has_high(high_bound.has_value()),
        low(convert<C>(low_bound.value_or(0.0))), high(convert<C>(high_bound.value_or(0.0))) {}
  bool has_low, has_high;
  C low, high;
  C operator()(C x) const {
    if (has_low) x = nan_maximum(x, low);
    if (has_high) x = nan_minimum(x, high);
    return x;
  }
};

Kernel clip(KernelContext& ctx) {
  const std::optional<double> low = ctx.attrs.get_optional_float("min");
  const std::optional<double> high = ctx.attrs.get_optional_float("max");
  return dispatch<kReal>(ctx.inputs[0].dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    return map1<T, T>(ctx, Clip<compute_t<T>>(low, high));
  });
}

struct Identity : CheapOp {
  template <class C> C operator()(C x) const { return x; }
};

Kernel cast(KernelContext& ctx) {
  return dispatch<kAll>(ctx.inputs[0].dtype, [&](auto from) -> Kernel {
    using From = typename decltype(from)::type;
    return dispatch<kAll>(ctx.outputs[0].dtype, [&](auto to) -> Kernel {
      using To = typename decltype(to)::type;
      return map1<From, To>(ctx, Identity{});
    });
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("where", kAll, where);
MSKERNEL_CPU_KERNEL("clip", kReal, clip);
MSKERNEL_CPU_KERNEL("cast", kAll, cast);

}  // namespace mskernel_cpu
