// Data movement without arithmetic, shared by the shape kernels: element-size dispatch (the
// shape ops never look inside an element, so they are instantiated per size, not per dtype),
// fill values as element bytes, shape arithmetic, and StridedCopy, a dense output gathered
// from one input through per-dimension strides.
//
//   StridedCopy copy(out_shape, source_strides, source_offset, itemsize(dtype));
//   copy(args.in<void>(0), args.out<void>(0));   // at run time
//
// Output element (i0, i1, ...) is source element `offset + sum(ik * stridek)`; strides may be
// zero (broadcast) or negative (reversal).  At compile time size-1 dimensions are dropped and
// neighbours that are contiguous in both the source and the output are merged, so a reshape
// is one memcpy and a slice of whole rows a few.  At run time the output is walked in runs
// along its last dimension: memcpy for a contiguous source, a fill for a broadcast one, a
// gather otherwise; when the source is contiguous along another dimension (a transpose), the
// copy goes by square tiles that stay in cache.  Threads split the output by element ranges.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mskernel_cpu/dtype.hpp"
#include "mskernel_cpu/error.hpp"

namespace mskernel_cpu {

// Bytes a parallel task should move: a few tens of microseconds of memcpy.
constexpr int64_t kCopyTaskBytes = int64_t(1) << 18;

// A 16-byte element (complex128) moved as a unit.
struct Element16 {
  uint64_t low, high;
};

// Calls f(Tag<E>{}) with E an unsigned integer (or Element16) of `size` bytes.
template <class F>
decltype(auto) dispatch_element_size(size_t size, F&& f) {
  switch (size) {
    case 1: return f(Tag<uint8_t>{});
    case 2: return f(Tag<uint16_t>{});
    case 4: return f(Tag<uint32_t>{});
    case 8: return f(Tag<uint64_t>{});
    case 16: return f(Tag<Element16>{});
    default: throw Error(ErrorKind::Type, "no copy kernel for elements of this size");
  }
}

// A fill value: `value` converted to `dtype` as NumPy's astype does, as its device bytes.
using ElementBytes = std::array<unsigned char, 16>;
ElementBytes element_bytes(DType dtype, double value);

template <class E>
E element_from(const ElementBytes& bytes) {
  E element;
  std::memcpy(&element, bytes.data(), sizeof(E));
  return element;
}

// Shape arithmetic: C-contiguous element strides, the product of shape[begin:end], and an
// axis attribute (negative counts from the end; the op's rule has checked its range).
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);
int64_t dims_product(const std::vector<int64_t>& shape, size_t begin, size_t end);
class StridedCopy {
 public:
  StridedCopy(const std::vector<int64_t>& shape, const std::vector<int64_t>& source_strides,
              int64_t source_offset, size_t element_size);

  void operator()(const void* source, void* destination) const;
  // What the copy became after merging, for the plan dump ("memcpy", "gather 2-d", ...).
  std::string describe() const;

 private:
  template <class E> void copy_runs(const E* source, E* destination) const;
  template <class E> void copy_tiles(const E* source, E* destination) const;

  static constexpr int kMaxRank = 32;
  size_t element_size_;
  int64_t numel_ = 0;
  int64_t offset_ = 0;
  int rank_ = 0;  // after merging; >= 1 unless the output is empty
  int64_t shape_[kMaxRank] = {};
  int64_t strides_[kMaxRank] = {};
  int tile_axis_ = -1;  // a dimension other than the last with source stride 1, when tiling
};

}  // namespace mskernel_cpu
