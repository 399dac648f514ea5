// Shape ops that are one strided copy of their input (StridedCopy, strided_copy.hpp): each
// factory states where output element i comes from as per-dimension source strides and an
// offset.  reshape, squeeze and expand_dims are a plain copy; transpose permutes the strides,
// broadcast_to and tile/repeat add stride-0 dimensions, flip and slice negate/scale them.
// Every dtype: the copy moves elements by size without looking at them.
#include <algorithm>

#include "mskernel_cpu/axis.hpp"
#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/strided_copy.hpp"

namespace mskernel_cpu {
namespace {

Kernel strided_copy_kernel(KernelContext& ctx, const std::vector<int64_t>& shape,
                           const std::vector<int64_t>& strides, int64_t offset) {
  const StridedCopy copy(shape, strides, offset, itemsize(ctx.input(0).dtype));
  ctx.detail = copy.describe();
  return [copy](const Args& args) { copy(args.inputs[0], args.outputs[0]); };
}

// reshape, squeeze, expand_dims: the same elements in the same order.
Kernel plain_copy(KernelContext& ctx) {
  const std::vector<int64_t>& shape = ctx.output(0).shape;
  return strided_copy_kernel(ctx, shape, contiguous_strides(shape), 0);
}

Kernel transpose(KernelContext& ctx) {
  const int rank = ctx.input(0).rank();
  const std::vector<int64_t> in_strides = ctx.input(0).strides();
  std::vector<int64_t> perm(rank);
  if (ctx.attrs.is_none("perm")) {
    for (int i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
  } else {
    perm = ctx.attrs.get_ints("perm");
  }
  std::vector<int64_t> strides(rank);
  for (int i = 0; i < rank; ++i) strides[i] = in_strides[normalize_axis(perm[i], rank)];
  return strided_copy_kernel(ctx, ctx.output(0).shape, strides, 0);
}

Kernel broadcast_to(KernelContext& ctx) {
  const std::vector<int64_t>& in_shape = ctx.input(0).shape;
  const std::vector<int64_t> in_strides = ctx.input(0).strides();
  const std::vector<int64_t>& shape = ctx.output(0).shape;
  const size_t lead = shape.size() - in_shape.size();
  std::vector<int64_t> strides(shape.size(), 0);
  for (size_t d = 0; d < in_shape.size(); ++d) {
    strides[lead + d] = in_shape[d] == 1 ? 0 : in_strides[d];
  }
  return strided_copy_kernel(ctx, shape, strides, 0);
}

Kernel flip(KernelContext& ctx) {
  const std::vector<int64_t>& shape = ctx.input(0).shape;
  const int rank = ctx.input(0).rank();
  std::vector<int64_t> strides = ctx.input(0).strides();
  std::vector<bool> flipped(rank, ctx.attrs.is_none("axes"));
  if (!ctx.attrs.is_none("axes")) {
    for (int64_t axis : ctx.attrs.get_ints("axes")) flipped[normalize_axis(axis, rank)] = true;
  }
  int64_t offset = 0;
  for (int d = 0; d < rank; ++d) {
    if (!flipped[d] || shape[d] == 0) continue;
    offset += (shape[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  return strided_copy_kernel(ctx, shape, strides, offset);
}

// Python's slice.indices: the first index a slice of `length` visits.
int64_t slice_start(int64_t start, int64_t step, int64_t length) {
  if (start < 0) {
    start += length;
    if (start < 0) return step < 0 ? -1 : 0;
  } else if (start >= length) {
    return step < 0 ? length - 1 : length;
  }
  return start;
}

Kernel slice(KernelContext& ctx) {
  const int rank = ctx.input(0).rank();
  const std::vector<int64_t>& in_shape = ctx.input(0).shape;
  std::vector<int64_t> strides = ctx.input(0).strides();
  const std::vector<int64_t>& starts = ctx.attrs.get_ints("starts");
  std::vector<int64_t> axes(starts.size());
  if (ctx.attrs.is_none("axes")) {
    for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  } else {
    axes = ctx.attrs.get_ints("axes");
  }
  std::vector<int64_t> steps(starts.size(), 1);
  if (!ctx.attrs.is_none("steps")) steps = ctx.attrs.get_ints("steps");
  int64_t offset = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const size_t axis = normalize_axis(axes[i], rank);
    if (ctx.output(0).shape[axis] == 0) continue;  // nothing is read
    offset += slice_start(starts[i], steps[i], in_shape[axis]) * strides[axis];
    strides[axis] = ctx.output(0).shape[axis] == 1 ? 0 : strides[axis] * steps[i];
  }
  return strided_copy_kernel(ctx, ctx.output(0).shape, strides, offset);
}

// tile: output axis k seen as (reps[k], shape[k]) with source strides (0, stride[k]).
Kernel tile(KernelContext& ctx) {
  const std::vector<int64_t>& reps = ctx.attrs.get_ints("reps");
  const std::vector<int64_t>& in_shape = ctx.input(0).shape;
  const std::vector<int64_t> in_strides = ctx.input(0).strides();
  const size_t rank = std::max(reps.size(), in_shape.size());
  const size_t shape_lead = rank - in_shape.size(), reps_lead = rank - reps.size();
  std::vector<int64_t> shape, strides;
  for (size_t d = 0; d < rank; ++d) {
    shape.push_back(d < reps_lead ? 1 : reps[d - reps_lead]);
    strides.push_back(0);
    shape.push_back(d < shape_lead ? 1 : in_shape[d - shape_lead]);
    strides.push_back(d < shape_lead ? 0 : in_strides[d - shape_lead]);
  }
  return strided_copy_kernel(ctx, shape, strides, 0);
}

// repeat: the repeated axis seen as (size, repeats) with source strides (stride, 0).
Kernel repeat(KernelContext& ctx) {
  const int64_t repeats = ctx.attrs.get_int("repeats");
  std::vector<int64_t> shape = ctx.input(0).shape;
  std::vector<int64_t> strides = ctx.input(0).strides();
  size_t axis = 0;
  if (ctx.attrs.is_none("axis")) {
    shape = {ctx.input(0).numel()};
    strides = {1};
  } else {
    axis = normalize_axis(ctx.attrs.get_int("axis"), ctx.input(0).rank());
  }
  shape.insert(shape.begin() + axis + 1, repeats);
  strides.insert(strides.begin() + axis + 1, 0);
  return strided_copy_kernel(ctx, shape, strides, 0);
}

}  // namespace

MSKERNEL_CPU_KERNEL("reshape", kAll, plain_copy);
MSKERNEL_CPU_KERNEL("squeeze", kAll, plain_copy);
MSKERNEL_CPU_KERNEL("expand_dims", kAll, plain_copy);
MSKERNEL_CPU_KERNEL("transpose", kAll, transpose);
MSKERNEL_CPU_KERNEL("broadcast_to", kAll, broadcast_to);
MSKERNEL_CPU_KERNEL("flip", kAll, flip);
MSKERNEL_CPU_KERNEL("slice", kAll, slice);
MSKERNEL_CPU_KERNEL("tile", kAll, tile);
MSKERNEL_CPU_KERNEL("repeat", kAll, repeat);

}  // namespace mskernel_cpu
