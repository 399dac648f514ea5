// one_hot: on_value where the new axis equals the index, off_value elsewhere; an index outside
// [0, depth) (negative included) gives an all-off line, as in TensorFlow.
//
// The output is [before, depth, after] around the new axis.  Work is split over the positions
// before the axis and blocks of positions after it: each task fills its block with off_value
// (contiguous runs) and then writes on_value at the one slot per index that is in range.
#include "mskernel_cpu/indexing.hpp"

namespace mskernel_cpu {
namespace {

Kernel one_hot(KernelContext& ctx) {
  const std::vector<int64_t>& is = ctx.input(0).shape;
  const int out_rank = ctx.output(0).rank();
  const int axis =
      normalize_axis(ctx.attrs.get_int("axis"), out_rank);
  const int64_t depth = ctx.attrs.get_int("depth");
  const int64_t before = dims_product(is, 0, axis);
  const int64_t after = dims_product(is, axis, is.size());
  const int64_t chunk = std::min<int64_t>(std::max<int64_t>(after, 1), 4096);
  const int64_t chunks = (after + chunk - 1) / chunk;
  const int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, depth * chunk));
  if (ctx.output(0).numel() == 0) return [](const Args&) {};
  const double on_value = ctx.attrs.get_float("on_value");
  const double off_value = ctx.attrs.get_float("off_value");
  return dispatch<kAll>(ctx.output(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    const T on = convert<T>(on_value), off = convert<T>(off_value);
    return dispatch_index(ctx.input(0).dtype, [&](auto index) -> Kernel {
      using I = typename decltype(index)::type;
      return [=](const Args& args) {
        const I* indices = args.in<I>(0);
        T* out = args.out<T>(0);
        parallel_for(before * chunks, grain, [&](int64_t begin, int64_t end) {
          for (int64_t task = begin; task < end; ++task) {
            const int64_t p = task / chunks, q0 = (task - p * chunks) * chunk;
            const int64_t q1 = std::min(after, q0 + chunk);
            T* block = out + p * depth * after;
            if (q1 - q0 == after) {  // the whole block is one run
              std::fill(block, block + depth * after, off);
            } else {
              for (int64_t d = 0; d < depth; ++d) {
                std::fill(block + d * after + q0, block + d * after + q1, off);
              }
            }
            for (int64_t q = q0; q < q1; ++q) {
              const I v = indices[p * after + q];
              if (index_in_range(v, depth)) block[static_cast<int64_t>(v) * after + q] = on;
            }
          }
        });
      };
    });
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("one_hot", kAll, one_hot);

}  // namespace mskernel_cpu
