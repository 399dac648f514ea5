// Selection and conversion: where (broadcast select), clip (attribute bounds) and cast
// (every dtype to every dtype, with NumPy's astype semantics; see convert.hpp).
#include "mskernel_cpu/elementwise.hpp"
#include "mskernel_cpu/functors.hpp"
#include "mskernel_cpu/scalar_math.hpp"

namespace mskernel_cpu {

using namespace functors;  // NOLINT: the scalar functors of these ops

namespace {

// where moves elements without looking at them, so it dispatches on the element size only.
template <size_t Size> struct Bytes { unsigned char b[Size]; };

Kernel where(KernelContext& ctx) {
  switch (itemsize(ctx.input(1).dtype)) {
    case 1: return map3<bool, uint8_t, uint8_t, uint8_t>(ctx, Select{});
    case 2: return map3<bool, uint16_t, uint16_t, uint16_t>(ctx, Select{});
    case 4: return map3<bool, uint32_t, uint32_t, uint32_t>(ctx, Select{});
    case 8: return map3<bool, uint64_t, uint64_t, uint64_t>(ctx, Select{});
    case 16: return map3<bool, Bytes<16>, Bytes<16>, Bytes<16>>(ctx, Select{});
    default: throw Error(ErrorKind::Type, "where: unsupported element size");
  }
}

Kernel clip(KernelContext& ctx) {
  const std::optional<double> low = ctx.attrs.get_optional_float("min");
  const std::optional<double> high = ctx.attrs.get_optional_float("max");
  return dispatch<kReal>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    return map1<T, T>(ctx, Clip<compute_t<T>>(low, high));
  });
}

Kernel cast(KernelContext& ctx) {
  return dispatch<kAll>(ctx.input(0).dtype, [&](auto from) -> Kernel {
    using From = typename decltype(from)::type;
    return dispatch<kAll>(ctx.output(0).dtype, [&](auto to) -> Kernel {
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
