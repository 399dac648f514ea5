// The bit generator of the random ops (mskernel/ops/random.py): the vectorised Threefry-2x32
// block loop (threefry.hpp), and the ops that expose it directly: random_key (a 64-bit seed
// split into two words), random_split and random_fold_in (keys from the counters reserved for
// them) and random_bits (the 32-bit words of a draw).
#include <algorithm>

#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/threefry.hpp"

namespace mskernel_cpu {

// Two counters per iteration, j and j + half: each block is one long dependency chain, and two
// independent chains keep the vector units busier (about 13% faster than one).
MSKERNEL_CPU_CLONE_X86_64_V4
void threefry_blocks(const ThreefryKey& k, uint32_t high, uint32_t first, uint32_t stride,
                     int64_t count, uint32_t* __restrict y0, uint32_t* __restrict y1) {
  const int64_t half = count / 2;
  for (int64_t j = 0; j < half; ++j) {
    uint32_t a0 = high, a1 = first + stride * uint32_t(j);
    uint32_t b0 = high, b1 = first + stride * uint32_t(j + half);
    threefry2x32(k, a0, a1);
    threefry2x32(k, b0, b1);
    y0[j] = a0;
    y1[j] = a1;
    y0[j + half] = b0;
    y1[j + half] = b1;
  }
  if (count % 2 != 0) {
    uint32_t x0 = high, x1 = first + stride * uint32_t(count - 1);
    threefry2x32(k, x0, x1);
    y0[count - 1] = x0;
    y1[count - 1] = x1;
  }
}

namespace {

Kernel random_key(KernelContext& ctx) {
  const uint64_t seed = uint64_t(ctx.attrs.get_int("seed"));  // seed mod 2**64
  return [=](const Args& args) {
    uint32_t* key = args.out<uint32_t>(0);
    key[0] = uint32_t(seed >> 32);
    key[1] = uint32_t(seed);
  };
}

// Row j is the block of counter (kSplitTag, j).
Kernel random_split(KernelContext& ctx) {
  const int64_t num = ctx.output(0).shape[0];
  return [=](const Args& args) {
    const ThreefryKey k(args.in<uint32_t>(0));
    uint32_t* keys = args.out<uint32_t>(0);
    parallel_for(num, 1 << 14, [&](int64_t begin, int64_t end) {
      for (int64_t j = begin; j < end; ++j) {
        uint32_t x0 = kSplitTag, x1 = uint32_t(j);
        threefry2x32(k, x0, x1);
        keys[2 * j] = x0;
        keys[2 * j + 1] = x1;
      }
    });
  };
}

Kernel random_fold_in(KernelContext& ctx) {
  const uint32_t data = uint32_t(ctx.attrs.get_int("data"));  // data mod 2**32
  return [=](const Args& args) {
    const ThreefryKey k(args.in<uint32_t>(0));
    uint32_t x0 = kFoldInTag, x1 = data;
    threefry2x32(k, x0, x1);
    uint32_t* key = args.out<uint32_t>(0);
    key[0] = x0;
    key[1] = x1;
  };
}

Kernel random_bits(KernelContext& ctx) {
  const int64_t n = ctx.output(0).numel();
  return [=](const Args& args) {
    uint32_t* out = args.out<uint32_t>(0);
    for_each_draw_block(args.in<uint32_t>(0), n, kCheapGrainBlocks,
                        [&](int64_t begin, int64_t count, const uint32_t* y0, const uint32_t*) {
                          std::copy(y0, y0 + count, out + begin);
                        });
  };
}

}  // namespace

MSKERNEL_CPU_KERNEL("random_key", bit(DType::UInt32), random_key);
MSKERNEL_CPU_KERNEL("random_split", bit(DType::UInt32), random_split);
MSKERNEL_CPU_KERNEL("random_fold_in", bit(DType::UInt32), random_fold_in);
MSKERNEL_CPU_KERNEL("random_bits", bit(DType::UInt32), random_bits);

}  // namespace mskernel_cpu
