// Float draws of the random ops other than random_normal (mskernel/ops/random.py):
//   random_uniform            lo + unit(w) * (hi - lo), rounded to the dtype and capped below hi
//   random_truncated_normal   inverse CDF: ndtri(F(a) + open(w) * (F(b) - F(a))) clipped to
//                             [a, b], drawn on [-b, -a] and negated when a + b > 0; ndtri is
//                             Wichura's AS 241 with the reference's coefficients
//   random_categorical        Gumbel-max: the first argmax over the last axis of
//                             logits + -ln(-ln open(w)), in double (the logarithms of
//                             random_math.hpp, vectorised, built for x86-64-v3 and -v4)
// Words are 64 bits for float64 and 32 bits otherwise; unit and open values are exact doubles.
#include <algorithm>
#include <cmath>
#include <limits>

#include "mskernel_cpu/kernel.hpp"
#include "mskernel_cpu/random_math.hpp"
#include "mskernel_cpu/threefry.hpp"

namespace mskernel_cpu {
namespace {

template <class T> constexpr bool kWideWords = std::is_same_v<T, double>;

template <class T> constexpr int kMantissaBits = 23;
template <> constexpr int kMantissaBits<double> = 52;
template <> constexpr int kMantissaBits<f16_t> = 10;
template <> constexpr int kMantissaBits<bf16_t> = 7;

// unit(w) in [0, 1) with T's mantissa bits, for word j of a block.
template <class T>
inline double unit_value(const uint32_t* y0, const uint32_t* y1, int64_t j) {
  if constexpr (kWideWords<T>) {
    return unit64(wide_word(y0[j], y1[j]));
  } else {
    return double(y0[j] >> (32 - kMantissaBits<T>)) * (1.0 / double(1u << kMantissaBits<T>));
  }
}

// open(w) in (0, 1), for word j of a block.
template <class T>
inline double open_value(const uint32_t* y0, const uint32_t* y1, int64_t j) {
  if constexpr (kWideWords<T>) {
    return open_unit64(wide_word(y0[j], y1[j]));
  } else {
    return open_unit32(y0[j]);
  }
}

// ---- uniform ------------------------------------------------------------------------------

// The largest value of T below x (np.nextafter toward -inf; on the bits for the half types).
template <class T>
T largest_below(T x) {
  if constexpr (is_half_v<T>) {
    const float v = load(x);
    return T{uint16_t(v > 0 ? x.bits - 1 : v == 0 ? 0x8001 : x.bits + 1)};
  } else {
    return std::nextafter(x, -std::numeric_limits<T>::infinity());
  }
}

template <class T>
Kernel uniform_of(int64_t n, double minval, double maxval) {
  const double lo = load(convert<T>(minval)), hi_value = load(convert<T>(maxval));
  const double span = hi_value - lo;
  const compute_t<T> cap = load(largest_below(convert<T>(maxval)));
  return [=](const Args& args) {
    T* out = args.out<T>(0);
    for_each_draw_block(args.in<uint32_t>(0), n, kCheapGrainBlocks,
                        [&](int64_t begin, int64_t count, const uint32_t* y0, const uint32_t* y1) {
                          T* o = out + begin;
                          for (int64_t j = 0; j < count; ++j) {
                            const compute_t<T> v =
                                load(convert<T>(lo + unit_value<T>(y0, y1, j) * span));
                            o[j] = convert<T>(choose(v > cap, cap, v));
                          }
                        });
  };
}

Kernel random_uniform(KernelContext& ctx) {
  const int64_t n = ctx.output(0).numel();
  const double minval = ctx.attrs.get_float("minval"), maxval = ctx.attrs.get_float("maxval");
  return dispatch<kFloat>(ctx.output(0).dtype, [&](auto tag) -> Kernel {
    return uniform_of<typename decltype(tag)::type>(n, minval, maxval);
  });
}

// ---- truncated normal ---------------------------------------------------------------------

struct Rational {
  double num[8], den[8];  // coefficients, constant term first
  double operator()(double x) const {
    double p = num[7], q = den[7];
    for (int i = 6; i >= 0; --i) {
      p = p * x + num[i];
      q = q * x + den[i];
    }
    return p / q;
  }
};

constexpr Rational kNdtriCentral = {
    {3.3871328727963666080e0, 1.3314166789178437745e2, 1.9715909503065514427e3,
     1.3731693765509461125e4, 4.5921953931549871457e4, 6.7265770927008700853e4,
     3.3430575583588128105e4, 2.5090809287301226727e3},
    {1.0, 4.2313330701600911252e1, 6.8718700749205790830e2, 5.3941960214247511077e3,
     2.1213794301586595867e4, 3.9307895800092710610e4, 2.8729085735721942674e4,
     5.2264952788528545610e3}};
constexpr Rational kNdtriNear = {
    {1.42343711074968357734e0, 4.63033784615654529590e0, 5.76949722146069140550e0,
     3.64784832476320460504e0, 1.27045825245236838258e0, 2.41780725177450611770e-1,
     2.27238449892691845833e-2, 7.74545014278341407640e-4},
    {1.0, 2.05319162663775882187e0, 1.67638483018380384940e0, 6.89767334985100004550e-1,
     1.48103976427480074590e-1, 1.51986665636164571966e-2, 5.47593808499534494600e-4,
     1.05075007164441684324e-9}};
constexpr Rational kNdtriFar = {
    {6.65790464350110377720e0, 5.46378491116411436990e0, 1.78482653991729133580e0,
     2.96560571828504891230e-1, 2.65321895265761230930e-2, 1.24266094738807843860e-3,
     2.71155556874348757815e-5, 2.01033439929228813265e-7},
    {1.0, 5.99832206555887937690e-1, 1.36929880922735805310e-1, 1.48753612908506148525e-2,
     7.86869131145613259100e-4, 1.84631831751005468180e-5, 1.42151175831644588870e-7,
     2.04426310338993978564e-15}};

// The inverse of the standard normal CDF on [0, 1] (-inf at 0, inf at 1).
double ndtri(double p) {
  const double q = p - 0.5;
  if (std::fabs(q) <= 0.425) return q * kNdtriCentral(0.180625 - q * q);
  const double r = std::sqrt(-std::log(std::min(p, 1.0 - p)));
  const double tail = std::isinf(r) ? r : r <= 5.0 ? kNdtriNear(r - 1.6) : kNdtriFar(r - 5.0);
  return std::copysign(tail, q);
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

template <class T>
Kernel truncated_normal_of(int64_t n, double lower, double upper, double mean, double std_dev) {
  const bool flip = lower + upper > 0;
  const double a = flip ? -upper : lower, b = flip ? -lower : upper;
  const double fa = normal_cdf(a), fb = normal_cdf(b);
  const double scale = flip ? -std_dev : std_dev;
  return [=](const Args& args) {
    T* out = args.out<T>(0);
    for_each_draw_block(args.in<uint32_t>(0), n, 2,
                        [&](int64_t begin, int64_t count, const uint32_t* y0, const uint32_t* y1) {
                          for (int64_t j = 0; j < count; ++j) {
                            const double p = fa + open_value<T>(y0, y1, j) * (fb - fa);
                            const double z = std::min(std::max(ndtri(p), a), b);
                            out[begin + j] = convert<T>(mean + scale * z);
                          }
                        });
  };
}

Kernel random_truncated_normal(KernelContext& ctx) {
  const int64_t n = ctx.output(0).numel();
  const double lower = ctx.attrs.get_float("lower"), upper = ctx.attrs.get_float("upper");
  const double mean = ctx.attrs.get_float("mean"), std_dev = ctx.attrs.get_float("std");
  return dispatch<kFloat>(ctx.output(0).dtype, [&](auto tag) -> Kernel {
    return truncated_normal_of<typename decltype(tag)::type>(n, lower, upper, mean, std_dev);
  });
}

// ---- categorical --------------------------------------------------------------------------

// Gumbel noise -ln(-ln open(w)) of count words at 32 or 64 bits (both logarithms vectorised).
MSKERNEL_CPU_CLONE_X86_64_V4
void gumbels32(const uint32_t* __restrict y0, int64_t count, double* __restrict noise) {
  for (int64_t j = 0; j < count; ++j) {
    noise[j] = -log_positive(-log_positive(open_unit32(y0[j])));
  }
}

MSKERNEL_CPU_CLONE_X86_64_V4
void gumbels64(const uint32_t* __restrict y0, const uint32_t* __restrict y1, int64_t count,
               double* __restrict noise) {
  for (int64_t j = 0; j < count; ++j) {
    noise[j] = -log_positive(-log_positive(open_unit64(wide_word(y0[j], y1[j]))));
  }
}

// np.argmax semantics: the first maximum, or the first NaN.
struct FirstMax {
  double value = -std::numeric_limits<double>::infinity();
  int64_t index = -1;
  void offer(double v, int64_t i) {
    if (index < 0 || (!std::isnan(value) && (v > value || std::isnan(v)))) {
      value = v;
      index = i;
    }
  }
};

template <class T>
Kernel categorical_of(int64_t rows, int64_t categories) {
  const int64_t words = rows * categories;
  return [=](const Args& args) {
    const ThreefryKey k(args.in<uint32_t>(0));
    const T* logits = args.in<T>(1);
    int64_t* out = args.out<int64_t>(0);
    const int64_t grain = std::max<int64_t>(1, 8192 / categories);
    parallel_for(rows, grain, [&](int64_t first_row, int64_t last_row) {
      alignas(64) uint32_t y0[kDrawBlock], y1[kDrawBlock];
      alignas(64) double noise[kDrawBlock];
      for (int64_t row = first_row; row < last_row; ++row) {
        FirstMax best;
        for (int64_t start = 0; start < categories; start += kDrawBlock) {
          const int64_t count = std::min(kDrawBlock, categories - start);
          const int64_t first_word = row * categories + start;
          threefry_blocks(k, uint32_t(words), uint32_t(first_word), 1, count, y0, y1);
          if constexpr (kWideWords<T>) {
            gumbels64(y0, y1, count, noise);
          } else {
            gumbels32(y0, count, noise);
          }
          for (int64_t j = 0; j < count; ++j) {
            best.offer(double(load(logits[first_word + j])) + noise[j], start + j);
          }
        }
        out[row] = best.index;
      }
    });
  };
}

Kernel random_categorical(KernelContext& ctx) {
  const int64_t categories = ctx.input(1).shape.back();  // > 0 (the op's rule says)
  const int64_t rows = ctx.output(0).numel();
  return dispatch<kFloat>(ctx.input(1).dtype, [&](auto tag) -> Kernel {
    return categorical_of<typename decltype(tag)::type>(rows, categories);
  });
}

}  // namespace

MSKERNEL_CPU_KERNEL("random_uniform", kFloat | bit(DType::UInt32), random_uniform);
MSKERNEL_CPU_KERNEL("random_truncated_normal", kFloat | bit(DType::UInt32),
                    random_truncated_normal);
MSKERNEL_CPU_KERNEL("random_categorical", kFloat | bit(DType::UInt32) | bit(DType::Int64),
                    random_categorical);

}  // namespace mskernel_cpu
