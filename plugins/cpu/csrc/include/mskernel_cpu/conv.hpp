// Convolution for the conv kernel and for fused kernels built on it (a bias add and an
// activation applied to each output tile by an Epilogue).
//
//   ConvPlan plan = plan_conv(ctx);            // factory: geometry, tiling, workspace
//   ctx.workspace_bytes = plan.workspace_bytes;
//   conv_forward<T>(plan, x, w, epilogue, y, args.workspace);   // closure
//
// Each task is one (image, group, block of output pixels): im2col of the block into scratch
// (skipped for a 1x1, stride-1, unpadded conv, whose input already is that matrix), one gemm
// y_block[C_out/G, pixels] = w_g[C_out/G, C_in/G * taps] . cols, then the epilogue on the tile.
// The pixel block is sized so the im2col tile stays in L2, and split finer when there are too
// few (image, group) pairs to keep every thread busy (batch 1).  float32 convolutions over one
// or two spatial dims with more than one tap use a direct convolution instead (conv_direct.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mskernel_cpu/epilogue.hpp"
#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/window.hpp"

namespace mskernel_cpu {

// `tasks` tasks of about equal cost split over at most `slots` concurrent ranges, each range
// with its own `slot_bytes` of scratch (64-byte aligned) in the kernel's workspace.
struct TaskSlots {
  int64_t tasks = 0;
  int64_t slots = 1;
  size_t slot_bytes = 0;

  size_t bytes() const { return static_cast<size_t>(slots) * slot_bytes; }

  // Calls f(begin, end, scratch) on consecutive ranges of tasks, concurrently, each range
  // with a scratch area no other running range uses.
  template <class F>
  void run(void* workspace, F&& f) const {
    parallel_for(slots, 1, [&](int64_t first, int64_t last) {
      void* scratch = static_cast<char*>(workspace) + static_cast<size_t>(first) * slot_bytes;
      f(tasks * first / slots, tasks * last / slots, scratch);
    });
  }
};

// Splits `tasks` tasks of `flops_per_task` multiply-adds over the threads, each range doing
// at least a few tens of microseconds of work.
inline TaskSlots plan_task_slots(int64_t tasks, double flops_per_task, size_t slot_bytes) {
  constexpr double kMinRangeFlops = 1 << 20;
  const double ranges = std::max(1.0, tasks * flops_per_task / kMinRangeFlops);
  TaskSlots s;
  s.tasks = tasks;
  s.slots = std::max<int64_t>(1, std::min<int64_t>({num_threads(), tasks, int64_t(ranges)}));
  s.slot_bytes = (slot_bytes + 63) / 64 * 64;
  return s;
}

// Pixels per block of a [rows, pixels] scratch tile of `item`-byte entries: the tile fits in
// L2, and there are at least `min_blocks` blocks when blocks of 64 pixels allow it.  The block
// is a multiple of 16 pixels unless it is all of them.
int64_t plan_pixel_block(int64_t pixels, int64_t rows, size_t item, int64_t min_blocks);

// The direct float32 convolution (conv_direct.cpp), used for 1-D and 2-D windows: tasks are
// (image, group, block of output rows), each over a zero-padded input tile whose rows are
// split into stride phases.
struct DirectConvPlan {
  bool used = false;
  int64_t phase_width = 0;      // floats of one phase of a tile row
  int64_t tile_width = 0;       // floats of a tile row: stride * phase_width
  int64_t row_block = 1, row_blocks = 0;  // output rows per task, tasks per (image, group)
  int64_t tile_channel = 0;     // floats between the channels of the input tile
  int64_t tile_floats = 0;      // the input tile of one task
  int64_t channel_vectors = 0;  // register tiles of 8-channel vectors (1, 2), or 0: of pixels
  int64_t block_channels = 4;   // output channels of a register tile
  int64_t channel_blocks = 0;   // blocks of block_channels output channels per group
  std::vector<int64_t> read_offsets;  // in the tile, of each (input channel, tap)'s first read

  // Input columns first, first + stride, ... (count of them) fill phase `phase` of a tile
  // row from index `start` on.
  struct PhaseCopy {
    int64_t phase = 0, first = 0, start = 0, count = 0;
  };
  std::vector<PhaseCopy> phases;
  size_t weight_bytes = 0;      // the repacked weight, shared by all tasks

  // Input rows read by `rows` consecutive output rows.
  static int64_t tile_rows(int64_t rows, const WindowGeometry& g) {
    return (rows - 1) * g.stride[1] + g.dilation[1] * (g.kernel[1] - 1) + 1;
  }
};

struct ConvPlan {
  WindowGeometry window;  // x's spatial dims -> y's
  int64_t batch = 0, groups = 1;
  int64_t in_per_group = 0, out_per_group = 0;
  int64_t rows = 0;       // in_per_group * taps: the gemm's inner dimension
  int64_t block = 1;      // output pixels per task
  int64_t blocks = 0;     // tasks per (image, group)
  bool pointwise = false; // 1x1, stride 1, unpadded: x is its own im2col matrix
  bool widened = false;   // float16/bfloat16: computed in float32
  size_t weight_bytes = 0;  // the widened weight, shared by all tasks (half types)
  DirectConvPlan direct;
  TaskSlots slots;
  size_t workspace_bytes = 0;
};

// Whether the window's depth (the first of the three dims) is the identity: one input plane,
// one tap, one output plane, no depth padding, so output plane 0 is the 2-D window over input
// plane 0.  The direct convolution walks only height and width, so it takes 1-D and 2-D
// windows (whose depth is always the identity) and 3-D ones of this shape.  Checking the
// input and kernel depths alone is not enough: depth padding adds output planes (all zero
// but the one reading input plane 0) or moves the plane read (a zero output).
bool depth_is_identity(const WindowGeometry& g);

// Plans the direct convolution of a float32 conv when it applies (sets plan.direct.used, the
// slots and the workspace); false otherwise.
bool plan_direct_conv(ConvPlan& plan);

// The register tiles of a direct convolution, for plan dumps: "pixel vectors" or
// "<n> channel vector(s)".
std::string direct_tiles(const DirectConvPlan& d);

// The direct convolution planned by plan_direct_conv.
void conv_direct(const ConvPlan& plan, const float* x, const float* w,
                 const Epilogue<float>& epilogue, float* y, void* workspace);

// The plan of a conv node (inputs x, w; output y; attrs stride, padding, dilation, groups).
ConvPlan plan_conv(const KernelContext& ctx);

// y = epilogue(conv(x, w)) for T in float, double, f16_t, bf16_t.
template <class T>
void conv_forward(const ConvPlan& plan, const T* x, const T* w, const Epilogue<T>& epilogue,
                  T* y, void* workspace);

extern template void conv_forward<float>(const ConvPlan&, const float*, const float*,
                                         const Epilogue<float>&, float*, void*);
extern template void conv_forward<double>(const ConvPlan&, const double*, const double*,
                                          const Epilogue<double>&, double*, void*);
extern template void conv_forward<f16_t>(const ConvPlan&, const f16_t*, const f16_t*,
                                         const Epilogue<f16_t>&, f16_t*, void*);
extern template void conv_forward<bf16_t>(const ConvPlan&, const bf16_t*, const bf16_t*,
                                          const Epilogue<bf16_t>&, bf16_t*, void*);

}  // namespace mskernel_cpu
