// random_normal (mskernel/ops/random.py): Box-Muller, cosine branch, on a draw of 2 n words;
// element e takes words 2e and 2e + 1:  z = sqrt(-2 ln open(w0)) * cos(2 pi open(w1)),
// result mean + std * z.  float32, float16 and bfloat16 draw 32-bit words and compute z in
// float (random_math.hpp reduces the arguments exactly from the words, so z is within a few
// float ulps of the reference's float64 z); float64 draws 64-bit words and computes in double.
// The affine step is in double and the result is rounded once to the dtype.
//
// Each block of elements runs Threefry on the even and the odd counters separately (so both
// words arrive in contiguous arrays), then z in one vectorised loop (built for x86-64-v3 and
// x86-64-v4, as Threefry), then the affine step into the output.
#include <algorithm>
#include <cmath>

#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/random_math.hpp"
#include "mskernel_cpu/threefry.hpp"

namespace mskernel_cpu {
namespace {

constexpr int64_t kElementBlock = 256;
constexpr int64_t kGrainBlocks = 32;  // 8192 normals per thread range: about 30 us

// z from 32-bit words: the radius from r0, the angle from a0.
MSKERNEL_CPU_CLONE_X86_64_V4
void standard_normals32(const uint32_t* __restrict r0, const uint32_t* __restrict a0,
                        int64_t count, float* __restrict z) {
  for (int64_t j = 0; j < count; ++j) {
    z[j] = std::sqrt(-2.0f * log_open32(r0[j])) * cos_two_pi_open32(a0[j]);
  }
}

// z from 64-bit words: the radius from (r0, r1), the angle from (a0, a1).
MSKERNEL_CPU_CLONE_X86_64_V4
void standard_normals64(const uint32_t* __restrict r0, const uint32_t* __restrict r1,
                        const uint32_t* __restrict a0, const uint32_t* __restrict a1,
                        int64_t count, double* __restrict z) {
  for (int64_t j = 0; j < count; ++j) {
    z[j] = std::sqrt(-2.0 * log_positive(open_unit64(wide_word(r0[j], r1[j])))) *
           cos_of(6.283185307179586 * open_unit64(wide_word(a0[j], a1[j])));
  }
}

template <class T>
Kernel normal_of(int64_t n, double mean, double std_dev) {
  constexpr bool kWideWords = std::is_same_v<T, double>;
  using Z = std::conditional_t<kWideWords, double, float>;
  return [=](const Args& args) {
    const ThreefryKey k(args.in<uint32_t>(0));
    T* out = args.out<T>(0);
    const int64_t blocks = (n + kElementBlock - 1) / kElementBlock;
    const uint32_t words = uint32_t(2 * n);
    parallel_for(blocks, kGrainBlocks, [&](int64_t first_block, int64_t last_block) {
      alignas(64) uint32_t r0[kElementBlock], r1[kElementBlock];  // radius words
      alignas(64) uint32_t a0[kElementBlock], a1[kElementBlock];  // angle words
      alignas(64) Z z[kElementBlock];
      for (int64_t b = first_block; b < last_block; ++b) {
        const int64_t begin = b * kElementBlock, count = std::min(kElementBlock, n - begin);
        threefry_blocks(k, words, uint32_t(2 * begin), 2, count, r0, r1);
        threefry_blocks(k, words, uint32_t(2 * begin + 1), 2, count, a0, a1);
        if constexpr (kWideWords) {
          standard_normals64(r0, r1, a0, a1, count, z);
        } else {
          standard_normals32(r0, a0, count, z);
        }
        T* o = out + begin;
        for (int64_t j = 0; j < count; ++j) o[j] = convert<T>(mean + std_dev * double(z[j]));
      }
    });
  };
}

Kernel random_normal(KernelContext& ctx) {
  const int64_t n = ctx.output(0).numel();
  const double mean = ctx.attrs.get_float("mean"), std_dev = ctx.attrs.get_float("std");
  return dispatch<kFloat>(ctx.output(0).dtype, [&](auto tag) -> Kernel {
    return normal_of<typename decltype(tag)::type>(n, mean, std_dev);
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("random_normal", kFloat | bit(DType::UInt32), random_normal);

}  // namespace mskernel_cpu
