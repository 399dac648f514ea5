// Sliding-window geometry shared by the convolution and pooling kernels, as
// mskernel/ops/windows.py defines it: output o and tap k of a spatial dim read input
// o * stride - pad_lo + k * dilation.  One to three spatial dims are held as three, the leading
// ones of size 1, so every kernel loops over (depth, height, width).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "mskernel_cpu/kernel.hpp"

namespace mskernel_cpu {

struct WindowGeometry {
  using Dims = std::array<int64_t, 3>;
  Dims in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, dilation{1, 1, 1};
  Dims pad_lo{0, 0, 0}, pad_hi{0, 0, 0};

  static int64_t product(const Dims& d) { return d[0] * d[1] * d[2]; }
  int64_t in_pixels() const { return product(in); }
  int64_t out_pixels() const { return product(out); }
  int64_t taps() const { return product(kernel); }

  int64_t input_index(int dim, int64_t o, int64_t k) const {
    return o * stride[dim] - pad_lo[dim] + k * dilation[dim];
  }

  // The outputs o whose tap k along `dim` reads inside the input: [begin, end) (maybe empty).
  std::pair<int64_t, int64_t> valid_range(int dim, int64_t k) const {
    const int64_t c = k * dilation[dim] - pad_lo[dim], s = stride[dim];
    const int64_t begin = c >= 0 ? 0 : (-c + s - 1) / s;          // first o with o*s + c >= 0
    const int64_t end = in[dim] - 1 - c < 0 ? 0 : (in[dim] - 1 - c) / s + 1;  // o*s + c < in
    return {begin, std::max(begin, end)};
  }

  // The outputs o in [first, first + count) whose tap k along `dim` reads inside the input,
  // as offsets [lo, hi) from `first` (lo == hi when there are none), given valid_range.
  static std::pair<int64_t, int64_t> clip(std::pair<int64_t, int64_t> range, int64_t first,
                                          int64_t count) {
    const int64_t lo = std::clamp(range.first - first, int64_t(0), count);
    return {lo, std::clamp(range.second - first, lo, count)};
  }

  // Is the tap k of output o inside the input along `dim`?
  bool inside(int dim, int64_t o, int64_t k) const {
    const int64_t i = input_index(dim, o, k);
    return i >= 0 && i < in[dim];
  }

  // Unit stride, no padding, same size in and out (a 1x1 kernel then reads each input exactly
  // once, in order).
  bool is_identity_walk() const {
    for (int d = 0; d < 3; ++d) {
      if (stride[d] != 1 || pad_lo[d] != 0 || in[d] != out[d]) return false;
    }
    return true;
  }
};

// The geometry of a window op reading `in_spatial` into `out_spatial` with the spatial
// `kernel`, from the op's attributes: `stride` (None: `default_stride`), `padding` ((lo, hi)
// pairs; None: none) and `dilation` (when the op has it; None: ones).
inline WindowGeometry window_geometry(const std::vector<int64_t>& in_spatial,
                                      const std::vector<int64_t>& out_spatial,
                                      const std::vector<int64_t>& kernel, const Attrs& attrs,
                                      const std::vector<int64_t>& default_stride) {
  const size_t n = in_spatial.size();
  const size_t skip = 3 - n;  // leading dims of size 1
  const auto stride = attrs.get_optional_ints("stride").value_or(default_stride);
  const auto padding = attrs.get_optional_ints("padding");
  const auto dilation = attrs.has("dilation") ? attrs.get_optional_ints("dilation")
                                              : std::optional<std::vector<int64_t>>();
  WindowGeometry g;
  for (size_t d = 0; d < n; ++d) {
    g.in[skip + d] = in_spatial[d];
    g.out[skip + d] = out_spatial[d];
    g.kernel[skip + d] = kernel[d];
    g.stride[skip + d] = stride[d];
    g.dilation[skip + d] = dilation ? (*dilation)[d] : 1;
    g.pad_lo[skip + d] = padding ? (*padding)[2 * d] : 0;
    g.pad_hi[skip + d] = padding ? (*padding)[2 * d + 1] : 0;
  }
  return g;
}

// The trailing (spatial) dims of a [N, C, *spatial] shape.
inline std::vector<int64_t> spatial_dims(const std::vector<int64_t>& shape) {
  return std::vector<int64_t>(shape.begin() + 2, shape.end());
}

}  // namespace mskernel_cpu
