// Integer draws of the random ops (mskernel/ops/random.py), exact to the bit:
//   random_bernoulli     a 32-bit word below floor(p * 2**32)
//   random_randint       minval + a 64-bit word mod the range (the remainder by multiplication)
//   random_permutation   the stable argsort of n 64-bit words: a counting sort into buckets by
//                        their top bits, then in each cache-sized bucket an LSD radix sort of the
//                        next 16 bits and the rare runs of equal bits sorted by the whole word
//                        and the index, as a stable sort orders ties
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/threefry.hpp"

namespace mskernel_cpu {
namespace {

Kernel random_bernoulli(KernelContext& ctx) {
  const int64_t n = ctx.output(0).numel();
  // Exact: p is a double in [0, 1] and 2**32 a power of two; p = 1 gives 2**32 (always true).
  const uint64_t threshold = uint64_t(std::floor(ctx.attrs.get_float("p") * 4294967296.0));
  return [=](const Args& args) {
    bool* out = args.out<bool>(0);
    for_each_draw_block(args.in<uint32_t>(0), n, kCheapGrainBlocks,
                        [&](int64_t begin, int64_t count, const uint32_t* y0, const uint32_t*) {
                          for (int64_t j = 0; j < count; ++j) out[begin + j] = y0[j] < threshold;
                        });
  };
}

// a mod d for every 64-bit a without a division: Lemire, Kaser and Kurz, "Faster remainder by
// direct computation" (2019), with the 128-bit constant M = floor((2**128 - 1) / d) + 1.
class Modulo {
 public:
  explicit Modulo(uint64_t d) : d_(d), m_(~__uint128_t(0) / d + 1) {}
  uint64_t operator()(uint64_t a) const {
    const __uint128_t fraction = m_ * a;  // a / d's fractional part, in 128 bits
    const __uint128_t low = ((fraction & ~uint64_t(0)) * d_) >> 64;
    return uint64_t((low + (fraction >> 64) * d_) >> 64);
  }

 private:
  uint64_t d_;
  __uint128_t m_;
};

// minval + (w mod span) for 64-bit words w, wrapped to T.  Attributes arrive modulo 2**64, so
// span = maxval - minval is exact modulo 2**64, 0 standing for the full range 2**64.
template <class T>
Kernel randint_of(int64_t n, uint64_t minval, uint64_t span) {
  const bool power_of_two = (span & (span - 1)) == 0;  // 2**64 (span 0) included
  const uint64_t mask = span - 1;
  const Modulo modulo(power_of_two ? 1 : span);
  return [=](const Args& args) {
    T* out = args.out<T>(0);
    for_each_draw_block(args.in<uint32_t>(0), n, kCheapGrainBlocks,
                        [&](int64_t begin, int64_t count, const uint32_t* y0, const uint32_t* y1) {
                          T* o = out + begin;
                          if (power_of_two) {
                            for (int64_t j = 0; j < count; ++j)
                              o[j] = T(minval + (wide_word(y0[j], y1[j]) & mask));
                          } else {
                            for (int64_t j = 0; j < count; ++j)
                              o[j] = T(minval + modulo(wide_word(y0[j], y1[j])));
                          }
                        });
  };
}

Kernel random_randint(KernelContext& ctx) {
  const int64_t n = ctx.output(0).numel();
  const uint64_t minval = uint64_t(ctx.attrs.get_int("minval"));
  const uint64_t span = uint64_t(ctx.attrs.get_int("maxval")) - minval;
  return dispatch<kInteger>(ctx.output(0).dtype, [&](auto tag) -> Kernel {
    return randint_of<typename decltype(tag)::type>(n, minval, span);
  });
}

// ---- permutation --------------------------------------------------------------------------

// A word's high half and its index (n < 2**32): what the sort moves.
struct Entry {
  uint32_t high, index;
};

// The top bits that pick an entry's bucket: about 512 entries per bucket, 2 to 65536 buckets.
int bucket_bits(int64_t n) {
  int bits = 1;
  while (bits < 16 && (n >> (bits + 9)) > 0) ++bits;
  return bits;
}

constexpr int kDigitBits = 8;  // two passes inside a bucket sort the next 16 bits
constexpr int64_t kRadix = int64_t(1) << kDigitBits;

// Sorts the m entries of one bucket, whose words share their top `top_bits` bits: an LSD radix
// sort of the next 16 bits (two passes, ending back in `entries`), then the rare runs of equal
// sorted bits by the whole word and the index.
void sort_bucket(const uint64_t* words, Entry* entries, Entry* spare, int64_t m, int top_bits) {
  Entry* from = entries;
  Entry* to = spare;
  for (int pass = 0; pass < 2; ++pass) {
    const int shift = 32 - top_bits - 16 + pass * kDigitBits;
    int64_t starts[kRadix] = {};
    for (int64_t i = 0; i < m; ++i) ++starts[(from[i].high >> shift) & (kRadix - 1)];
    int64_t total = 0;
    for (int64_t d = 0; d < kRadix; ++d) total += std::exchange(starts[d], total);
    for (int64_t i = 0; i < m; ++i) to[starts[(from[i].high >> shift) & (kRadix - 1)]++] = from[i];
    std::swap(from, to);
  }
  const auto before = [words](const Entry& a, const Entry& b) {
    if (a.high != b.high) return a.high < b.high;
    const uint64_t x = words[a.index], y = words[b.index];
    return x < y || (x == y && a.index < b.index);
  };
  const int shift = 32 - top_bits - 16;
  for (int64_t begin = 0, end; begin < m; begin = end) {
    const uint32_t sorted_bits = entries[begin].high >> shift;
    for (end = begin + 1; end < m && entries[end].high >> shift == sorted_bits;) ++end;
    if (end - begin > 1) std::sort(entries + begin, entries + end, before);
  }
}

Kernel random_permutation(KernelContext& ctx) {
  const int64_t n = ctx.output(0).numel();
  const int bits = bucket_bits(n);
  const int64_t buckets = int64_t(1) << bits;
  ctx.workspace_bytes = 2 * size_t(n) * sizeof(Entry) + size_t(buckets + 1) * sizeof(int64_t);
  ctx.detail = std::to_string(buckets) + " buckets";
  return [=](const Args& args) {
    // The words go to the output first (same size), then the sorted indices replace them.
    int64_t* out = args.out<int64_t>(0);
    uint64_t* words = reinterpret_cast<uint64_t*>(out);
    Entry* entries = args.scratch<Entry>();
    Entry* spare = entries + n;
    int64_t* starts = reinterpret_cast<int64_t*>(spare + n);
    for_each_draw_block(args.in<uint32_t>(0), n, kCheapGrainBlocks,
                        [&](int64_t begin, int64_t count, const uint32_t* y0, const uint32_t* y1) {
                          for (int64_t j = 0; j < count; ++j)
                            words[begin + j] = wide_word(y0[j], y1[j]);
                        });
    // Counting sort into buckets by the top bits, stable (indices ascending in each bucket).
    const int shift = 64 - bits;
    std::fill(starts, starts + buckets + 1, int64_t(0));
    for (int64_t i = 0; i < n; ++i) ++starts[(words[i] >> shift) + 1];
    for (int64_t b = 0; b < buckets; ++b) starts[b + 1] += starts[b];
    for (int64_t i = 0; i < n; ++i) {
      entries[starts[words[i] >> shift]++] = Entry{uint32_t(words[i] >> 32), uint32_t(i)};
    }
    // starts[b] is now the end of bucket b: bucket b is [starts[b - 1], starts[b]).
    parallel_for(buckets, 64, [&](int64_t first, int64_t last) {
      for (int64_t b = first; b < last; ++b) {
        const int64_t begin = b == 0 ? 0 : starts[b - 1];
        sort_bucket(words, entries + begin, spare + begin, starts[b] - begin, bits);
      }
    });
    for (int64_t i = 0; i < n; ++i) out[i] = entries[i].index;
  };
}

}  // namespace

MSKERNEL_CPU_KERNEL("random_bernoulli", bit(DType::UInt32) | kBool, random_bernoulli);
MSKERNEL_CPU_KERNEL("random_randint", kInteger, random_randint);
MSKERNEL_CPU_KERNEL("random_permutation", bit(DType::UInt32) | bit(DType::Int64),
                    random_permutation);

}  // namespace mskernel_cpu
