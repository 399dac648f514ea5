// StridedCopy (see strided_copy.hpp): merging dimensions at compile time, then runs along the
// last dimension or cache-sized tiles for transposes, split across threads.  Also the
// header's shape arithmetic and fill-value conversion.
#include "mskernel_cpu/strided_copy.hpp"

#include <algorithm>
#include <cstring>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "mskernel_cpu/convert.hpp"
#include "mskernel_cpu/parallel.hpp"

namespace mskernel_cpu {
namespace {

// Tiles of kTile x kTile elements, a tile of source and output lines staying in L1, copied
// as kBlock x kBlock blocks (in registers for 4-byte elements).
constexpr int64_t kTile = 32;
constexpr int64_t kBlock = 8;
// Runs shorter than this many bytes are copied several rows at a time.
constexpr int64_t kShortRunBytes = 128;
// Runs of up to this many bytes are prefetched kPrefetchRuns rows ahead.
constexpr int64_t kPrefetchRunBytes = 1024;
constexpr int64_t kPrefetchRuns = 4;
// Both tiled dimensions must be at least this long for tiles to pay over plain gathers.
constexpr int64_t kMinTiledLength = 8;

template <class E>
void copy_run(E* destination, const E* source, int64_t count, int64_t step) {
  if (step == 1) {
    std::memcpy(destination, source, static_cast<size_t>(count) * sizeof(E));
  } else if (step == 0) {
    std::fill_n(destination, count, *source);
  } else if (step == -1) {  // a reversal, vectorised as one
    for (int64_t i = 0; i < count; ++i) destination[i] = source[-i];
  } else {
    for (int64_t i = 0; i < count; ++i) destination[i] = source[i * step];
  }
}

// `rows` short runs of `length`, row r read from from + r * row_step.
template <class E>
void copy_short_rows(E* to, const E* from, int64_t rows, int64_t row_step, int64_t length,
                     int64_t step) {
  if (step == 0) {
    for (int64_t r = 0; r < rows; ++r) std::fill_n(to + r * length, length, from[r * row_step]);
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < length; ++i) to[r * length + i] = from[r * row_step + i * step];
    }
  }
}

// to[r * to_row + c] = from[r + c * from_column] for a kBlock x kBlock block.
template <class E>
void transpose_block(const E* from, int64_t from_column, E* to, int64_t to_row) {
  for (int64_t r = 0; r < kBlock; ++r) {
    for (int64_t c = 0; c < kBlock; ++c) to[r * to_row + c] = from[r + c * from_column];
  }
}

#ifdef __AVX2__
// Blocks in AVX registers (scalar code is slow here: the compiler turns the strided loads
// into gathers).  4-byte elements: the 8 x 8 block through eight registers.
template <>
void transpose_block<uint32_t>(const uint32_t* from, int64_t from_column, uint32_t* to,
                               int64_t to_row) {
  static_assert(kBlock == 8, "the AVX2 block is 8 x 8");
  const auto* in = reinterpret_cast<const float*>(from);
  auto* out = reinterpret_cast<float*>(to);
  __m256 row[8], pair[8], quad[8];
  for (int i = 0; i < 8; ++i) row[i] = _mm256_loadu_ps(in + i * from_column);
  for (int i = 0; i < 8; i += 2) {
    pair[i] = _mm256_unpacklo_ps(row[i], row[i + 1]);
    pair[i + 1] = _mm256_unpackhi_ps(row[i], row[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    quad[i] = _mm256_shuffle_ps(pair[i], pair[i + 2], 0x44);
    quad[i + 1] = _mm256_shuffle_ps(pair[i], pair[i + 2], 0xEE);
    quad[i + 2] = _mm256_shuffle_ps(pair[i + 1], pair[i + 3], 0x44);
    quad[i + 3] = _mm256_shuffle_ps(pair[i + 1], pair[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(out + i * to_row, _mm256_permute2f128_ps(quad[i], quad[i + 4], 0x20));
    _mm256_storeu_ps(out + (i + 4) * to_row, _mm256_permute2f128_ps(quad[i], quad[i + 4], 0x31));
  }
}

// 2-byte elements: the 8 x 8 block through eight SSE registers.
template <>
void transpose_block<uint16_t>(const uint16_t* from, int64_t from_column, uint16_t* to,
                               int64_t to_row) {
  __m128i column[8], pair[8], quad[8];
  for (int i = 0; i < 8; ++i) {
    column[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i * from_column));
  }
  for (int i = 0; i < 8; i += 2) {
    pair[i] = _mm_unpacklo_epi16(column[i], column[i + 1]);
    pair[i + 1] = _mm_unpackhi_epi16(column[i], column[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    quad[i] = _mm_unpacklo_epi32(pair[i], pair[i + 2]);
    quad[i + 1] = _mm_unpackhi_epi32(pair[i], pair[i + 2]);
    quad[i + 2] = _mm_unpacklo_epi32(pair[i + 1], pair[i + 3]);
    quad[i + 3] = _mm_unpackhi_epi32(pair[i + 1], pair[i + 3]);
  }
  for (int i = 0; i < 4; ++i) {
    auto* out = reinterpret_cast<__m128i*>(to + 2 * i * to_row);
    auto* next = reinterpret_cast<__m128i*>(to + (2 * i + 1) * to_row);
    _mm_storeu_si128(out, _mm_unpacklo_epi64(quad[i], quad[i + 4]));
    _mm_storeu_si128(next, _mm_unpackhi_epi64(quad[i], quad[i + 4]));
  }
}

// 8-byte elements: four 4 x 4 blocks.
template <>
void transpose_block<uint64_t>(const uint64_t* from, int64_t from_column, uint64_t* to,
                               int64_t to_row) {
  for (int64_t r = 0; r < kBlock; r += 4) {
    for (int64_t c = 0; c < kBlock; c += 4) {
      const auto* in = reinterpret_cast<const double*>(from + r + c * from_column);
      auto* out = reinterpret_cast<double*>(to + r * to_row + c);
      __m256d row[4], pair[4];
      for (int i = 0; i < 4; ++i) row[i] = _mm256_loadu_pd(in + i * from_column);
      pair[0] = _mm256_unpacklo_pd(row[0], row[1]);
      pair[1] = _mm256_unpackhi_pd(row[0], row[1]);
      pair[2] = _mm256_unpacklo_pd(row[2], row[3]);
      pair[3] = _mm256_unpackhi_pd(row[2], row[3]);
      for (int i = 0; i < 2; ++i) {
        _mm256_storeu_pd(out + i * to_row, _mm256_permute2f128_pd(pair[i], pair[i + 2], 0x20));
        _mm256_storeu_pd(out + (i + 2) * to_row,
                         _mm256_permute2f128_pd(pair[i], pair[i + 2], 0x31));
      }
    }
  }
}

// 16-byte elements: 2 x 2 blocks, one element per 128-bit lane.
template <>
void transpose_block<Element16>(const Element16* from, int64_t from_column, Element16* to,
                                int64_t to_row) {
  for (int64_t r = 0; r < kBlock; r += 2) {
    for (int64_t c = 0; c < kBlock; c += 2) {
      const auto* in = reinterpret_cast<const double*>(from + r + c * from_column);
      auto* out = reinterpret_cast<double*>(to + r * to_row + c);
      const __m256d left = _mm256_loadu_pd(in);
      const __m256d right = _mm256_loadu_pd(in + 2 * from_column);
      _mm256_storeu_pd(out, _mm256_permute2f128_pd(left, right, 0x20));
      _mm256_storeu_pd(out + 2 * to_row, _mm256_permute2f128_pd(left, right, 0x31));
    }
  }
}
#endif

// A tile of height x width elements: whole blocks, then the ragged edges.
template <class E>
void transpose_tile(const E* from, int64_t from_column, E* to, int64_t to_row, int64_t height,
                    int64_t width) {
  const int64_t full_height = height - height % kBlock, full_width = width - width % kBlock;
  for (int64_t r = 0; r < full_height; r += kBlock) {
    for (int64_t c = 0; c < full_width; c += kBlock) {
      transpose_block(from + r + c * from_column, from_column, to + r * to_row + c, to_row);
    }
  }
  for (int64_t r = 0; r < height; ++r) {
    const int64_t c_begin = r < full_height ? full_width : 0;
    for (int64_t c = c_begin; c < width; ++c) to[r * to_row + c] = from[r + c * from_column];
  }
}

}  // namespace

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * shape[d + 1];
  }
  return strides;
}

int64_t dims_product(const std::vector<int64_t>& shape, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t d = begin; d < end; ++d) product *= shape[d];
  return product;
}

ElementBytes element_bytes(DType dtype, double value) {
  return dispatch<kAll>(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T converted = convert<T>(value);
    ElementBytes bytes{};
    std::memcpy(bytes.data(), &converted, sizeof(T));
    return bytes;
  });
}

StridedCopy::StridedCopy(const std::vector<int64_t>& shape,
                         const std::vector<int64_t>& source_strides, int64_t source_offset,
                         size_t element_size)
    : element_size_(element_size), offset_(source_offset) {
  numel_ = 1;
  for (int64_t d : shape) numel_ *= d;
  if (numel_ == 0) return;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (rank_ > 0 && strides_[rank_ - 1] == source_strides[d] * shape[d]) {
      shape_[rank_ - 1] *= shape[d];
      strides_[rank_ - 1] = source_strides[d];
      continue;
    }
    if (rank_ == kMaxRank) throw Error("a copy needs more than 32 dimensions after merging");
    shape_[rank_] = shape[d];
    strides_[rank_] = source_strides[d];
    ++rank_;
  }
  if (rank_ == 0) {  // a single element
    shape_[0] = 1;
    strides_[0] = 1;
    rank_ = 1;
  }
  const int last = rank_ - 1;
  if (strides_[last] == 0 || strides_[last] == 1 || shape_[last] < kMinTiledLength) return;
  for (int d = 0; d < last; ++d) {
    if (strides_[d] == 1 && shape_[d] >= kMinTiledLength) tile_axis_ = d;
  }
}

std::string StridedCopy::describe() const {
  if (numel_ == 0) return "empty";
  if (tile_axis_ >= 0) return "tiled transpose, rank " + std::to_string(rank_);
  const int64_t step = strides_[rank_ - 1];
  const char* run = step == 1 ? "memcpy" : step == 0 ? "fill" : "gather";
  return std::string(run) + " runs, rank " + std::to_string(rank_);
}

void StridedCopy::operator()(const void* source, void* destination) const {
  if (numel_ == 0) return;
  dispatch_element_size(element_size_, [&](auto tag) {
    using E = typename decltype(tag)::type;
    const E* from = static_cast<const E*>(source);
    E* to = static_cast<E*>(destination);
    if (tile_axis_ >= 0) {
      copy_tiles(from, to);
    } else {
      copy_runs(from, to);
    }
  });
}

// Output ranges [begin, end) walked as runs along the last dimension, the outer index
// advanced like an odometer; short runs go by rows of the dimension before the last.
template <class E>
void StridedCopy::copy_runs(const E* source, E* destination) const {
  const int last = rank_ - 1;
  const int64_t length = shape_[last], step = strides_[last];
  const int64_t run_bytes = length * int64_t(sizeof(E));
  const bool short_runs = last > 0 && run_bytes < kShortRunBytes;
  // Contiguous runs scattered in the source (a transpose of whole rows) are fetched a few
  // runs ahead: the hardware prefetcher does not follow the jumps between them.
  const bool prefetch = last > 0 && step == 1 && !short_runs && run_bytes <= kPrefetchRunBytes;
  const int64_t ahead = last > 0 ? kPrefetchRuns * strides_[last - 1] * int64_t(sizeof(E)) : 0;
  const int64_t grain = std::max<int64_t>(1, kCopyTaskBytes / int64_t(sizeof(E)));
  parallel_for(numel_, grain, [&](int64_t begin, int64_t end) {
    int64_t index[kMaxRank];
    int64_t row = begin / length, column = begin % length;
    int64_t base = offset_;
    for (int d = last - 1; d >= 0; --d) {
      index[d] = row % shape_[d];
      row /= shape_[d];
      base += index[d] * strides_[d];
    }
    for (int64_t position = begin; position < end;) {
      const int64_t rows = short_runs && column == 0
          ? std::min(shape_[last - 1] - index[last - 1], (end - position) / length) : 0;
      if (rows > 1) {  // whole rows, leaving the odometer on the last of them
        copy_short_rows(destination + position, source + base, rows, strides_[last - 1],
                        length, step);
        position += rows * length;
        index[last - 1] += rows - 1;
        base += (rows - 1) * strides_[last - 1];
      } else {
        const int64_t count = std::min(length - column, end - position);
        if (prefetch) {  // by address: the run ahead may lie past the source's end
          const uintptr_t next = reinterpret_cast<uintptr_t>(source + base) + ahead;
          for (int64_t line = 0; line < run_bytes; line += 64) {
            __builtin_prefetch(reinterpret_cast<const void*>(next + line));
          }
        }
        copy_run(destination + position, source + base + column * step, count, step);
        position += count;
      }
      column = 0;
      for (int d = last - 1; d >= 0; --d) {
        base += strides_[d];
        if (++index[d] < shape_[d]) break;
        index[d] = 0;
        base -= shape_[d] * strides_[d];
      }
    }
  });
}

// The source is contiguous along dimension a = tile_axis_ and the output along the last one:
// each task unit is a band of kTile indices of a (all other outer indices fixed), copied as
// kTile x kTile tiles across the last dimension.
template <class E>
void StridedCopy::copy_tiles(const E* source, E* destination) const {
  const int last = rank_ - 1, a = tile_axis_;
  int64_t out_strides[kMaxRank];
  out_strides[last] = 1;
  for (int d = last - 1; d >= 0; --d) out_strides[d] = out_strides[d + 1] * shape_[d + 1];
  int outer_rank = 0;
  int64_t outer_shape[kMaxRank], outer_in[kMaxRank], outer_out[kMaxRank];
  int64_t outer_count = 1;
  for (int d = 0; d < last; ++d) {
    if (d == a) continue;
    outer_shape[outer_rank] = shape_[d];
    outer_in[outer_rank] = strides_[d];
    outer_out[outer_rank] = out_strides[d];
    outer_count *= shape_[d];
    ++outer_rank;
  }
  const int64_t rows = shape_[a], columns = shape_[last], column_step = strides_[last];
  const int64_t row_out = out_strides[a];
  const int64_t bands = (rows + kTile - 1) / kTile;
  const int64_t band_bytes = kTile * columns * int64_t(sizeof(E));
  const int64_t grain = std::max<int64_t>(1, kCopyTaskBytes / band_bytes);
  parallel_for(outer_count * bands, grain, [&](int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end; ++unit) {
      const int64_t band = unit % bands;
      int64_t outer = unit / bands;
      int64_t in = offset_ + band * kTile, out = band * kTile * row_out;
      for (int d = outer_rank - 1; d >= 0; --d) {
        const int64_t i = outer % outer_shape[d];
        outer /= outer_shape[d];
        in += i * outer_in[d];
        out += i * outer_out[d];
      }
      const int64_t height = std::min(kTile, rows - band * kTile);
      for (int64_t c0 = 0; c0 < columns; c0 += kTile) {
        const int64_t width = std::min(kTile, columns - c0);
        transpose_tile(source + in + c0 * column_step, column_step, destination + out + c0,
                       row_out, height, width);
      }
    }
  });
}

}  // namespace mskernel_cpu
