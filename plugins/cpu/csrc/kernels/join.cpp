// concat, stack and split as row block copies.  Seen as rows (the dimensions before the axis)
// of bytes, each input of a concat fills one column block of every output row, and each
// output of a split takes one column block of every input row; stack is a concat along a new
// axis of size 1.  The blocks are worked out at compile time (large ones cut into pieces of
// about kCopyTaskBytes) and the rows x pieces are shared among threads, each a memcpy.
// Every dtype: the copies move bytes.
#include <algorithm>
#include <cstring>

#include "mskernel_cpu/axis.hpp"
#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/strided_copy.hpp"

namespace mskernel_cpu {
namespace {

// `bytes` copied in every row r from source[source_index] + r * source_row + source_offset
// to destination[destination_index] + r * destination_row + destination_offset.
struct Piece {
  int source_index, destination_index;
  int64_t source_row, source_offset;
  int64_t destination_row, destination_offset;
  int64_t bytes;
};

// Rows [first, last) of one piece.  The sizes of single elements get a memcpy of fixed size,
// which compiles to a move (stack along the last axis copies one element per piece).
template <size_t Bytes>
void copy_piece_rows(const Piece& piece, const unsigned char* source, unsigned char* destination,
                     int64_t first, int64_t last) {
  const size_t bytes = Bytes != 0 ? Bytes : static_cast<size_t>(piece.bytes);
  source += piece.source_offset;
  destination += piece.destination_offset;
  for (int64_t r = first; r < last; ++r) {
    std::memcpy(destination + r * piece.destination_row, source + r * piece.source_row, bytes);
  }
}

void copy_piece_rows(const Piece& piece, const unsigned char* source, unsigned char* destination,
                     int64_t first, int64_t last) {
  switch (piece.bytes) {
    case 1: return copy_piece_rows<1>(piece, source, destination, first, last);
    case 2: return copy_piece_rows<2>(piece, source, destination, first, last);
    case 4: return copy_piece_rows<4>(piece, source, destination, first, last);
    case 8: return copy_piece_rows<8>(piece, source, destination, first, last);
    case 16: return copy_piece_rows<16>(piece, source, destination, first, last);
    default: return copy_piece_rows<0>(piece, source, destination, first, last);
  }
}

class RowBlockCopy {
 public:
  explicit RowBlockCopy(int64_t rows) : rows_(rows) {}

  // A block of every row, cut into pieces of at most kCopyTaskBytes.
  void add_block(int source_index, int64_t source_row, int64_t source_offset,
                 int destination_index, int64_t destination_row, int64_t destination_offset,
                 int64_t bytes) {
    for (int64_t done = 0; done < bytes; done += kCopyTaskBytes) {
      total_bytes_ += std::min(kCopyTaskBytes, bytes - done);
      pieces_.push_back(Piece{source_index, destination_index, source_row,
                              source_offset + done, destination_row, destination_offset + done,
                              std::min(kCopyTaskBytes, bytes - done)});
    }
  }

  void operator()(const Args& args) const {
    const int64_t count = static_cast<int64_t>(pieces_.size());
    if (count == 0 || rows_ == 0) return;
    const int64_t grain = std::max<int64_t>(1, kCopyTaskBytes * count / total_bytes_);
    const auto* sources = reinterpret_cast<const unsigned char* const*>(args.inputs);
    auto* destinations = reinterpret_cast<unsigned char* const*>(args.outputs);
    // Units are row * count + piece; a range copies its units piece by piece.
    parallel_for(rows_ * count, grain, [&](int64_t begin, int64_t end) {
      for (int64_t index = 0; index < count; ++index) {
        const Piece& piece = pieces_[index];
        copy_piece_rows(piece, sources[piece.source_index],
                        destinations[piece.destination_index],
                        (begin - index + count - 1) / count, (end - index + count - 1) / count);
      }
    });
  }

 private:
  int64_t rows_;
  int64_t total_bytes_ = 0;  // of one row
  std::vector<Piece> pieces_;
};

// Inputs joined as column blocks of the output's rows; `axis` indexes the output, and input
// i has extent[i] along it (1 for stack).
Kernel join(KernelContext& ctx, size_t axis, const std::vector<int64_t>& extents) {
  const std::vector<int64_t>& shape = ctx.output(0).shape;
  const int64_t element = static_cast<int64_t>(itemsize(ctx.output(0).dtype));
  const int64_t unit = dims_product(shape, axis + 1, shape.size()) * element;
  const int64_t out_row = shape[axis] * unit;
  RowBlockCopy copy(dims_product(shape, 0, axis));
  int64_t column = 0;
  for (size_t i = 0; i < extents.size(); ++i) {
    const int64_t bytes = extents[i] * unit;
    copy.add_block(static_cast<int>(i), bytes, 0, 0, out_row, column, bytes);
    column += bytes;
  }
  return [copy](const Args& args) { copy(args); };
}

Kernel concat(KernelContext& ctx) {
  const size_t axis = normalize_axis(ctx.attrs.get_int("axis"), ctx.output(0).rank());
  std::vector<int64_t> extents;
  for (const TensorInfo& input : ctx.inputs) extents.push_back(input.shape[axis]);
  return join(ctx, axis, extents);
}

Kernel stack(KernelContext& ctx) {
  const size_t axis = normalize_axis(ctx.attrs.get_int("axis"), ctx.output(0).rank());
  return join(ctx, axis, std::vector<int64_t>(ctx.inputs.size(), 1));
}

Kernel split(KernelContext& ctx) {
  const std::vector<int64_t>& shape = ctx.input(0).shape;
  const size_t axis = normalize_axis(ctx.attrs.get_int("axis"), ctx.input(0).rank());
  const int64_t element = static_cast<int64_t>(itemsize(ctx.input(0).dtype));
  const int64_t unit = dims_product(shape, axis + 1, shape.size()) * element;
  const int64_t in_row = shape[axis] * unit;
  RowBlockCopy copy(dims_product(shape, 0, axis));
  int64_t column = 0;
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    const int64_t bytes = ctx.output(i).shape[axis] * unit;
    copy.add_block(0, in_row, column, static_cast<int>(i), bytes, 0, bytes);
    column += bytes;
  }
  return [copy](const Args& args) { copy(args); };
}

}  // namespace

MSKERNEL_CPU_KERNEL("concat", kAll, concat);
MSKERNEL_CPU_KERNEL("stack", kAll, stack);
MSKERNEL_CPU_KERNEL("split", kAll, split);

}  // namespace mskernel_cpu
