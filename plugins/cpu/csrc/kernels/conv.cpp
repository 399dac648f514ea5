// conv: grouped N-d cross-correlation (mskernel/ops/conv.py) as im2col + OpenBLAS gemm over
// blocks of output pixels (see conv.hpp), float32/float64 natively and float16/bfloat16 widened
// to float32 (im2col widens the input, the weight is widened once per call, each result is
// rounded once); 1-D and 2-D float32 convolutions with more than one tap go to the direct
// convolution of conv_direct.cpp.
#include "mskernel_cpu/conv.hpp"

#include <string>

#include "mskernel_cpu/gemm.hpp"
#include "mskernel_cpu/im2col.hpp"

namespace mskernel_cpu {

int64_t plan_pixel_block(int64_t pixels, int64_t rows, size_t item, int64_t min_blocks) {
  constexpr size_t kTileBytes = 256 << 10;  // the im2col tile, with room in L2 for the rest
  constexpr int64_t kMinBlock = 64, kAlign = 16;
  const size_t row_bytes = std::max<size_t>(1, static_cast<size_t>(rows) * item);
  const int64_t cap = std::max<int64_t>(kMinBlock, int64_t(kTileBytes / row_bytes));
  int64_t count = (pixels + cap - 1) / cap;
  count = std::max(count, std::min(min_blocks, (pixels + kMinBlock - 1) / kMinBlock));
  if (count <= 1) return pixels;
  const int64_t block = ((pixels + count - 1) / count + kAlign - 1) / kAlign * kAlign;
  return std::min(block, pixels);
}

std::string direct_tiles(const DirectConvPlan& d) {
  return d.channel_vectors == 0 ? "pixel vectors"
                                : std::to_string(d.channel_vectors) + " channel vector(s)";
}

bool depth_is_identity(const WindowGeometry& g) {
  return g.in[0] == 1 && g.kernel[0] == 1 && g.out[0] == 1 && g.pad_lo[0] == 0;
}

ConvPlan plan_conv(const KernelContext& ctx) {
  const TensorInfo &x = ctx.input(0), &w = ctx.input(1), &y = ctx.output(0);
  ConvPlan p;
  const std::vector<int64_t> ones(x.rank() - 2, 1);
  p.window = window_geometry(spatial_dims(x.shape), spatial_dims(y.shape), spatial_dims(w.shape),
                             ctx.attrs, ones);
  const WindowGeometry& g = p.window;
  p.batch = x.shape[0];
  p.groups = ctx.attrs.get_int("groups");
  p.in_per_group = x.shape[1] / p.groups;
  p.out_per_group = w.shape[0] / p.groups;
  p.rows = p.in_per_group * g.taps();
  p.pointwise = g.taps() == 1 && g.is_identity_walk();
  p.widened = x.dtype == DType::Float16 || x.dtype == DType::BFloat16;
  const size_t item = p.widened ? sizeof(float) : itemsize(x.dtype);
  const int64_t pixels = g.out_pixels(), images = p.batch * p.groups;
  const int64_t busy = (num_threads() + std::max<int64_t>(images, 1) - 1) /
                       std::max<int64_t>(images, 1);
  p.block = plan_pixel_block(pixels, p.rows, item, busy);
  p.blocks = (pixels + p.block - 1) / p.block;
  for (int64_t v : {p.rows, p.out_per_group, p.block, g.in_pixels(), pixels}) {
    check_blas_size("conv", v);
  }

  if (x.dtype == DType::Float32 && y.numel() != 0 && plan_direct_conv(p)) return p;
  const bool im2col = p.widened || !p.pointwise;
  const int64_t slot_entries = (im2col ? p.rows * p.block : 0) +
                               (p.widened ? p.out_per_group * p.block : 0);
  const int64_t tasks = y.numel() == 0 ? 0 : images * p.blocks;
  const double flops = double(p.out_per_group + 1) * double(p.rows) * double(p.block);
  p.slots = plan_task_slots(tasks, flops, static_cast<size_t>(slot_entries) * item);
  p.weight_bytes = p.widened ? (w.numel() * sizeof(float) + 63) / 64 * 64 : 0;
  p.workspace_bytes = p.weight_bytes + p.slots.bytes();
  return p;
}

template <class T>
void conv_forward(const ConvPlan& p, const T* x, const T* w, const Epilogue<T>& epilogue,
                  T* y, void* workspace) {
  using C = compute_t<T>;
  if constexpr (std::is_same_v<T, float>) {
    if (p.direct.used) return conv_direct(p, x, w, epilogue, y, workspace);
  }
  const WindowGeometry& g = p.window;
  const int64_t in_pixels = g.in_pixels(), out_pixels = g.out_pixels();
  char* base = static_cast<char*>(workspace);
  const C* weight;
  if constexpr (is_half_v<T>) {
    float* widened = reinterpret_cast<float*>(base);
    widen_to_float(w, widened, p.groups * p.out_per_group * p.rows);
    weight = widened;
  } else {
    weight = w;
  }
  const int64_t lda = std::max<int64_t>(p.rows, 1);
  p.slots.run(base + p.weight_bytes, [&](int64_t begin, int64_t end, void* scratch) {
    C* cols = static_cast<C*>(scratch);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t image_group = task / p.blocks;  // image * groups + group
      const int64_t group = image_group % p.groups;
      const int64_t p0 = task % p.blocks * p.block, p1 = std::min(p0 + p.block, out_pixels);
      const int64_t width = p1 - p0;
      const T* xg = x + image_group * p.in_per_group * in_pixels;
      T* yg = y + image_group * p.out_per_group * out_pixels + p0;
      const C* wg = weight + group * p.out_per_group * p.rows;
      const int64_t first_channel = group * p.out_per_group;
      const GemmShape shape{p.out_per_group, width, p.rows};
      if constexpr (std::is_same_v<T, C>) {
        if (p.pointwise) {
          gemm(shape, wg, lda, xg + p0, in_pixels, yg, out_pixels);
        } else {
          im2col(g, xg, p.in_per_group, p0, p1, cols);
          gemm(shape, wg, lda, cols, width, yg, out_pixels);
        }
        if (!epilogue.trivial()) {
          for (int64_t c = 0; c < p.out_per_group; ++c) {
            T* row = yg + c * out_pixels;
            finish_channel_run(epilogue, first_channel + c, row, row, width);
          }
        }
      } else {
        C* tile = cols + p.rows * p.block;
        im2col(g, xg, p.in_per_group, p0, p1, cols);
        gemm(shape, wg, lda, cols, width, tile, width);
        for (int64_t c = 0; c < p.out_per_group; ++c) {
          finish_channel_run(epilogue, first_channel + c, tile + c * width,
                             yg + c * out_pixels, width);
        }
      }
    }
  });
}

template void conv_forward<float>(const ConvPlan&, const float*, const float*,
                                  const Epilogue<float>&, float*, void*);
template void conv_forward<double>(const ConvPlan&, const double*, const double*,
                                   const Epilogue<double>&, double*, void*);
template void conv_forward<f16_t>(const ConvPlan&, const f16_t*, const f16_t*,
                                  const Epilogue<f16_t>&, f16_t*, void*);
template void conv_forward<bf16_t>(const ConvPlan&, const bf16_t*, const bf16_t*,
                                   const Epilogue<bf16_t>&, bf16_t*, void*);

namespace {

Kernel conv(KernelContext& ctx) {
  const ConvPlan plan = plan_conv(ctx);
  ctx.workspace_bytes = plan.workspace_bytes;
  if (plan.direct.used) {
    ctx.detail = "direct over " + direct_tiles(plan.direct) + ", blocks of " +
                 std::to_string(plan.direct.row_block) + " rows, ";
  } else {
    ctx.detail = std::string(plan.pointwise && !plan.widened ? "gemm" : "im2col + gemm") +
                 (plan.widened ? " in float32" : "") + ", blocks of " +
                 std::to_string(plan.block) + " pixels, ";
  }
  ctx.detail += std::to_string(plan.slots.slots) + " range(s)";
  return dispatch<kFloat>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    return [plan](const Args& args) {
      conv_forward<T>(plan, args.in<T>(0), args.in<T>(1), Epilogue<T>{}, args.out<T>(0),
                      args.workspace);
    };
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("conv", kFloat, conv);

}  // namespace mskernel_cpu
