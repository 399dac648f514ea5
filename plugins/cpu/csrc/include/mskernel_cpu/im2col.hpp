// im2col and its adjoint col2im over a block of output pixels, for the GEMM-based convolutions.
//
// The im2col matrix of `channels` input channels and output pixels [p0, p1) has one row per
// (channel, kd, kh, kw) and one column per output pixel: entry [row, p] is the input element
// that tap reads for output p (zero in the padding).  Rows are visited in runs along the last
// spatial dim, so the inner loops are contiguous copies (stride 1) or strided gathers; when
// the window moves by 1 and keeps the width (a "same" convolution), whole planes are one copy.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "mskernel_cpu/convert.hpp"
#include "mskernel_cpu/window.hpp"

namespace mskernel_cpu {

// Calls run(col, count, input, lo, hi) for every run of the im2col matrix of `channels`
// channels over output pixels [p0, p1): `col` is the offset of the run's first entry in the
// matrix (row-major, p1 - p0 columns), `count` its length, `input` the offset in the
// [channels, *in] input of the element its first output would read (only entries [lo, hi)
// lie inside the input; the others are padding), and the entries advance through the input by
// stride[2].
template <class Run>
void for_each_im2col_run(const WindowGeometry& g, int64_t channels, int64_t p0, int64_t p1,
                         Run&& run) {
  const int64_t width = p1 - p0, plane = g.out[1] * g.out[2], taps = g.taps();
  const int64_t od0 = p0 / plane, oh0 = p0 % plane / g.out[2], ow0 = p0 % g.out[2];
  int64_t tap = 0;
  for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
    for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw, ++tap) {
        const auto valid = g.valid_range(2, kw);
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t col = (c * taps + tap) * width - p0;  // + p: the run's first entry
          int64_t od = od0, oh = oh0, ow = ow0;
          for (int64_t p = p0; p < p1;) {
            const int64_t count = std::min(g.out[2] - ow, p1 - p);
            const int64_t id = g.input_index(0, od, kd), ih = g.input_index(1, oh, kh);
            if (id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1]) {
              const auto [lo, hi] = WindowGeometry::clip(valid, ow, count);
              const int64_t input = ((c * g.in[0] + id) * g.in[1] + ih) * g.in[2] +
                                    g.input_index(2, ow, kw);
              run(col + p, count, input, lo, hi);
            } else {
              run(col + p, count, int64_t(0), int64_t(0), int64_t(0));
            }
            p += count;
            ow = 0;
            if (++oh == g.out[1]) oh = 0, ++od;
          }
        }
      }
    }
  }
}

// to[j] = load(from[j]) for j < count, in blocks of 8 (vector moves): GCC would turn a plain
// copy loop into an inline `rep movs`, slow on the short runs of im2col.
template <class T, class C>
void copy_run(const T* from, C* to, int64_t count) {
  int64_t j = 0;
  for (; j + 8 <= count; j += 8) {
    C block[8];
    for (int k = 0; k < 8; ++k) block[k] = load(from[j + k]);
    for (int k = 0; k < 8; ++k) to[j + k] = block[k];
  }
  for (; j < count; ++j) to[j] = load(from[j]);
}

// row[i] = 0 for i in [from, to) (nothing when to <= from).
template <class C>
void zero_between(C* row, int64_t from, int64_t to) {
  if (from < to) std::fill(row + from, row + to, C(0));
}

// im2col when the window moves by 1 along height and width and the output is as wide as the
// input: then the output rows of a plane read consecutive input rows, and a (channel, tap) row
// of the matrix is, plane by plane, one contiguous stretch of the input, copied whole; the
// entries that read padding columns are zeroed afterwards.
template <class T, class C>
void im2col_row_spans(const WindowGeometry& g, const T* x, int64_t channels, int64_t p0,
                      int64_t p1, C* cols) {
  const int64_t width = p1 - p0, w = g.in[2], plane = g.out[1] * w, taps = g.taps();
  const int64_t in_plane = g.in[1] * w;
  int64_t tap = 0;
  for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
    for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
      const auto rows = g.valid_range(1, kh);
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw, ++tap) {
        const auto [lo, hi] = g.valid_range(2, kw);
        // Output pixel q of plane od reads input plane id at q - od * plane + shift.
        const int64_t shift = g.input_index(1, 0, kh) * w + g.input_index(2, 0, kw);
        for (int64_t c = 0; c < channels; ++c) {
          C* row = cols + (c * taps + tap) * width - p0;  // indexed by the pixel
          for (int64_t p = p0; p < p1;) {
            const int64_t od = p / plane, start = od * plane;
            const int64_t end = std::min(start + plane, p1);
            const int64_t id = g.input_index(0, od, kd);
            int64_t q0 = p, q1 = p;  // the pixels whose rows read inside the input
            if (id >= 0 && id < g.in[0]) {
              q0 = std::clamp(start + rows.first * w, p, end);
              q1 = std::max(q0, std::min(end, start + rows.second * w));
            }
            std::fill(row + p, row + q0, C(0));
            if (q0 < q1) {
              const int64_t source = (c * g.in[0] + id) * in_plane - start + shift;  // + q
              // Pixels reading outside the input plane lie in padding columns: zero them.
              const int64_t a = std::clamp(start - shift, q0, q1);
              const int64_t b = std::clamp(start - shift + in_plane, a, q1);
              std::fill(row + q0, row + a, C(0));
              if constexpr (std::is_same_v<T, C>) {
                std::memcpy(row + a, x + (source + a), sizeof(C) * size_t(b - a));
              } else {
                copy_run(x + (source + a), row + a, b - a);
              }
              std::fill(row + b, row + q1, C(0));
              const bool patches = lo > 0 || hi < w;
              for (int64_t r = start + (q0 - start) / w * w; patches && r < q1; r += w) {
                zero_between(row, std::max(r, q0), std::min(r + lo, q1));
                zero_between(row, std::max(r + hi, q0), std::min(r + w, q1));
              }
            }
            std::fill(row + q1, row + end, C(0));
            p = end;
          }
        }
      }
    }
  }
}

// cols[(channels * taps), p1 - p0] = the im2col matrix of x [channels, *in], widened to C.
template <class T, class C>
void im2col(const WindowGeometry& g, const T* x, int64_t channels, int64_t p0, int64_t p1,
            C* cols) {
  if (g.stride[1] == 1 && g.stride[2] == 1 && g.out[2] == g.in[2]) {
    return im2col_row_spans(g, x, channels, p0, p1, cols);
  }
  const int64_t step = g.stride[2];
  for_each_im2col_run(g, channels, p0, p1,
                      [&](int64_t col, int64_t count, int64_t input, int64_t lo, int64_t hi) {
    C* dst = cols + col;
    std::fill(dst, dst + lo, C(0));
    if (lo < hi) {
      const T* src = x + (input + lo * step);
      C* inside = dst + lo;
      if (step == 1) {
        copy_run(src, inside, hi - lo);
      } else {
        for (int64_t j = 0; j < hi - lo; ++j) inside[j] = load(src[j * step]);
      }
    }
    std::fill(dst + hi, dst + count, C(0));
  });
}

// x [channels, *in] += the adjoint of im2col applied to cols (what lies in the padding is
// dropped).
template <class C>
void col2im_add(const WindowGeometry& g, const C* cols, int64_t channels, int64_t p0,
                int64_t p1, C* x) {
  const int64_t step = g.stride[2];
  for_each_im2col_run(g, channels, p0, p1,
                      [&](int64_t col, int64_t, int64_t input, int64_t lo, int64_t hi) {
    if (lo == hi) return;
    const C* src = cols + col + lo;
    C* dst = x + (input + lo * step);
    if (step == 1) {
      for (int64_t j = 0; j < hi - lo; ++j) dst[j] += src[j];
    } else {
      for (int64_t j = 0; j < hi - lo; ++j) dst[j * step] += src[j];
    }
  });
}

}  // namespace mskernel_cpu
