// layer_norm, group_norm and batch_norm: y = (x - mean) * rstd * scale + bias with
// rstd = 1 / sqrt(var + eps) and the biased variance, each as one kernel that computes the
// statistics and normalises.
//
// Statistics are sums over contiguous runs accumulated in double in vector registers (see
// `moments` for the variance); the normalisation runs in the compute type (float for
// float16/bfloat16) in the reference's order of operations.  layer_norm works on rows (the
// axes from `axis` on), group_norm on the contiguous block of each (sample, group); both
// split rows or blocks among threads.
// batch_norm in training finds each channel's statistics over [N, spatial] (threads split
// channels) and returns them; otherwise it uses and returns the given ones.  Its normalising
// pass splits the (sample, channel) runs among threads.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "mskernel_cpu/axis.hpp"
#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/vector_math.hpp"

namespace mskernel_cpu {
namespace {

constexpr int64_t kGrainElements = 16384;  // elements per thread range (about 3 passes each)

int64_t grain_for_runs(int64_t run_length) {
  return std::max<int64_t>(1, kGrainElements / std::max<int64_t>(1, run_length));
}

// The sum of f(x[i]) over a contiguous run, in double (f maps lanes and scalars alike).
template <class T, class F>
double run_sum(const T* x, int64_t n, F f) {
  constexpr int width = lane_count<double>;
  lanes_t<double> first = {}, second = {};
  int64_t i = 0;
  for (; i + 2 * width <= n; i += 2 * width) {
    first += f(load_lanes<double>(x + i));
    second += f(load_lanes<double>(x + i + width));
  }
  double total = lane_sum<double>(first + second);
  for (; i < n; ++i) total += f(double(load(x[i])));
  return total;
}

// Adds the sums of d and d^2, d = x[i] - shift, over a contiguous run to *sum and *squares.
template <class T>
void add_shifted_sums(const T* x, int64_t n, double shift, double* sum, double* squares) {
  constexpr int width = lane_count<double>;
  lanes_t<double> sum_a = {}, sum_b = {}, squares_a = {}, squares_b = {};
  int64_t i = 0;
  for (; i + 2 * width <= n; i += 2 * width) {
    const lanes_t<double> a = load_lanes<double>(x + i) - shift;
    const lanes_t<double> b = load_lanes<double>(x + i + width) - shift;
    sum_a += a;
    sum_b += b;
    squares_a += a * a;
    squares_b += b * b;
  }
  double tail = 0, tail_squares = 0;
  for (; i < n; ++i) {
    const double d = double(load(x[i])) - shift;
    tail += d;
    tail_squares += d * d;
  }
  *sum += lane_sum<double>(sum_a + sum_b) + tail;
  *squares += lane_sum<double>(squares_a + squares_b) + tail_squares;
}

struct Moments {
  double mean, variance;
};

// Mean and biased variance of `runs` contiguous runs of `length` elements, `stride` apart
// (NaN for no elements, as the reference's 0 / 0).  float64 takes two passes: the mean, then
// the squared deviations from it.  Narrower types take one, summing d and d^2 for d = x - x[0]
// in double: the variance E[d^2] - E[d]^2 then cancels only as much as (mean - x[0])^2 exceeds
// it, which double absorbs far below float32 precision.
template <class T>
Moments moments(const T* x, int64_t runs, int64_t length, int64_t stride) {
  const double count = double(runs * length);
  double sum = 0, squares = 0;
  if constexpr (std::is_same_v<T, double>) {
    for (int64_t r = 0; r < runs; ++r) {
      sum += run_sum(x + r * stride, length, [](auto v) { return v; });
    }
    const double mean = sum / count;
    for (int64_t r = 0; r < runs; ++r) {
      squares += run_sum(x + r * stride, length, [mean](auto v) {
        return (v - mean) * (v - mean);
      });
    }
    return {mean, squares / count};
  } else {
    const double shift = count > 0 ? double(load(x[0])) : 0.0;
    for (int64_t r = 0; r < runs; ++r) {
      add_shifted_sums(x + r * stride, length, shift, &sum, &squares);
    }
    const double shifted_mean = sum / count;
    const double variance = squares / count - shifted_mean * shifted_mean;
    return {shift + shifted_mean, std::max(variance, 0.0)};
  }
}

double inverse_std(double variance, double eps) { return 1.0 / std::sqrt(variance + eps); }

Kernel layer_norm(KernelContext& ctx) {
  const std::vector<int64_t>& shape = ctx.input(0).shape;
  const int rank = static_cast<int>(shape.size());
  const int64_t axis = ctx.attrs.get_int("axis");
  const int first = static_cast<int>(((axis % rank) + rank) % rank);
  const AxisSplit s = split_axes(shape, first, rank);  // [rows, normalised, 1]
  const double eps = ctx.attrs.get_float("eps");
  return dispatch<kFloat>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    return [s, eps](const Args& args) {
      const T* x = args.in<T>(0);
      const T* scale = args.in<T>(1);
      const T* bias = args.in<T>(2);
      T* y = args.out<T>(0);
      T* mean_out = args.out<T>(1);
      T* rstd_out = args.out<T>(2);
      const int64_t n = s.extent;
      parallel_for(s.outer, grain_for_runs(n), [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const Moments m = moments(x + row * n, 1, n, n);
          const double rstd = inverse_std(m.variance, eps);
          mean_out[row] = convert<T>(m.mean);
          rstd_out[row] = convert<T>(rstd);
          const C mean = C(m.mean), r = C(rstd);
          const T* xs = x + row * n;
          T* ys = y + row * n;
          for (int64_t j = 0; j < n; ++j) {
            ys[j] = convert<T>((load(xs[j]) - mean) * r * load(scale[j]) + load(bias[j]));
          }
        }
      });
    };
  });
}

Kernel group_norm(KernelContext& ctx) {
  const std::vector<int64_t>& shape = ctx.input(0).shape;
  const AxisSplit s = split_axes(shape, 1, 2);  // [N, C, spatial]
  const int64_t groups = ctx.attrs.get_int("num_groups");
  const double eps = ctx.attrs.get_float("eps");
  return dispatch<kFloat>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const int64_t per_group = s.extent / groups, block = per_group * s.inner;
    return [s, groups, per_group, block, eps](const Args& args) {
      const T* x = args.in<T>(0);
      const T* scale = args.in<T>(1);
      const T* bias = args.in<T>(2);
      T* y = args.out<T>(0);
      T* mean_out = args.out<T>(1);
      T* rstd_out = args.out<T>(2);
      parallel_for(s.outer * groups, grain_for_runs(block), [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {  // b = sample * groups + group
          const Moments m = moments(x + b * block, 1, block, block);
          const double rstd = inverse_std(m.variance, eps);
          mean_out[b] = convert<T>(m.mean);
          rstd_out[b] = convert<T>(rstd);
          const C mean = C(m.mean), r = C(rstd);
          for (int64_t k = 0; k < per_group; ++k) {
            const int64_t channel = b % groups * per_group + k;
            const C gain = load(scale[channel]), shift = load(bias[channel]);
            const T* xs = x + b * block + k * s.inner;
            T* ys = y + b * block + k * s.inner;
            for (int64_t i = 0; i < s.inner; ++i) {
              ys[i] = convert<T>((load(xs[i]) - mean) * r * gain + shift);
            }
          }
        }
      });
    };
  });
}

Kernel batch_norm(KernelContext& ctx) {
  const AxisSplit s = split_axes(ctx.input(0).shape, 1, 2);  // [N, C, spatial]
  const double eps = ctx.attrs.get_float("eps");
  const bool training = ctx.attrs.get_bool("training");
  ctx.workspace_bytes = 2 * sizeof(double) * static_cast<size_t>(s.extent);
  return dispatch<kFloat>(ctx.input(0).dtype, [&](auto tag) -> Kernel {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    return [s, eps, training](const Args& args) {
      const T* x = args.in<T>(0);
      const T* scale = args.in<T>(1);
      const T* bias = args.in<T>(2);
      T* y = args.out<T>(0);
      T* mean_out = args.out<T>(1);
      T* var_out = args.out<T>(2);
      const int64_t channels = s.extent, spatial = s.inner;
      double* mean = args.scratch<double>();
      double* variance = mean + channels;
      if (training) {
        const int64_t grain = grain_for_runs(s.outer * spatial);
        parallel_for(channels, grain, [&](int64_t begin, int64_t end) {
          for (int64_t c = begin; c < end; ++c) {
            const Moments m = moments(x + c * spatial, s.outer, spatial, channels * spatial);
            mean[c] = m.mean;
            variance[c] = m.variance;
            mean_out[c] = convert<T>(m.mean);
            var_out[c] = convert<T>(m.variance);
          }
        });
      } else {
        const T* given_mean = args.in<T>(3);
        const T* given_var = args.in<T>(4);
        for (int64_t c = 0; c < channels; ++c) {
          mean[c] = double(load(given_mean[c]));
          variance[c] = double(load(given_var[c]));
        }
        std::memcpy(mean_out, given_mean, sizeof(T) * static_cast<size_t>(channels));
        std::memcpy(var_out, given_var, sizeof(T) * static_cast<size_t>(channels));
      }
      parallel_for(s.outer * channels, grain_for_runs(spatial), [&](int64_t begin, int64_t end) {
        for (int64_t run = begin; run < end; ++run) {  // run = sample * channels + channel
          const int64_t c = run % channels;
          const C centre = C(mean[c]), shift = load(bias[c]);
          const C gain = C(C(inverse_std(variance[c], eps)) * load(scale[c]));
          const T* xs = x + run * spatial;
          T* ys = y + run * spatial;
          for (int64_t i = 0; i < spatial; ++i) {
            ys[i] = convert<T>((load(xs[i]) - centre) * gain + shift);
          }
        }
      });
    };
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("layer_norm", kFloat, layer_norm);
MSKERNEL_CPU_KERNEL("group_norm", kFloat, group_norm);
MSKERNEL_CPU_KERNEL("batch_norm", kFloat, batch_norm);

}  // namespace mskernel_cpu
