// bfloat16 GEMM on AMX or AVX-512 BF16: see bf16_gemm.hpp.
//
// Layout.  Both instruction sets multiply pairs of bfloat16 along k: vdpbf16ps adds
// a[2j] * b[2j] + a[2j+1] * b[2j+1] to float32 lane j, tdpbf16ps does the same for a tile of
// 16 x 16 results from a 16 x 16-pair tile of A and a 16-pair x 16 tile of B.  B is packed
// once in panels of kNr = 32 columns: for each pair of k (k2), the 32 columns' pairs
// (b[2 k2, j], b[2 k2 + 1, j]) as 32-bit words — two registers, or a row of two B tiles.
// k is padded with zero pairs to whole tiles (16 pairs) and columns past n are zero.
//
// AMX (tdpbf16ps: 8192 multiply-adds per instruction) where the CPU has it, Linux lets this
// process use the tile registers (arch_prctl ARCH_REQ_XCOMP_PERM) and MSKERNEL_CPU_AMX is not
// 0 (which tests the other path on a CPU with AMX): blocks of 32 x 32
// results in four accumulator tiles, A packed per 32 rows as [row][k2] words.  Otherwise
// AVX-512 BF16: blocks of kMr x 32 results in 16 registers, A packed [k2][kMr].  A row range
// is cut into blocks of kMc rows whose A is packed once; for each panel of B the kernel runs
// over the block's rows, so the panel stays in cache while the rows stream past it.
#include "mskernel_cpu/bf16_gemm.hpp"

#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace mskernel_cpu {
namespace {

constexpr int64_t kNr = 32;   // columns per panel
constexpr int64_t kTile = 16;  // pairs of k per tile row; rows and columns per result tile
constexpr int kMr = 8;        // rows per AVX-512 micro-kernel: 16 accumulators
constexpr int64_t kMc = 128;  // rows per packed block of A (a multiple of 32 and of kMr)

int64_t pairs(int64_t k) { return (k + 1) / 2; }
int64_t padded_pairs(int64_t k) { return (pairs(k) + kTile - 1) / kTile * kTile; }

uint16_t element(const bf16_t* m, int64_t ld, GemmLayout layout, int64_t r, int64_t c) {
  return layout == GemmLayout::AsIs ? m[r * ld + c].bits : m[c * ld + r].bits;
}

// The pair (a[r, 2 k2], a[r, 2 k2 + 1]) of a row of A as one word, zero past k.
uint32_t a_pair(const GemmShape& s, const bf16_t* a, int64_t lda, int64_t r, int64_t k2) {
  if (2 * k2 >= s.k) return 0;
  const uint32_t lo = element(a, lda, s.a, r, 2 * k2);
  const uint32_t hi = 2 * k2 + 1 < s.k ? element(a, lda, s.a, r, 2 * k2 + 1) : 0;
  return lo | (hi << 16);
}

// ---- AMX ------------------------------------------------------------------------------------

constexpr int kArchReqXcompPerm = 0x1023;
constexpr int kXfeatureXtiledata = 18;

bool amx_usable() {
  static const bool usable = [] {
    __builtin_cpu_init();
    const char* wanted = std::getenv("MSKERNEL_CPU_AMX");
    if (wanted != nullptr && std::string(wanted) == "0") return false;
    if (!__builtin_cpu_supports("amx-bf16") || !__builtin_cpu_supports("amx-tile")) return false;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return usable;
}

// The tile configuration (palette 1): eight tiles of 16 rows of 64 bytes.  Constant data:
// GCC's _tile_loadconfig tells the compiler it reads only the first 8 bytes.
struct TileConfig {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};
constexpr TileConfig kTileConfig = {1, 0, {}, {64, 64, 64, 64, 64, 64, 64, 64},
                                    {16, 16, 16, 16, 16, 16, 16, 16}};
static_assert(sizeof(TileConfig) == 64, "ldtilecfg reads 64 bytes");

__attribute__((target("amx-tile"))) void configure_tiles() { _tile_loadconfig(&kTileConfig); }

// GCC's tile loads and stores do not tell the compiler which memory they touch: a barrier
// keeps the packing of A before them and the reading of the results after them.
inline void compiler_barrier() { asm volatile("" ::: "memory"); }

// Rows [row, row + rows) of A as [row][k2p] words, zero past k and past rows (up to a whole
// 32-row group).  Stored as it is, a row's pairs are its consecutive words; transposed, a
// pair joins two rows of the storage, read along them.
void pack_a_rows(const GemmShape& s, const bf16_t* a, int64_t lda, int64_t row, int64_t rows,
                 uint32_t* out) {
  const int64_t k2n = pairs(s.k), k2p = padded_pairs(s.k);
  const int64_t padded_rows = (rows + 31) / 32 * 32;
  std::memset(out, 0, sizeof(uint32_t) * static_cast<size_t>(padded_rows * k2p));
  if (s.a == GemmLayout::AsIs) {
    for (int64_t i = 0; i < rows; ++i) {
      std::memcpy(out + i * k2p, a + (row + i) * lda, sizeof(uint16_t) * static_cast<size_t>(s.k));
    }
    return;
  }
  for (int64_t k2 = 0; k2 < k2n; ++k2) {
    const uint16_t* lo = &a[2 * k2 * lda + row].bits;
    const uint16_t* hi = 2 * k2 + 1 < s.k ? &a[(2 * k2 + 1) * lda + row].bits : nullptr;
    for (int64_t i = 0; i < rows; ++i) {
      out[i * k2p + k2] = uint32_t(lo[i]) | (hi != nullptr ? uint32_t(hi[i]) << 16 : 0u);
    }
  }
}

__attribute__((target("amx-tile,amx-bf16"))) void amx_block(
    int64_t k2p, const uint32_t* a, const uint32_t* panel, float* c, int64_t ldc,
    int64_t rows, int64_t cols) {
  alignas(64) float result[32][32];
  compiler_barrier();
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const int64_t a_stride = k2p * 4, b_stride = kNr * 4;
  for (int64_t k2 = 0; k2 < k2p; k2 += kTile) {
    _tile_loadd(4, a + k2, a_stride);
    _tile_loadd(5, a + 16 * k2p + k2, a_stride);
    _tile_loadd(6, panel + k2 * kNr, b_stride);
    _tile_loadd(7, panel + k2 * kNr + 16, b_stride);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, &result[0][0], 128);
  _tile_stored(1, &result[0][16], 128);
  _tile_stored(2, &result[16][0], 128);
  _tile_stored(3, &result[16][16], 128);
  compiler_barrier();
  for (int64_t i = 0; i < rows; ++i)
    std::memcpy(c + i * ldc, result[i], sizeof(float) * static_cast<size_t>(cols));
}

__attribute__((target("amx-tile"))) void release_tiles() { _tile_release(); }

void amx_rows(const GemmShape& s, const bf16_t* a, int64_t lda, const uint32_t* b, float* c,
              int64_t ldc, int64_t row_begin, int64_t row_end) {
  const int64_t k2p = padded_pairs(s.k);
  thread_local std::vector<uint32_t> a_block;
  a_block.resize(static_cast<size_t>(kMc * k2p));
  configure_tiles();
  for (int64_t r0 = row_begin; r0 < row_end; r0 += kMc) {
    const int64_t rows = std::min(kMc, row_end - r0);
    pack_a_rows(s, a, lda, r0, rows, a_block.data());
    for (int64_t j0 = 0; j0 < s.n; j0 += kNr) {
      const uint32_t* panel = b + (j0 / kNr) * k2p * kNr;
      for (int64_t base = 0; base < rows; base += 32) {
        amx_block(k2p, a_block.data() + base * k2p, panel, c + (r0 + base) * ldc + j0, ldc,
                  std::min<int64_t>(32, rows - base), std::min(kNr, s.n - j0));
      }
    }
  }
  release_tiles();
}

// ---- AVX-512 BF16 ---------------------------------------------------------------------------

// Rows [row, row + rows) of A as [kMr-row group][k2][kMr] words, zero past rows.
void pack_a_interleaved(const GemmShape& s, const bf16_t* a, int64_t lda, int64_t row,
                        int64_t rows, uint32_t* out) {
  const int64_t k2n = pairs(s.k);
  for (int64_t base = 0; base < rows; base += kMr) {
    uint32_t* group = out + (base / kMr) * k2n * kMr;
    const int64_t count = std::min<int64_t>(kMr, rows - base);
    for (int64_t k2 = 0; k2 < k2n; ++k2)
      for (int64_t i = 0; i < kMr; ++i)
        group[k2 * kMr + i] = i < count ? a_pair(s, a, lda, row + base + i, k2) : 0;
  }
}

template <int R>
__attribute__((target("avx512f,avx512bf16"))) void micro_kernel(
    int64_t k2n, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc, int64_t cols) {
  __m512 acc[R][2];
  for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t k2 = 0; k2 < k2n; ++k2) {
    const __m512i b0 = _mm512_loadu_si512(b + k2 * kNr);
    const __m512i b1 = _mm512_loadu_si512(b + k2 * kNr + 16);
    for (int i = 0; i < R; ++i) {
      const __m512i ai = _mm512_set1_epi32(static_cast<int>(a[k2 * kMr + i]));
      acc[i][0] = _mm512_dpbf16_ps(acc[i][0], (__m512bh)ai, (__m512bh)b0);
      acc[i][1] = _mm512_dpbf16_ps(acc[i][1], (__m512bh)ai, (__m512bh)b1);
    }
  }
  const __mmask16 m0 = cols >= 16 ? 0xFFFF : __mmask16((1u << cols) - 1);
  const __mmask16 m1 = cols >= 32 ? 0xFFFF : cols <= 16 ? 0 : __mmask16((1u << (cols - 16)) - 1);
  for (int i = 0; i < R; ++i) {
    _mm512_mask_storeu_ps(c + i * ldc, m0, acc[i][0]);
    _mm512_mask_storeu_ps(c + i * ldc + 16, m1, acc[i][1]);
  }
}

using MicroKernel = void (*)(int64_t, const uint32_t*, const uint32_t*, float*, int64_t,
                             int64_t);
constexpr MicroKernel kMicroKernels[kMr] = {
    micro_kernel<1>, micro_kernel<2>, micro_kernel<3>, micro_kernel<4>,
    micro_kernel<5>, micro_kernel<6>, micro_kernel<7>, micro_kernel<8>};

void avx512_rows(const GemmShape& s, const bf16_t* a, int64_t lda, const uint32_t* b, float* c,
                 int64_t ldc, int64_t row_begin, int64_t row_end) {
  const int64_t k2n = pairs(s.k), k2p = padded_pairs(s.k);
  thread_local std::vector<uint32_t> a_block;
  a_block.resize(static_cast<size_t>(kMc * k2n));
  for (int64_t r0 = row_begin; r0 < row_end; r0 += kMc) {
    const int64_t rows = std::min(kMc, row_end - r0);
    pack_a_interleaved(s, a, lda, r0, rows, a_block.data());
    for (int64_t j0 = 0; j0 < s.n; j0 += kNr) {
      const uint32_t* panel = b + (j0 / kNr) * k2p * kNr;
      for (int64_t base = 0; base < rows; base += kMr) {
        const int64_t count = std::min<int64_t>(kMr, rows - base);
        kMicroKernels[count - 1](k2n, a_block.data() + (base / kMr) * k2n * kMr, panel,
                                 c + (r0 + base) * ldc + j0, ldc, std::min(kNr, s.n - j0));
      }
    }
  }
}

}  // namespace

bool bf16_gemm_available() {
  static const bool available = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
  }();
  return available || amx_usable();
}

const char* bf16_gemm_engine() {
  return amx_usable() ? "AMX tiles" : "AVX-512 BF16 dot products";
}

int64_t bf16_panels(int64_t n) { return (n + kNr - 1) / kNr; }

size_t bf16_packed_b_bytes(int64_t k, int64_t n) {
  return sizeof(uint32_t) * static_cast<size_t>(bf16_panels(n) * padded_pairs(k) * kNr);
}

void bf16_pack_b(const GemmShape& s, const bf16_t* b, int64_t ldb, void* packed,
                 int64_t panel_begin, int64_t panel_end) {
  uint32_t* out = static_cast<uint32_t*>(packed);
  const int64_t k2n = pairs(s.k), k2p = padded_pairs(s.k);
  for (int64_t q = panel_begin; q < panel_end; ++q) {
    const int64_t j0 = q * kNr;
    uint32_t* panel = out + q * k2p * kNr;
    const int64_t cols = std::min(kNr, s.n - j0);
    if (cols < kNr || k2n < k2p) {  // zero the padding: columns past n, pairs past k
      std::memset(panel, 0, sizeof(uint32_t) * static_cast<size_t>(k2p * kNr));
    }
    if (s.b == GemmLayout::AsIs) {  // a pair joins two rows of the storage, read along them
      for (int64_t k2 = 0; k2 < k2n; ++k2) {
        const uint16_t* lo = &b[2 * k2 * ldb + j0].bits;
        const uint16_t* hi = 2 * k2 + 1 < s.k ? &b[(2 * k2 + 1) * ldb + j0].bits : nullptr;
        for (int64_t j = 0; j < cols; ++j) {
          panel[k2 * kNr + j] = uint32_t(lo[j]) | (hi != nullptr ? uint32_t(hi[j]) << 16 : 0u);
        }
      }
    } else {  // a column's pairs are consecutive words of one row of the storage
      for (int64_t j = 0; j < cols; ++j) {
        const bf16_t* column = b + (j0 + j) * ldb;
        for (int64_t k2 = 0; k2 < k2n; ++k2) {
          uint32_t word = column[2 * k2].bits;
          if (2 * k2 + 1 < s.k) word |= uint32_t(column[2 * k2 + 1].bits) << 16;
          panel[k2 * kNr + j] = word;
        }
      }
    }
  }
}

void bf16_gemm_rows(const GemmShape& s, const bf16_t* a, int64_t lda, const void* packed,
                    float* c, int64_t ldc, int64_t row_begin, int64_t row_end) {
  const uint32_t* b = static_cast<const uint32_t*>(packed);
  if (amx_usable()) {
    amx_rows(s, a, lda, b, c, ldc, row_begin, row_end);
  } else {
    avx512_rows(s, a, lda, b, c, ldc, row_begin, row_end);
  }
}

}  // namespace mskernel_cpu
