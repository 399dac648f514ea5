// conv_transpose: the adjoint of conv with respect to its input (mskernel/ops/conv.py), as a
// gemm cols = w_g^T . x_g followed by a col2im scatter-add into y.
//
// y's spatial dims are the "input" of the equivalent forward window and x's its "output", so
// im2col's geometry and traversal serve here unchanged (col2im_add).  A task is one (image,
// group, block of output channels): it zeroes its slice of y, then for each block of x's
// pixels multiplies and scatters; tasks write disjoint parts of y, so no two threads add to
// one element.  Output channels are split when there are too few (image, group) pairs for
// the threads (batch 1).  A 1x1, stride-1, unpadded kernel is one gemm straight into y.
// float16/bfloat16: x and w are widened to float32 once per call, y accumulated in float32 and
// rounded once per task.
#include <string>

#include "mskernel_cpu/conv.hpp"
#include "mskernel_cpu/gemm.hpp"
#include "mskernel_cpu/im2col.hpp"

namespace mskernel_cpu {
namespace {

struct TransposePlan {
  WindowGeometry window;  // y's spatial dims -> x's (the forward conv's view)
  int64_t batch = 0, groups = 1;
  int64_t in_per_group = 0, out_per_group = 0;  // channels of x and of y per group
  int64_t channel_block = 1, channel_blocks = 0;
  int64_t pixel_block = 1;
  bool pointwise = false;
  int64_t x_numel = 0, w_numel = 0, y_numel = 0;
  size_t widened_bytes = 0;  // half types: float32 copies of x, w and y
  TaskSlots slots;
};

TransposePlan plan_transpose(const KernelContext& ctx, bool widened, size_t item) {
  const TensorInfo &x = ctx.input(0), &w = ctx.input(1), &y = ctx.output(0);
  TransposePlan p;
  const std::vector<int64_t> ones(x.rank() - 2, 1);
  p.window = window_geometry(spatial_dims(y.shape), spatial_dims(x.shape), spatial_dims(w.shape),
                             ctx.attrs, ones);
  const WindowGeometry& g = p.window;
  p.batch = x.shape[0];
  p.groups = ctx.attrs.get_int("groups");
  p.in_per_group = x.shape[1] / p.groups;
  p.out_per_group = w.shape[1];
  p.pointwise = g.taps() == 1 && g.is_identity_walk();
  const int64_t images = std::max<int64_t>(1, p.batch * p.groups);
  const int64_t splits = std::min<int64_t>(std::max<int64_t>(p.out_per_group, 1),
                                           (num_threads() + images - 1) / images);
  p.channel_block = std::max<int64_t>(1, (p.out_per_group + splits - 1) / splits);
  p.channel_blocks = (p.out_per_group + p.channel_block - 1) / p.channel_block;
  const int64_t rows = p.channel_block * g.taps();
  p.pixel_block = plan_pixel_block(g.out_pixels(), rows, item, 1);
  for (int64_t v : {rows, p.in_per_group, p.pixel_block, g.in_pixels(), g.out_pixels(),
                    p.out_per_group * g.taps()}) {
    check_blas_size("conv_transpose", v);
  }
  p.x_numel = x.numel();
  p.w_numel = w.numel();
  p.y_numel = y.numel();
  p.widened_bytes = widened ? sizeof(float) * static_cast<size_t>(p.x_numel + p.w_numel +
                                                                  p.y_numel) : 0;
  p.widened_bytes = (p.widened_bytes + 63) / 64 * 64;
  const int64_t tasks = p.y_numel == 0 ? 0 : p.batch * p.groups * p.channel_blocks;
  const double flops = double(rows) * double(p.in_per_group + 1) * double(g.out_pixels());
  const size_t slot_bytes = p.pointwise ? 0 : static_cast<size_t>(rows * p.pixel_block) * item;
  p.slots = plan_task_slots(tasks, flops, slot_bytes);
  return p;
}

// y = conv_transpose(x, w) in the compute type C (float or double).
template <class C>
void transpose_products(const TransposePlan& p, const C* x, const C* w, C* y, void* slots) {
  const WindowGeometry& g = p.window;
  const int64_t x_pixels = g.out_pixels(), y_pixels = g.in_pixels(), taps = g.taps();
  const int64_t lda = p.out_per_group * taps;  // w_g is [in_per_group, out_per_group * taps]
  p.slots.run(slots, [&](int64_t begin, int64_t end, void* scratch) {
    C* cols = static_cast<C*>(scratch);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t image_group = task / p.channel_blocks, group = image_group % p.groups;
      const int64_t c0 = task % p.channel_blocks * p.channel_block;
      const int64_t channels = std::min(p.channel_block, p.out_per_group - c0);
      const C* xg = x + image_group * p.in_per_group * x_pixels;
      const C* wg = w + group * p.in_per_group * lda + c0 * taps;
      C* yb = y + (image_group * p.out_per_group + c0) * y_pixels;
      if (p.pointwise) {
        gemm({channels, x_pixels, p.in_per_group, GemmLayout::Transposed}, wg, lda, xg,
             x_pixels, yb, y_pixels);
        continue;
      }
      std::fill(yb, yb + channels * y_pixels, C(0));
      for (int64_t p0 = 0; p0 < x_pixels; p0 += p.pixel_block) {
        const int64_t p1 = std::min(p0 + p.pixel_block, x_pixels);
        gemm({channels * taps, p1 - p0, p.in_per_group, GemmLayout::Transposed}, wg, lda,
             xg + p0, x_pixels, cols, p1 - p0);
        col2im_add(g, cols, channels, p0, p1, yb);
      }
    }
  });
}

Kernel conv_transpose(KernelContext& ctx) {
  const DType dtype = ctx.input(0).dtype;
  const bool widened = dtype == DType::Float16 || dtype == DType::BFloat16;
  const TransposePlan plan = plan_transpose(ctx, widened, widened ? 4 : itemsize(dtype));
  ctx.workspace_bytes = plan.widened_bytes + plan.slots.bytes();
  ctx.detail = std::string(plan.pointwise ? "gemm" : "gemm + col2im") +
               (widened ? " in float32" : "") + ", " + std::to_string(plan.channel_blocks) +
               " channel block(s), " + std::to_string(plan.slots.slots) + " range(s)";
  return dispatch<kFloat>(dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    return [plan](const Args& args) {
      char* slots = args.scratch<char>() + plan.widened_bytes;
      if constexpr (is_half_v<T>) {
        float* x = args.scratch<float>();
        float* w = x + plan.x_numel;
        float* y = w + plan.w_numel;
        widen_to_float(args.in<T>(0), x, plan.x_numel);
        widen_to_float(args.in<T>(1), w, plan.w_numel);
        transpose_products(plan, x, w, y, slots);
        T* out = args.out<T>(0);
        parallel_for(plan.y_numel, 1 << 16, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) out[i] = convert<T>(y[i]);
        });
      } else {
        transpose_products(plan, args.in<T>(0), args.in<T>(1), args.out<T>(0), slots);
      }
    };
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("conv_transpose", kFloat, conv_transpose);

}  // namespace mskernel_cpu
