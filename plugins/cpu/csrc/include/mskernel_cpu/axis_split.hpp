// A C-contiguous shape seen as [outer, extent, inner] around one axis or a run of axes: the
// common layout of softmax, arg reductions and the normalisations, which work along the
// middle dimension (contiguous when inner == 1, with stride `inner` otherwise).
#pragma once

#include <cstdint>
#include <vector>

namespace mskernel_cpu {

struct AxisSplit {
  int64_t outer = 1, extent = 1, inner = 1;

  int64_t numel() const { return outer * extent * inner; }
};

// Dimensions [0, first) are outer, [first, last) the extent, [last, rank) inner.
inline AxisSplit split_axes(const std::vector<int64_t>& shape, int first, int last) {
  AxisSplit s;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    (d < first ? s.outer : d < last ? s.extent : s.inner) *= shape[d];
  }
  return s;
}

// The split around the single axis `axis` (negative counts from the end).
inline AxisSplit split_axis(const std::vector<int64_t>& shape, int64_t axis) {
  const int rank = static_cast<int>(shape.size());
  const int a = static_cast<int>(((axis % rank) + rank) % rank);
  return split_axes(shape, a, a + 1);
}

}  // namespace mskernel_cpu
