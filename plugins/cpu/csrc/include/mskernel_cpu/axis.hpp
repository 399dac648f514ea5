// Ops that work along one axis: the axis attribute normalised, and a tensor viewed as
// [outer, size, inner] around it, so that each "line" (the axis at one position of the other
// dimensions) starts at a known offset and steps by `inner`.
#pragma once

#include <cstdint>
#include <vector>

namespace mskernel_cpu {

// `axis` in [-rank, rank) as a dimension number (the op's rule has validated it).
inline int normalize_axis(int64_t axis, int rank) {
  return rank == 0 ? 0 : static_cast<int>((axis % rank + rank) % rank);
}

struct AxisLines {
  int64_t outer = 1, size = 1, inner = 1;

  // The lines of `shape` along `axis` (a rank-0 tensor is one line of one element).
  AxisLines(const std::vector<int64_t>& shape, int axis) {
    const int rank = static_cast<int>(shape.size());
    for (int d = 0; d < axis && d < rank; ++d) outer *= shape[d];
    for (int d = axis + 1; d < rank; ++d) inner *= shape[d];
    if (rank > 0) size = shape[axis];
  }

  int64_t count() const { return outer * inner; }
  // Where line `line` starts in a tensor of this layout whose axis has `length` elements.
  int64_t start(int64_t line, int64_t length) const {
    const int64_t o = line / inner;
    return o * length * inner + (line - o * inner);
  }
};

}  // namespace mskernel_cpu
