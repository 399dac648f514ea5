// tril and triu: each row of each matrix is a prefix kept and the rest zeroed (tril) or a
// prefix zeroed and the rest kept (triu), the split column clamped to the row; a memcpy and a
// memset per row.  Zero bytes are zero in every dtype (false, +0.0, 0 + 0j), so the kernel
// moves elements by size.
#include <algorithm>
#include <cstring>

#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/strided_copy.hpp"

namespace mskernel_cpu {
namespace {

// Row i of a matrix keeps columns j with j - i <= k (tril) or j - i >= k (triu).
template <bool Lower>
Kernel triangle(KernelContext& ctx) {
  const std::vector<int64_t>& shape = ctx.input(0).shape;  // rank >= 2 (the op's rule says)
  const int64_t rows = shape[shape.size() - 2], columns = shape.back();
  const int64_t lines = columns == 0 ? 0 : ctx.input(0).numel() / columns;
  // Beyond these bounds k keeps or zeroes whole rows; clamping also rules out overflow.
  const int64_t k = std::clamp<int64_t>(ctx.attrs.get_int("k"), -rows - 1, columns + 1);
  const size_t element = itemsize(ctx.input(0).dtype);
  const int64_t grain = std::max<int64_t>(1, kCopyTaskBytes / int64_t(columns * element + 1));
  return [=](const Args& args) {
    const auto* x = static_cast<const unsigned char*>(args.inputs[0]);
    auto* y = static_cast<unsigned char*>(args.outputs[0]);
    const size_t row_bytes = static_cast<size_t>(columns) * element;
    parallel_for(lines, grain, [&](int64_t begin, int64_t end) {
      for (int64_t line = begin; line < end; ++line) {
        const int64_t i = line % rows;
        // Columns [0, split) are kept by tril and zeroed by triu.
        const int64_t split = std::clamp<int64_t>(Lower ? i + k + 1 : i + k, 0, columns);
        const size_t head = static_cast<size_t>(split) * element;
        const size_t at = static_cast<size_t>(line) * row_bytes;
        if constexpr (Lower) {
          std::memcpy(y + at, x + at, head);
          std::memset(y + at + head, 0, row_bytes - head);
        } else {
          std::memset(y + at, 0, head);
          std::memcpy(y + at + head, x + at + head, row_bytes - head);
        }
      }
    });
  };
}

}  // namespace

MSKERNEL_CPU_KERNEL("tril", kAll, triangle<true>);
MSKERNEL_CPU_KERNEL("triu", kAll, triangle<false>);

}  // namespace mskernel_cpu
