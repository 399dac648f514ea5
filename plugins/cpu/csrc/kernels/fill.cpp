// Creation ops: constant (the attribute's bytes, converted once at compile time where the
// device storage differs: bfloat16 arrives as float32), full (one value converted to the
// dtype, filled by element size) and iota (0, 1, ... along an axis, converted per element).
#include <algorithm>
#include <cstring>
#include <memory>

#include "mskernel_cpu/axis.hpp"
#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/strided_copy.hpp"

namespace mskernel_cpu {
namespace {

Kernel constant(KernelContext& ctx) {
  const ArrayAttr& value = ctx.attrs.get_array("value");
  const DType dtype = ctx.output(0).dtype;
  auto bytes = std::make_shared<std::vector<unsigned char>>(ctx.output(0).nbytes());
  if (dtype == DType::BFloat16 && value.dtype == DType::Float32) {
    const size_t count = value.bytes.size() / sizeof(float);
    for (size_t i = 0; i < count; ++i) {
      float v;
      std::memcpy(&v, value.bytes.data() + i * sizeof(float), sizeof(float));
      const bf16_t rounded = to_bf16(v);
      std::memcpy(bytes->data() + i * sizeof(bf16_t), &rounded, sizeof(bf16_t));
    }
  } else {
    if (value.dtype != dtype || value.bytes.size() != bytes->size()) {
      throw Error(ErrorKind::Type, std::string("constant: a ") + dtype_name(value.dtype) +
                                       " array cannot hold a " + dtype_name(dtype) + " value");
    }
    std::copy(value.bytes.begin(), value.bytes.end(), bytes->begin());
  }
  return [bytes](const Args& args) {
    if (!bytes->empty()) std::memcpy(args.outputs[0], bytes->data(), bytes->size());
  };
}

Kernel full(KernelContext& ctx) {
  const int64_t count = ctx.output(0).numel();
  const ElementBytes value = element_bytes(ctx.output(0).dtype, ctx.attrs.get_float("value"));
  return dispatch_element_size(itemsize(ctx.output(0).dtype), [&](auto tag) -> Kernel {
    using E = typename decltype(tag)::type;
    const E element = element_from<E>(value);
    const int64_t grain = std::max<int64_t>(1, kCopyTaskBytes / int64_t(sizeof(E)));
    return [=](const Args& args) {
      E* y = args.out<E>(0);
      parallel_for(count, grain, [&](int64_t begin, int64_t end) {
        std::fill(y + begin, y + end, element);
      });
    };
  });
}

// The output seen as (outer, length, inner): element (o, j, i) is j.
Kernel iota(KernelContext& ctx) {
  const std::vector<int64_t>& shape = ctx.output(0).shape;
  const size_t axis = normalize_axis(ctx.attrs.get_int("axis"), ctx.output(0).rank());
  const int64_t outer = dims_product(shape, 0, axis), length = shape[axis];
  const int64_t inner = dims_product(shape, axis + 1, shape.size());
  return dispatch<kNumeric>(ctx.output(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    const int64_t lines = outer * length;
    const int64_t line_bytes = int64_t(sizeof(T)) * std::max<int64_t>(1, inner);
    const int64_t grain = std::max<int64_t>(1, kCopyTaskBytes / line_bytes);
    if (inner == 1) {  // one count per row: rows of 0, 1, ..., length - 1
      const int64_t row_grain = std::max<int64_t>(1, grain / std::max<int64_t>(1, length));
      return [=](const Args& args) {
        T* y = args.out<T>(0);
        parallel_for(outer, row_grain, [&](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            for (int64_t j = 0; j < length; ++j) y[row * length + j] = convert<T>(j);
          }
        });
      };
    }
    return [=](const Args& args) {  // lines of `inner` equal counts
      T* y = args.out<T>(0);
      parallel_for(lines, grain, [&](int64_t begin, int64_t end) {
        for (int64_t line = begin; line < end; ++line) {
          std::fill_n(y + line * inner, inner, convert<T>(line % length));
        }
      });
    };
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("constant", kAll, constant);
MSKERNEL_CPU_KERNEL("full", kAll, full);
MSKERNEL_CPU_KERNEL("iota", kNumeric, iota);

}  // namespace mskernel_cpu
