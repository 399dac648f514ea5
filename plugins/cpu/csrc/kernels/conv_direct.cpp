// The direct float32 convolution behind conv (conv.hpp) for 1-D and 2-D windows of more than
// one tap: im2col + gemm spends about as long copying as multiplying on the small images of
// LeNet- and ResNet-style networks, so these read the input in place.
//
// A task is one (image, group, block of output rows).  It copies the input rows the block reads
// into a zero-padded tile (so the inner loop never tests bounds; rows are padded to a whole
// number of 8-pixel vectors), each row split into `stride` phases (every stride-th column) so
// that consecutive outputs read consecutive floats.  Then it accumulates register tiles of 12
// vectors over every input channel and tap, in one of two layouts:
//   pixel vectors    4 output channels x up to 3 vectors of 8 consecutive pixels (taken in
//                    row-major order over the block, several rows at once on narrow images):
//                    3 loads of input, 4 broadcasts of weights, 12 FMAs per tap;
//   channel vectors  when the width is not a multiple of 8 (pixel vectors would waste lanes)
//                    and C_out/G is: 6 pixels x 2 vectors of 8 channels (12 x 1 when C_out/G
//                    is an odd multiple of 8):
//                    2 loads of weights, 6 broadcasts of input, 12 FMAs per tap, the tile then
//                    transposed into the channel planes.
// The weight is repacked once per call as [group][channel block][C_in/G][taps][block] (zeros
// past C_out/G), block being the tile's channel count.

#include <algorithm>
#include <cstring>

#include "mskernel_cpu/conv.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define MSKERNEL_CPU_DIRECT_CONV 1
#endif

namespace mskernel_cpu {

#ifdef MSKERNEL_CPU_DIRECT_CONV

namespace {

constexpr int64_t kLanes = 8;          // floats per vector
constexpr int kChannels = 4;           // output channels of a pixel-vector tile
constexpr int64_t kMaxVectors = 3;     // pixel vectors of a pixel-vector tile
constexpr int kAccumulators = 12;      // vector registers of accumulators (of 16)
constexpr size_t kTileBytes = 256 << 10;
constexpr int64_t kMaxExtent = int64_t(1) << 20;      // window extents and output widths
constexpr int64_t kMaxStride = 16;                     // stride phases of a tile row
constexpr int64_t kMaxTileFloats = int64_t(16) << 20;  // 64 MiB of input tile per task

// Pixel vectors: acc[c][j] = sum over input channels and taps of w[c] * the 8 pixels of vector
// j, then stored to the `channels` valid output planes.
template <int V>
void pixel_tile(const DirectConvPlan& d, const float* tile, const int64_t* in_offsets,
                const float* weights, float* const* out_rows, const int64_t* out_offsets,
                const int64_t* counts, int64_t channels) {
  __m256 acc[kChannels][V];
  for (auto& row : acc) {
    for (auto& v : row) v = _mm256_setzero_ps();
  }
  const float* at[V];  // vector j reads at[j] + the read offset
  for (int j = 0; j < V; ++j) at[j] = tile + in_offsets[j];
  const int64_t* reads = d.read_offsets.data();
  const int64_t count = static_cast<int64_t>(d.read_offsets.size());
  for (int64_t k = 0; k < count; ++k, weights += kChannels) {
    const int64_t offset = reads[k];
    __m256 xv[V];
    for (int j = 0; j < V; ++j) xv[j] = _mm256_loadu_ps(at[j] + offset);
    for (int c = 0; c < kChannels; ++c) {
      const __m256 b = _mm256_broadcast_ss(weights + c);
      for (int j = 0; j < V; ++j) acc[c][j] = _mm256_fmadd_ps(b, xv[j], acc[c][j]);
    }
  }
  // Constant trip counts, so that acc stays in registers (a runtime index would spill it).
  for (int c = 0; c < kChannels; ++c) {
    if (c >= channels) break;
    for (int j = 0; j < V; ++j) {
      float* dst = out_rows[c] + out_offsets[j];
      if (counts[j] == kLanes) {
        _mm256_storeu_ps(dst, acc[c][j]);
      } else {
        alignas(32) float lanes[kLanes];
        _mm256_store_ps(lanes, acc[c][j]);
        std::memcpy(dst, lanes, sizeof(float) * static_cast<size_t>(counts[j]));
      }
    }
  }
}

// Channel vectors: acc[i][v] = sum over input channels and taps of the input at pixel i *
// w[8v .. 8v + 8), for P = 12 / CV pixels; out[i][c] receives the result.
template <int CV>
void channel_tile(const DirectConvPlan& d, const float* tile, const int64_t* in_offsets,
                  const float* weights, float (*out)[CV * kLanes]) {
  constexpr int P = kAccumulators / CV;
  __m256 acc[P][CV];
  for (auto& row : acc) {
    for (auto& v : row) v = _mm256_setzero_ps();
  }
  const float* at[P];  // pixel i reads at[i] + the read offset
  for (int i = 0; i < P; ++i) at[i] = tile + in_offsets[i];
  const int64_t* reads = d.read_offsets.data();
  const int64_t count = static_cast<int64_t>(d.read_offsets.size());
  for (int64_t k = 0; k < count; ++k, weights += CV * kLanes) {
    const int64_t offset = reads[k];
    __m256 wv[CV];
    for (int v = 0; v < CV; ++v) wv[v] = _mm256_loadu_ps(weights + v * kLanes);
    for (int i = 0; i < P; ++i) {
      const __m256 b = _mm256_broadcast_ss(at[i] + offset);
      for (int v = 0; v < CV; ++v) acc[i][v] = _mm256_fmadd_ps(b, wv[v], acc[i][v]);
    }
  }
  for (int i = 0; i < P; ++i) {
    for (int v = 0; v < CV; ++v) _mm256_storeu_ps(out[i] + v * kLanes, acc[i][v]);
  }
}

// Row t of channel ci of the tile holds input row first_row + t, zero-padded, split by phase:
// padded column pc = c + pad_lo lands at [pc % stride][pc / stride] (columns no window reads
// are left out).
void fill_tile(const WindowGeometry& g, const DirectConvPlan& d, const float* x,
               int64_t in_channels, int64_t first_row, int64_t tile_rows, float* tile) {
  const int64_t step = g.stride[2], phase = d.phase_width;
  for (int64_t ci = 0; ci < in_channels; ++ci) {
    for (int64_t t = 0; t < tile_rows; ++t) {
      float* row = tile + ci * d.tile_channel + t * d.tile_width;
      const int64_t ih = first_row + t;
      if (ih < 0 || ih >= g.in[1]) {
        std::fill(row, row + d.tile_width, 0.0f);
        continue;
      }
      const float* src = x + (ci * g.in[1] + ih) * g.in[2];
      for (const DirectConvPlan::PhaseCopy& c : d.phases) {
        float* dst = row + c.phase * phase;
        std::fill(dst, dst + c.start, 0.0f);
        if (step == 1) {
          std::memcpy(dst + c.start, src, sizeof(float) * static_cast<size_t>(c.count));
        } else {
          for (int64_t i = 0; i < c.count; ++i) dst[c.start + i] = src[c.first + i * step];
        }
        std::fill(dst + c.start + c.count, dst + phase, 0.0f);
      }
    }
  }
}

// packed[g][block][ci][t][c] = w[g * out_per_group + block * size + c][ci][t] for c < size
// (the channels of a register tile), zero past the group.
void pack_weight(const ConvPlan& p, const float* w, float* packed) {
  const int64_t taps = p.window.taps(), size = p.direct.block_channels;
  const int64_t per_block = p.in_per_group * taps * size;
  for (int64_t g = 0; g < p.groups; ++g) {
    for (int64_t b = 0; b < p.direct.channel_blocks; ++b) {
      float* dst = packed + (g * p.direct.channel_blocks + b) * per_block;
      for (int64_t c = 0; c < size; ++c) {
        const int64_t co = b * size + c;
        const float* src = w + (g * p.out_per_group + co) * p.in_per_group * taps;
        for (int64_t i = 0; i < p.in_per_group * taps; ++i) {
          dst[i * size + c] = co < p.out_per_group ? src[i] : 0.0f;
        }
      }
    }
  }
}

// The outputs of the task's rows [r0, r0 + rows), in pixel-vector tiles.
void pixel_vector_tiles(const ConvPlan& p, int64_t r0, int64_t rows, const float* tile,
                        const float* packed, int64_t group, const Epilogue<float>& epilogue,
                        float* y_group) {
  const WindowGeometry& g = p.window;
  const DirectConvPlan& d = p.direct;
  const int64_t vectors = (g.out[2] + kLanes - 1) / kLanes, out_pixels = g.out_pixels();
  const int64_t per_block = p.in_per_group * g.taps() * kChannels;
  const int64_t count = rows * vectors;
  for (int64_t v0 = 0; v0 < count; v0 += kMaxVectors) {
    const int64_t n = std::min(kMaxVectors, count - v0);
    int64_t in_offsets[kMaxVectors], out_offsets[kMaxVectors], counts[kMaxVectors];
    for (int64_t j = 0; j < n; ++j) {
      const int64_t row = (v0 + j) / vectors, col = (v0 + j) % vectors * kLanes;
      in_offsets[j] = row * g.stride[1] * d.tile_width + col;
      out_offsets[j] = (r0 + row) * g.out[2] + col;
      counts[j] = std::min(kLanes, g.out[2] - col);
    }
    for (int64_t b = 0; b < d.channel_blocks; ++b) {
      const int64_t first = b * kChannels;
      const int64_t channels = std::min<int64_t>(kChannels, p.out_per_group - first);
      float* out_rows[kChannels];
      for (int64_t c = 0; c < kChannels; ++c) {
        out_rows[c] = y_group + (first + std::min(c, channels - 1)) * out_pixels;
      }
      const float* weights = packed + (group * d.channel_blocks + b) * per_block;
      if (n == 3) {
        pixel_tile<3>(d, tile, in_offsets, weights, out_rows, out_offsets, counts, channels);
      } else if (n == 2) {
        pixel_tile<2>(d, tile, in_offsets, weights, out_rows, out_offsets, counts, channels);
      } else {
        pixel_tile<1>(d, tile, in_offsets, weights, out_rows, out_offsets, counts, channels);
      }
      if (epilogue.trivial()) continue;
      for (int64_t c = 0; c < channels; ++c) {
        for (int64_t j = 0; j < n; ++j) {
          float* run = out_rows[c] + out_offsets[j];
          finish_channel_run(epilogue, group * p.out_per_group + first + c, run, run,
                             counts[j]);
        }
      }
    }
  }
}

// The outputs of the task's rows [r0, r0 + rows), in channel-vector tiles of CV vectors.
template <int CV>
void channel_vector_tiles(const ConvPlan& p, int64_t r0, int64_t rows, const float* tile,
                          const float* packed, int64_t group, const Epilogue<float>& epilogue,
                          float* y_group) {
  constexpr int P = kAccumulators / CV, C = CV * kLanes;
  const WindowGeometry& g = p.window;
  const DirectConvPlan& d = p.direct;
  const int64_t width = g.out[2], out_pixels = g.out_pixels();
  const int64_t per_block = p.in_per_group * g.taps() * C;
  const int64_t count = rows * width;
  for (int64_t q0 = 0; q0 < count; q0 += P) {
    const int64_t n = std::min<int64_t>(P, count - q0);
    int64_t in_offsets[P], out_offsets[P];
    for (int64_t i = 0; i < P; ++i) {
      const int64_t q = q0 + std::min(i, n - 1);  // past the end: repeat the last pixel
      in_offsets[i] = q / width * g.stride[1] * d.tile_width + q % width;
      out_offsets[i] = r0 * width + q;
    }
    for (int64_t b = 0; b < d.channel_blocks; ++b) {
      alignas(32) float out[P][C];
      channel_tile<CV>(d, tile, in_offsets, packed + (group * d.channel_blocks + b) * per_block,
                       out);
      for (int64_t c = 0; c < C; ++c) {
        float run[P];
        for (int64_t i = 0; i < n; ++i) run[i] = out[i][c];
        const int64_t channel = b * C + c;
        if (!epilogue.trivial()) {
          finish_channel_run(epilogue, group * p.out_per_group + channel, run, run, n);
        }
        float* plane = y_group + channel * out_pixels;
        for (int64_t i = 0; i < n; ++i) plane[out_offsets[i]] = run[i];
      }
    }
  }
}

}  // namespace

bool plan_direct_conv(ConvPlan& p) {
  const WindowGeometry& g = p.window;
  // 1x1 kernels read each input once: the copy into a tile would cost as much as the
  // multiplications, which gemm does at least as fast.
  if (g.taps() == 1 || !depth_is_identity(g)) return false;
  DirectConvPlan& d = p.direct;
  const int64_t vectors = (g.out[2] + kLanes - 1) / kLanes;
  const int64_t extent_h = g.dilation[1] * (g.kernel[1] - 1) + 1;
  const int64_t extent_w = g.dilation[2] * (g.kernel[2] - 1) + 1;
  // Tiles span the window's extent: a dilation as large as the padding allows would make
  // tiles of mostly padding, as large as the attributes say.  im2col's scratch is bounded by
  // the tensors instead.
  if (extent_h > kMaxExtent || extent_w > kMaxExtent || g.stride[2] > kMaxStride ||
      g.out[2] > kMaxExtent) {
    return false;
  }
  const int64_t step = g.stride[2];
  d.phase_width = vectors * kLanes + (extent_w - 1) / step;
  d.tile_width = step * d.phase_width;
  for (int64_t ph = 0; ph < step; ++ph) {
    DirectConvPlan::PhaseCopy c;
    c.phase = ph;
    c.first = ((ph - g.pad_lo[2]) % step + step) % step;  // first column landing in phase ph
    c.start = (c.first + g.pad_lo[2]) / step;
    c.count = std::clamp((g.in[2] - c.first + step - 1) / step, int64_t(0),
                         std::max<int64_t>(0, d.phase_width - c.start));
    c.start = std::min(c.start, d.phase_width);
    d.phases.push_back(c);
  }
  const int64_t images = std::max<int64_t>(1, p.batch * p.groups);
  const int64_t splits = std::min(g.out[1], (num_threads() + images - 1) / images);
  const int64_t row_bytes = std::max<int64_t>(1, p.in_per_group) * d.tile_width * 4;
  const int64_t fitting = std::max<int64_t>(
      1, (int64_t(kTileBytes) / row_bytes - extent_h) / g.stride[1] + 1);
  d.row_block = std::min((g.out[1] + splits - 1) / splits, fitting);
  d.row_blocks = (g.out[1] + d.row_block - 1) / d.row_block;
  d.tile_floats = p.in_per_group * d.tile_rows(d.row_block, g) * d.tile_width;
  if (d.tile_floats > kMaxTileFloats) {
    p.direct = DirectConvPlan{};
    return false;
  }
  // Channel vectors where pixel vectors would run past the row ends (and C_out/G allows).
  if (g.out[2] % kLanes != 0 && p.out_per_group % kLanes == 0) {
    d.channel_vectors = p.out_per_group % (2 * kLanes) == 0 ? 2 : 1;
    d.block_channels = d.channel_vectors * kLanes;
  } else {
    d.channel_vectors = 0;
    d.block_channels = kChannels;
  }
  d.channel_blocks = (p.out_per_group + d.block_channels - 1) / d.block_channels;
  d.tile_channel = d.tile_rows(d.row_block, g) * d.tile_width;
  for (int64_t ci = 0; ci < p.in_per_group; ++ci) {
    for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
        const int64_t column = kw * g.dilation[2];
        d.read_offsets.push_back(ci * d.tile_channel + kh * g.dilation[1] * d.tile_width +
                                 column % step * d.phase_width + column / step);
      }
    }
  }
  const int64_t packed = p.groups * d.channel_blocks * d.block_channels * p.in_per_group *
                         g.taps();
  d.weight_bytes = (static_cast<size_t>(packed) * sizeof(float) + 63) / 64 * 64;
  const double flops = double(d.channel_blocks * d.block_channels) * double(p.rows) *
                       double(d.row_block * vectors * kLanes);
  p.slots = plan_task_slots(p.batch * p.groups * d.row_blocks, flops,
                            static_cast<size_t>(d.tile_floats) * sizeof(float));
  p.workspace_bytes = d.weight_bytes + p.slots.bytes();
  d.used = true;
  return true;
}

void conv_direct(const ConvPlan& p, const float* x, const float* w,
                 const Epilogue<float>& epilogue, float* y, void* workspace) {
  const WindowGeometry& g = p.window;
  const DirectConvPlan& d = p.direct;
  float* packed = static_cast<float*>(workspace);
  pack_weight(p, w, packed);
  const int64_t out_pixels = g.out_pixels();
  char* slots = static_cast<char*>(workspace) + d.weight_bytes;
  p.slots.run(slots, [&](int64_t begin, int64_t end, void* scratch) {
    float* tile = static_cast<float*>(scratch);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t image_group = task / d.row_blocks, group = image_group % p.groups;
      const int64_t r0 = task % d.row_blocks * d.row_block;
      const int64_t rows = std::min(d.row_block, g.out[1] - r0);
      fill_tile(g, d, x + image_group * p.in_per_group * g.in_pixels(), p.in_per_group,
                r0 * g.stride[1] - g.pad_lo[1], d.tile_rows(rows, g), tile);
      float* y_group = y + image_group * p.out_per_group * out_pixels;
      if (d.channel_vectors == 2) {
        channel_vector_tiles<2>(p, r0, rows, tile, packed, group, epilogue, y_group);
      } else if (d.channel_vectors == 1) {
        channel_vector_tiles<1>(p, r0, rows, tile, packed, group, epilogue, y_group);
      } else {
        pixel_vector_tiles(p, r0, rows, tile, packed, group, epilogue, y_group);
      }
    }
  });
}

#else  // without AVX2 and FMA, conv uses im2col + gemm throughout

bool plan_direct_conv(ConvPlan&) { return false; }

void conv_direct(const ConvPlan&, const float*, const float*, const Epilogue<float>&, float*,
                 void*) {}

#endif

}  // namespace mskernel_cpu
