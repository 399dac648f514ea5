// Helpers shared by the indexing kernels (gather, scatter and their relatives):
//
//   dispatch_bytes              move elements by size only (indexing never looks at values)
//   dispatch_index              the integer dtypes an index operand may have
//   check_indices               every index in [0, size), else the reference's error
//   checked_index               the same check inside a kernel's own loop
//   OffsetTable                 per-position element offsets of a broadcast group of dims
//   dims_product                the number of elements of a range of dimensions
//
// An out-of-range index raises ValueError naming the op, the index, its position in the
// index operand and the dimension it addresses, like the reference's IndexError (the first
// offending index in row-major order).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "mskernel_cpu/axis.hpp"
#include "mskernel_cpu/broadcast.hpp"
#include "mskernel_cpu/kernel.hpp"

namespace mskernel_cpu {

struct Bytes16 { uint64_t half[2]; };

// Calls f(Tag<E>{}) with E an unsigned integer of the element size of `dt` (Bytes16 for 16),
// so that copies vectorise as integer moves and gathers.
template <class F>
decltype(auto) dispatch_bytes(DType dt, F&& f) {
  switch (itemsize(dt)) {
    case 1: return f(Tag<uint8_t>{});
    case 2: return f(Tag<uint16_t>{});
    case 4: return f(Tag<uint32_t>{});
    case 8: return f(Tag<uint64_t>{});
    case 16: return f(Tag<Bytes16>{});
    default: throw Error(ErrorKind::Type, "unsupported element size");
  }
}

template <class F>
decltype(auto) dispatch_index(DType dt, F&& f) {
  return dispatch<kInteger>(dt, std::forward<F>(f));
}

// True when 0 <= v < size, for any integer type (a negative value wraps to a huge unsigned).
template <class I>
inline bool index_in_range(I v, int64_t size) {
  using Wide = std::conditional_t<std::is_signed_v<I>, int64_t, uint64_t>;
  return static_cast<uint64_t>(static_cast<Wide>(v)) < static_cast<uint64_t>(size);
}

// For loops that check as they go: v as an offset, or 0 (a safe place to read when size > 0)
// with `bad` set when v is out of range; afterwards check_indices names the first bad one.
template <class I>
inline int64_t checked_index(I v, int64_t size, bool& bad) {
  const bool ok = index_in_range(v, size);
  bad |= !ok;
  return ok ? static_cast<int64_t>(v) : 0;
}

// Where an index operand's values are checked: the op, the operand's name and shape.
struct IndexSite {
  std::string op;
  std::string operand = "indices";
  std::vector<int64_t> shape;
};

// "index 7 at indices[1, 2] is out of range for axis 0 of size 3".
[[noreturn]] inline void throw_out_of_range(const IndexSite& site, const std::string& value,
                                            int64_t flat_position, const std::string& dim,
                                            int64_t size) {
  std::vector<int64_t> position(site.shape.size());
  for (size_t d = site.shape.size(); d-- > 0;) {
    position[d] = flat_position % site.shape[d];
    flat_position /= site.shape[d];
  }
  std::string where;
  for (size_t d = 0; d < position.size(); ++d) {
    where += (d ? ", " : "") + std::to_string(position[d]);
  }
  const std::string range = "[0, " + std::to_string(size) + ")";
  throw Error(ErrorKind::Index,
              site.op + ": index " + value + " at " + site.operand + "[" + where +
                  "] is out of range for " + dim + " of size " + std::to_string(size) +
                  "; IR indices lie in " + range);
}

// Checks indices[first + i * stride] for i in [0, count) against [0, size); on failure names
// the first offending one (its flat position in the operand) as the reference does.
template <class I>
void check_indices(const IndexSite& site, const I* indices, int64_t count, const std::string& dim,
                   int64_t size, int64_t first = 0, int64_t stride = 1) {
  constexpr int64_t kBlock = 1 << 16;
  const int64_t blocks = (count + kBlock - 1) / kBlock;
  std::atomic<bool> any_bad{false};
  parallel_for(blocks, 1, [&](int64_t begin, int64_t end) {
    bool bad = false;
    for (int64_t i = begin * kBlock, stop = std::min(count, end * kBlock); i < stop; ++i) {
      bad |= !index_in_range(indices[first + i * stride], size);
    }
    if (bad) any_bad.store(true, std::memory_order_relaxed);
  });
  if (!any_bad.load()) return;
  for (int64_t i = 0; i < count; ++i) {
    const I v = indices[first + i * stride];
    if (!index_in_range(v, size)) {
      throw_out_of_range(site, std::to_string(+v), first + i * stride, dim, size);
    }
  }
}

// Element offsets, into each of two tensors, of every position of a group of output
// dimensions that both broadcast to (their C-contiguous strides given by the caller's
// scale): offsets[0][p], offsets[1][p] for p in row-major order of `out`.
struct OffsetTable {
  std::vector<int64_t> first, second;
  bool first_is_dense = true;  // first[p] == p * first_scale

  OffsetTable(const std::vector<int64_t>& a, int64_t a_scale, const std::vector<int64_t>& b,
              int64_t b_scale, const std::vector<int64_t>& out) {
    const Broadcast<2> layout(a, b, out);
    first.reserve(layout.numel());
    second.reserve(layout.numel());
    layout.for_each_run(0, layout.numel(), [&](const int64_t* offsets, int64_t, int64_t count,
                                               const int64_t* steps) {
      for (int64_t i = 0; i < count; ++i) {
        first.push_back((offsets[0] + i * steps[0]) * a_scale);
        second.push_back((offsets[1] + i * steps[1]) * b_scale);
      }
    });
    for (size_t p = 0; p < first.size() && first_is_dense; ++p) {
      first_is_dense = first[p] == static_cast<int64_t>(p) * a_scale;
    }
  }
};

// The product of shape[begin, end).
inline int64_t dims_product(const std::vector<int64_t>& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t d = begin; d < end && d < shape.size(); ++d) n *= shape[d];
  return n;
}

}  // namespace mskernel_cpu
