// Threefry-2x32-20, the counter-based bit generator of the random ops, and the counter layout
// of mskernel/ops/random.py (its module docstring is the specification reproduced here bit for
// bit): a draw of n words under a key gives word i from the block T(key, (n, i)).
//
// threefry_blocks() runs the block function over a run of counters in a branch-free loop that
// g++ vectorises; it is compiled for the x86-64-v3 baseline (eight counters per register, a
// rotate is three instructions) and for x86-64-v4 (AVX-512: one-instruction rotates), and the
// loader picks one for the CPU (MSKERNEL_CPU_CLONE_X86_64_V4, about twice as fast where
// AVX-512 exists).  for_each_draw_block() splits a draw into fixed blocks of counters over the
// thread pool, so results never depend on the thread count.
#pragma once

#include <algorithm>
#include <cstdint>

#include "mskernel_cpu/parallel.hpp"

namespace mskernel_cpu {

// The counter's high word for keys derived by random_split and random_fold_in.
constexpr uint32_t kSplitTag = 0;
constexpr uint32_t kFoldInTag = 0xFFFFFFFFu;

// The key schedule (k0, k1, k0 ^ k1 ^ parity).
struct ThreefryKey {
  uint32_t k0, k1, k2;
  explicit ThreefryKey(const uint32_t* key)
      : k0(key[0]), k1(key[1]), k2(key[0] ^ key[1] ^ 0x1BD11BDAu) {}
};

template <int R> inline uint32_t rotate_left(uint32_t x) { return (x << R) | (x >> (32 - R)); }

template <int R0, int R1, int R2, int R3>
inline void threefry_rounds(uint32_t& x0, uint32_t& x1) {
  x0 += x1; x1 = rotate_left<R0>(x1) ^ x0;
  x0 += x1; x1 = rotate_left<R1>(x1) ^ x0;
  x0 += x1; x1 = rotate_left<R2>(x1) ^ x0;
  x0 += x1; x1 = rotate_left<R3>(x1) ^ x0;
}

// The block function: the counter (x0, x1) becomes its output words, in place.
inline void threefry2x32(const ThreefryKey& k, uint32_t& x0, uint32_t& x1) {
  x0 += k.k0; x1 += k.k1;
  threefry_rounds<13, 15, 26, 6>(x0, x1);  x0 += k.k1; x1 += k.k2 + 1;
  threefry_rounds<17, 29, 16, 24>(x0, x1); x0 += k.k2; x1 += k.k0 + 2;
  threefry_rounds<13, 15, 26, 6>(x0, x1);  x0 += k.k0; x1 += k.k1 + 3;
  threefry_rounds<17, 29, 16, 24>(x0, x1); x0 += k.k1; x1 += k.k2 + 4;
  threefry_rounds<13, 15, 26, 6>(x0, x1);  x0 += k.k2; x1 += k.k0 + 5;
}

// Hot loops built twice, for the baseline the backend is compiled for (x86-64-v3) and for
// x86-64-v4; an ifunc resolver picks one when the extension loads.
#if defined(__x86_64__)
#define MSKERNEL_CPU_CLONE_X86_64_V4 __attribute__((target_clones("default", "arch=x86-64-v4")))
#else
#define MSKERNEL_CPU_CLONE_X86_64_V4
#endif

// Blocks of the counters (high, first + stride * j) for j < count into y0[j], y1[j]
// (kernels/threefry.cpp).
void threefry_blocks(const ThreefryKey& k, uint32_t high, uint32_t first, uint32_t stride,
                     int64_t count, uint32_t* __restrict y0, uint32_t* __restrict y1);

// Word i of a 64-bit draw from its block's output words.
inline uint64_t wide_word(uint32_t y0, uint32_t y1) { return (uint64_t(y0) << 32) | y1; }

// Counters per block of for_each_draw_block: one stack buffer's worth, and the unit of work
// split over threads.
constexpr int64_t kDrawBlock = 512;
// Blocks per thread range when the words are used cheaply: 32768 words, tens of microseconds.
constexpr int64_t kCheapGrainBlocks = 64;

// Calls body(begin, count, y0, y1) for the words [begin, begin + count) of a draw of `words`
// words under `key`, in blocks of at most kDrawBlock, spread over threads in ranges of about
// `grain_blocks` blocks.
template <class Body>
void for_each_draw_block(const uint32_t* key, int64_t words, int64_t grain_blocks, Body&& body) {
  const ThreefryKey k(key);
  const int64_t blocks = (words + kDrawBlock - 1) / kDrawBlock;
  parallel_for(blocks, grain_blocks, [&](int64_t first_block, int64_t last_block) {
    alignas(64) uint32_t y0[kDrawBlock], y1[kDrawBlock];
    for (int64_t b = first_block; b < last_block; ++b) {
      const int64_t begin = b * kDrawBlock, count = std::min(kDrawBlock, words - begin);
      threefry_blocks(k, uint32_t(words), uint32_t(begin), 1, count, y0, y1);
      body(begin, count, y0, y1);
    }
  });
}

}  // namespace mskernel_cpu
