// Ordering: sort, argsort and topk along an axis (bool, integer and float tensors).
//
// Each element becomes an unsigned key that orders as the value does (floats by their bit
// pattern with the sign folded, -0.0 equal to 0.0, every NaN the largest key; a descending
// order complements the key), packed above its position on the line.  Sorting the packed
// words therefore orders by value and breaks ties by position: exactly the stable order the
// reference defines, NaN last ascending and first descending.  Long lines are sorted by an
// LSD radix sort on the key's bytes (skipping bytes every key shares), short ones by
// std::sort.  topk keeps a heap of the best k in one pass when k is small, else selects with
// nth_element, and sorts only the k chosen (by key, or by position for sorted=False).
//
// A line is the axis at one position of the other dimensions; it is gathered into a scratch
// buffer, so the lines are independent and split over the pool, each range reusing the
// buffers of its first slot.  When the axis is not the last, up to 16 neighbouring lines are
// gathered and written together, so that strided accesses still use whole cache lines.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "mskernel_cpu/axis.hpp"
#include "mskernel_cpu/kernel.hpp"

namespace mskernel_cpu {
namespace {

// ---- keys -------------------------------------------------------------------------------

template <class Bits, class F>
Bits float_key(F f) {
  constexpr int kTop = 8 * sizeof(Bits) - 1;
  f += F(0);  // -0.0 becomes 0.0: they tie
  Bits bits;
  std::memcpy(&bits, &f, sizeof(bits));
  const Bits key = bits ^ ((Bits(0) - (bits >> kTop)) | (Bits(1) << kTop));  // fold the sign
  return f != f ? ~Bits(0) : key;  // NaN: the largest key
}

// An unsigned key ordered as the values are.
template <class T>
auto order_key(T v) {
  if constexpr (std::is_same_v<T, double>) {
    return float_key<uint64_t>(v);
  } else if constexpr (std::is_floating_point_v<compute_t<T>>) {
    return float_key<uint32_t>(load(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return uint32_t(v);
  } else {
    using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    using Wide = std::conditional_t<sizeof(T) == 8, T, std::conditional_t<std::is_signed_v<T>,
                                                                          int32_t, uint32_t>>;
    constexpr Bits flip = std::is_signed_v<T> ? Bits(1) << (8 * sizeof(Bits) - 1) : Bits(0);
    return Bits(Wide(v)) ^ flip;
  }
}

// A key above a position: 32-bit keys pack into 64 bits, 64-bit keys into 128.
template <class Key> struct Packing {
  using type = std::conditional_t<sizeof(Key) == 4, uint64_t, unsigned __int128>;
  static constexpr int kShift = 8 * sizeof(Key);
  static type pack(Key key, int64_t position) {
    return (type(key) << kShift) | type(uint64_t(position));
  }
  static int64_t position(type word) {
    return static_cast<int64_t>(word & ((type(1) << kShift) - 1));
  }
};

// Sorts words[0, n) by their key (the bits above the position) with an LSD radix sort on
// bytes, using `spare` (n words) as the other buffer; positions start in ascending order and
// every pass is stable, so ties stay in position order.  Returns the buffer holding the result.
template <class P>
typename P::type* radix_sort(typename P::type* words, typename P::type* spare, int64_t n) {
  constexpr int kPasses = P::kShift / 8;
  int64_t counts[kPasses][256] = {};
  for (int64_t i = 0; i < n; ++i) {
    for (int d = 0; d < kPasses; ++d) ++counts[d][unsigned(words[i] >> (P::kShift + 8 * d)) & 255];
  }
  for (int d = 0; d < kPasses; ++d) {
    const int shift = P::kShift + 8 * d;
    if (counts[d][unsigned(words[0] >> shift) & 255] == n) continue;  // one digit: nothing to do
    int64_t start[256];
    int64_t total = 0;
    for (int b = 0; b < 256; ++b) {
      start[b] = total;
      total += counts[d][b];
    }
    for (int64_t i = 0; i < n; ++i) spare[start[unsigned(words[i] >> shift) & 255]++] = words[i];
    std::swap(words, spare);
  }
  return words;
}

// ---- layout -----------------------------------------------------------------------------

enum class Pick { All, TopSorted, TopByPosition };

AxisSplit lines_of(const KernelContext& ctx) {
  return split_axis(ctx.input(0).shape, ctx.attrs.get_int("axis"));
}

constexpr int64_t kMaxSlots = 64;
// Lines at least this long are radix sorted; shorter ones go to std::sort.
constexpr int64_t kRadixMinSize = 128;
// topk keeps a heap of the k best when k is at most this fraction of the axis.
constexpr int64_t kFewFactor = 8;
constexpr int64_t kMaxScratchBytes = int64_t(64) << 20;
constexpr int64_t kTile = 16;

// Orders every line and calls emit(args, value, out_position, position) for the first `keep`
// elements of its order: value is the element at `position` on the line and out_position
// where rank r of the line goes in an output whose axis has length `keep`.
template <class T, class Emit>
Kernel order_lines(KernelContext& ctx, bool descending, int64_t keep, Pick pick, Emit emit) {
  using Key = decltype(order_key(T{}));
  using P = Packing<Key>;
  using Word = typename P::type;
  const AxisSplit l = lines_of(ctx);
  const int64_t lines = l.lines();
  if (lines == 0 || keep == 0) return [](const Args&) {};
  if (P::kShift == 32 && l.extent > int64_t(UINT32_MAX)) {
    throw Error(ErrorKind::Value, ctx.op + ": an axis of more than 2^32 elements");
  }
  const bool radix = pick == Pick::All && l.extent >= kRadixMinSize;
  const bool few = pick != Pick::All && keep * kFewFactor <= l.extent;
  const int64_t tile = std::min(l.inner, kTile);
  const int64_t line_words = l.extent * (radix ? 2 : 1);
  const int64_t slot_bytes = tile * line_words * int64_t(sizeof(Word));
  const int64_t slots = std::max<int64_t>(
      1, std::min({lines, kMaxSlots, kMaxScratchBytes / std::max<int64_t>(1, slot_bytes)}));
  ctx.workspace_bytes = static_cast<size_t>(slots * slot_bytes);
  const double log_size = std::max(1.0, std::log2(double(l.extent)));
  const double slot_work = double(lines) / slots * l.extent * log_size;
  const int64_t grain = std::max<int64_t>(1, int64_t(20000.0 / std::max(1.0, slot_work)));
  const Key flip = descending ? ~Key(0) : Key(0);
  return [=](const Args& args) {
    const T* x = args.in<T>(0);
    parallel_for(slots, grain, [&](int64_t begin, int64_t end) {
      Word* buffer = reinterpret_cast<Word*>(args.scratch<unsigned char>() + begin * slot_bytes);
      Word* ordered[kTile];
      const int64_t last = end * lines / slots;
      for (int64_t line = begin * lines / slots; line < last;) {
        // A tile: up to kTile neighbouring lines at one outer position, read and written
        // together so that a strided axis still moves whole cache lines.
        const int64_t width = std::min({tile, last - line, (line / l.inner + 1) * l.inner - line});
        const T* in = x + l.start(line, l.extent);
        auto word = [&](int64_t i, int64_t b) {
          return P::pack(order_key(in[i * l.inner + b]) ^ flip, i);
        };
        if (!few) {
          for (int64_t i = 0; i < l.extent; ++i) {
            for (int64_t b = 0; b < width; ++b) buffer[b * line_words + i] = word(i, b);
          }
        }
        for (int64_t b = 0; b < width; ++b) {
          Word* words = buffer + b * line_words;
          if (pick == Pick::All) {
            ordered[b] = radix ? radix_sort<P>(words, words + l.extent, l.extent) : words;
            if (!radix) std::sort(words, words + l.extent);
            continue;
          }
          if (few) {  // a max-heap of the best k so far: most elements fail one comparison
            for (int64_t i = 0; i < keep; ++i) words[i] = word(i, b);
            std::make_heap(words, words + keep);
            for (int64_t i = keep; i < l.extent; ++i) {
              const Word w = word(i, b);
              if (w >= words[0]) continue;
              std::pop_heap(words, words + keep);
              words[keep - 1] = w;
              std::push_heap(words, words + keep);
            }
          } else if (keep < l.extent) {
            std::nth_element(words, words + keep, words + l.extent);
          }
          if (pick == Pick::TopSorted) {
            std::sort(words, words + keep);
          } else {
            std::sort(words, words + keep, [](Word a, Word c) {
              return P::position(a) < P::position(c);
            });
          }
          ordered[b] = words;
        }
        const int64_t out = l.start(line, keep);
        for (int64_t r = 0; r < keep; ++r) {
          for (int64_t b = 0; b < width; ++b) {
            const int64_t position = P::position(ordered[b][r]);
            emit(args, in[position * l.inner + b], out + r * l.inner + b, position);
          }
        }
        line += width;
      }
    });
  };
}

constexpr DTypeSet kOrdered = kBool | kReal;

Kernel sort(KernelContext& ctx) {
  const bool descending = ctx.attrs.get_bool("descending");
  const int64_t size = lines_of(ctx).extent;
  return dispatch<kOrdered>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    return order_lines<T>(ctx, descending, size, Pick::All,
                          [](const Args& args, T value, int64_t out, int64_t) {
                            args.out<T>(0)[out] = value;
                          });
  });
}

Kernel argsort(KernelContext& ctx) {
  const bool descending = ctx.attrs.get_bool("descending");
  const int64_t size = lines_of(ctx).extent;
  return dispatch<kOrdered>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    return order_lines<T>(ctx, descending, size, Pick::All,
                          [](const Args& args, T, int64_t out, int64_t position) {
                            args.out<int64_t>(0)[out] = position;
                          });
  });
}

Kernel topk(KernelContext& ctx) {
  const bool largest = ctx.attrs.get_bool("largest");
  const Pick pick = ctx.attrs.get_bool("sorted") ? Pick::TopSorted : Pick::TopByPosition;
  const int64_t k = ctx.attrs.get_int("k");
  return dispatch<kOrdered>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    return order_lines<T>(ctx, largest, k, pick,
                          [](const Args& args, T value, int64_t out, int64_t position) {
                            args.out<T>(0)[out] = value;
                            args.out<int64_t>(1)[out] = position;
                          });
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("sort", kOrdered, sort);
MSKERNEL_CPU_KERNEL("argsort", kOrdered, argsort);
MSKERNEL_CPU_KERNEL("topk", kOrdered, topk);

}  // namespace mskernel_cpu
