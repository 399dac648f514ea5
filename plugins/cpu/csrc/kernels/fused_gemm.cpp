// cpu.conv_bias_act and cpu.matmul_bias_act (mskernel_cpu/gemm_ops.py), made by the pass
// cpu.fuse_gemm_epilogue: a conv or matmul whose Epilogue adds the optional third operand as a
// bias per output channel and applies the `activation` attribute to each output tile while it
// is in cache (conv.hpp, matmul.hpp), rounding once to the storage type; the direct float32
// convolution finishes whole output planes after it instead (see conv_then_epilogue).
// float32, float64, and float16/bfloat16 computed in float32, as the conv and matmul kernels.
#include <algorithm>
#include <string>
#include <type_traits>

#include "mskernel_cpu/conv.hpp"
#include "mskernel_cpu/matmul.hpp"

namespace mskernel_cpu {
namespace {

// The epilogue of a node: its bias operand (index 2) when it has one, its activation.
struct EpilogueSpec {
  bool has_bias = false;
  Activation activation = Activation::None;

  explicit EpilogueSpec(const KernelContext& ctx)
      : has_bias(ctx.inputs.size() > 2),
        activation(parse_activation(ctx.attrs.get_str("activation"))) {}

  template <class T>
  Epilogue<T> at(const Args& args) const {
    return Epilogue<T>{has_bias ? args.in<T>(2) : nullptr, activation};
  }
};

std::string activation_name(const KernelContext& ctx) { return ctx.attrs.get_str("activation"); }

// y = epilogue(y) over `planes` contiguous float planes of `pixels` values, plane i of channel
// i % channels, split over the threads.
void finish_planes(const Epilogue<float>& epilogue, float* y, int64_t planes, int64_t channels,
                   int64_t pixels) {
  constexpr int64_t kMinRangeValues = 1 << 15;
  const int64_t grain = std::max<int64_t>(1, kMinRangeValues / std::max<int64_t>(1, pixels));
  parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      finish_channel_run(epilogue, i % channels, y + i * pixels, y + i * pixels, pixels);
    }
  });
}

// The direct convolution (conv_direct.cpp) would finish its register tiles in runs of at most
// 8 pixels, where the per-run cost outweighs the memory traffic saved; its output gets the
// epilogue in one pass of whole planes after it instead.
void conv_then_epilogue(const ConvPlan& plan, const float* x, const float* w,
                        const Epilogue<float>& epilogue, float* y, void* workspace) {
  conv_forward<float>(plan, x, w, Epilogue<float>{}, y, workspace);
  const int64_t channels = plan.groups * plan.out_per_group;
  finish_planes(epilogue, y, plan.batch * channels, channels, plan.window.out_pixels());
}

Kernel conv_bias_act(KernelContext& ctx) {
  const ConvPlan plan = plan_conv(ctx);
  const EpilogueSpec spec(ctx);
  ctx.workspace_bytes = plan.workspace_bytes;
  ctx.detail = (plan.direct.used ? "direct over " + direct_tiles(plan.direct) + ", then per plane"
                                 : std::string(plan.pointwise && !plan.widened ? "gemm"
                                                                               : "im2col + gemm")) +
               (spec.has_bias ? " + bias" : "") + " + " + activation_name(ctx) + ", " +
               std::to_string(plan.slots.slots) + " range(s)";
  return dispatch<kFloat>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) {
      if (plan.direct.used) {
        return [plan, spec](const Args& args) {
          conv_then_epilogue(plan, args.in<float>(0), args.in<float>(1), spec.at<float>(args),
                             args.out<float>(0), args.workspace);
        };
      }
    }
    return [plan, spec](const Args& args) {
      conv_forward<T>(plan, args.in<T>(0), args.in<T>(1), spec.at<T>(args), args.out<T>(0),
                      args.workspace);
    };
  });
}

Kernel matmul_bias_act(KernelContext& ctx) {
  const MatmulPlan plan = plan_matmul(ctx);
  const EpilogueSpec spec(ctx);
  ctx.workspace_bytes = plan.workspace_bytes;
  const DType dtype = ctx.input(0).dtype;
  const bool widened = dtype == DType::Float16 || dtype == DType::BFloat16;
  ctx.detail = std::string(widened ? "sgemm in float32" : "gemm") +
               (spec.has_bias ? " + bias" : "") + " + " + activation_name(ctx);
  return dispatch<kFloat>(dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    return [plan, spec](const Args& args) {
      matmul_forward<T>(plan, args.in<T>(0), args.in<T>(1), spec.at<T>(args), args.out<T>(0),
                        args.workspace);
    };
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("cpu.conv_bias_act", kFloat, conv_bias_act);
MSKERNEL_CPU_KERNEL("cpu.matmul_bias_act", kFloat, matmul_bias_act);

}  // namespace mskernel_cpu
