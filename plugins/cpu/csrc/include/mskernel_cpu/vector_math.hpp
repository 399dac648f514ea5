// Vector-friendly math: code written so g++ vectorises the loops that use it.
//
//   select, larger      branch-free choices that vectorise
//   lanes_t<C>          one AVX2 register of C (8 floats, 4 doubles) as a GCC vector, with
//                       load_lanes and lane_sum: accumulators that stay in registers, where
//                       arrays of partial results make g++ spill them to memory every step
//   exp_approx(x)       for a float or lanes of floats: about 1 ulp, only arithmetic and
//                       selects (no libm call)
//   exp_of(x)           exp_approx for float, std::exp for double, scalars or lanes
//
// exp_approx is Cephes' expf: exp(x) = 2^n * exp(r) with n = round(x / ln 2) and
// r = x - n ln 2 (ln 2 split in two for exactness), exp(r) by a degree-7 polynomial.  x is
// clamped to [-104, 89], where exp is 0 and +inf in float, and 2^n is applied as 2^a * 2^b
// with a + b = n, so the ends overflow and underflow (through subnormals) by themselves; NaN
// passes the clamp and propagates.  n comes from the bits of the rounding sum, never from a
// float-to-int conversion, so NaN is no undefined behaviour.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "mskernel_cpu/convert.hpp"

namespace mskernel_cpu {

// c ? a : b for float or double, by bit masks: a select on a float comparison that may trap
// blocks g++'s if-conversion (and so vectorisation) under the default -ftrapping-math.
template <class F>
inline F select(bool c, F a, F b) {
  using Bits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  Bits a_bits, b_bits;
  std::memcpy(&a_bits, &a, sizeof a);
  std::memcpy(&b_bits, &b, sizeof b);
  const Bits mask = Bits(0) - static_cast<Bits>(c);
  const Bits bits = (a_bits & mask) | (b_bits & ~mask);
  F value;
  std::memcpy(&value, &bits, sizeof bits);
  return value;
}

// The larger of a and b, ignoring a NaN in b; for floats this vectorises where std::max does
// not.
template <class V>
inline V larger(V a, V b) {
  if constexpr (std::is_floating_point_v<V>) {
    return select(b > a, b, a);
  } else {
    return std::max(a, b);
  }
}

// ---- GCC vectors ------------------------------------------------------------------------

template <class C> struct Lanes {
  typedef C type __attribute__((vector_size(32)));
  static constexpr int count = 32 / sizeof(C);
};
template <class C> using lanes_t = typename Lanes<C>::type;
template <class C> constexpr int lane_count = Lanes<C>::count;

// lane_count<C> consecutive elements of x, each widened by load and converted to C.
template <class C, class T>
inline lanes_t<C> load_lanes(const T* x) {
  lanes_t<C> v;
  for (int l = 0; l < lane_count<C>; ++l) v[l] = C(load(x[l]));
  return v;
}

template <class C>
inline C lane_sum(lanes_t<C> v) {
  C total = v[0];
  for (int l = 1; l < lane_count<C>; ++l) total += v[l];
  return total;
}

// The same bits seen as another type of the same size (scalars or lanes).
template <class To, class From>
inline To bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To out;
  std::memcpy(&out, &v, sizeof out);
  return out;
}

// c ? a : b lane by lane, for a comparison's mask of lanes.
inline lanes_t<float> select(lanes_t<int32_t> c, lanes_t<float> a, lanes_t<float> b) {
  return c ? a : b;
}

// Integer lanes matching float (int32) or lanes of float (lanes of int32), signed and not.
template <class F> struct IntegerOf {
  using signed_type = int32_t;
  using unsigned_type = uint32_t;
};
template <> struct IntegerOf<lanes_t<float>> {
  using signed_type = lanes_t<int32_t>;
  using unsigned_type = lanes_t<uint32_t>;
};

// 2^k for k in [-126, 127], from its exponent bits (others give garbage, not UB).
template <class F, class U>
inline F power_of_two(U k) {
  return bit_cast<F>((k + 127u) << 23);
}

// exp(x) for F float or lanes_t<float> (see the top of the file).
template <class F>
inline F exp_approx(F x) {
  using U = typename IntegerOf<F>::unsigned_type;
  using I = typename IntegerOf<F>::signed_type;
  const F lowest = F{} - 104.0f, highest = F{} + 89.0f;
  F c = select(x < lowest, lowest, x);
  c = select(c > highest, highest, c);
  const F shifter = F{} + 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const F rounded = c * 1.44269504088896341f + shifter;
  const F n = rounded - shifter;
  const U whole = bit_cast<U>(rounded) - bit_cast<U>(shifter);  // n as an integer
  const F r = (c - n * 0.693359375f) - n * -2.12194440e-4f;
  F p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  const U half = bit_cast<U>(bit_cast<I>(whole) >> 1);  // floor(n / 2)
  return p * power_of_two<F>(half) * power_of_two<F>(whole - half);
}

inline float exp_of(float x) { return exp_approx(x); }
inline double exp_of(double x) { return std::exp(x); }
inline lanes_t<float> exp_of(lanes_t<float> x) { return exp_approx(x); }
inline lanes_t<double> exp_of(lanes_t<double> x) {
  for (int l = 0; l < lane_count<double>; ++l) x[l] = std::exp(x[l]);
  return x;
}

}  // namespace mskernel_cpu
