// Ops that work along an axis: the axis attribute normalised, and a C-contiguous shape seen as
// [outer, extent, inner] around one axis or a run of axes — the layout of scans, sorts,
// gathers, softmax, arg reductions and the normalisations, which work along the middle
// dimension (contiguous when inner == 1, with stride `inner` otherwise).  Each "line" (the
// middle dimension at one position of the others) starts at a known offset.
#pragma once

#include <cstdint>
#include <vector>

namespace mskernel_cpu {

// `axis` in [-rank, rank) as a dimension number (the op's rule has validated it).
inline int normalize_axis(int64_t axis, int rank) {
  return rank == 0 ? 0 : static_cast<int>((axis % rank + rank) % rank);
}

struct AxisSplit {
  int64_t outer = 1, extent = 1, inner = 1;

  int64_t numel() const { return outer * extent * inner; }
  // How many lines there are.
  int64_t lines() const { return outer * inner; }
  // Where line `line` starts in a tensor of this layout whose middle dimension has `length`
  // elements (the extent, or another tensor's along the same axis).
  int64_t start(int64_t line, int64_t length) const {
    const int64_t o = line / inner;
    return o * length * inner + (line - o * inner);
  }
};

// Dimensions [0, first) are outer, [first, last) the extent, [last, rank) inner (a rank-0
// tensor is one line of one element).
inline AxisSplit split_axes(const std::vector<int64_t>& shape, int first, int last) {
  AxisSplit s;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    (d < first ? s.outer : d < last ? s.extent : s.inner) *= shape[d];
  }
  return s;
}

// The split around the single axis `axis` (negative counts from the end).
inline AxisSplit split_axis(const std::vector<int64_t>& shape, int64_t axis) {
  const int a = normalize_axis(axis, static_cast<int>(shape.size()));
  return split_axes(shape, a, a + 1);
}

}  // namespace mskernel_cpu
