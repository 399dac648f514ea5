// Turning random words into numbers, as the reference (mskernel/ops/random.py) defines it: the
// exact unit values of words, and branch-free logarithm and cosine for Box-Muller and Gumbel
// noise, written so g++ vectorises loops that call them (selects on bits instead of branches,
// integer tricks instead of conversions AVX2 lacks).  They agree with the reference's float64
// log and cos to a few units in the last place of the result's type:
//
//   float    log_open32(w), cos_two_pi_open32(w)   for u = (w + 0.5) * 2**-32, 32-bit words;
//            Cephes' single-precision polynomials.  The argument is reduced exactly in integers
//            (1 - u near one, quarter turns for the cosine), so float32 keeps full precision.
//   double   log_positive(x), cos_of(theta)   for float64 results (64-bit words): fdlibm's
//            polynomials, theta in [0, 2 pi] reduced by pi/2 in three parts (Cody-Waite).
#pragma once

#include <cstdint>
#include <cstring>

namespace mskernel_cpu {

template <class To, class From>
inline To bits_as(From x) {
  static_assert(sizeof(To) == sizeof(From));
  To y;
  std::memcpy(&y, &x, sizeof y);
  return y;
}

// Selections on the bits: g++ does not if-convert (so does not vectorise) a choice between
// computed floating-point values under its default -ftrapping-math.
inline float choose(bool condition, float a, float b) {
  const uint32_t mask = 0u - uint32_t(condition);
  return bits_as<float>((bits_as<uint32_t>(a) & mask) | (bits_as<uint32_t>(b) & ~mask));
}
inline double choose(bool condition, double a, double b) {
  const uint64_t mask = 0ull - uint64_t(condition);
  return bits_as<double>((bits_as<uint64_t>(a) & mask) | (bits_as<uint64_t>(b) & ~mask));
}
inline float negate_if(bool condition, float x) {
  return bits_as<float>(bits_as<uint32_t>(x) ^ (uint32_t(condition) << 31));
}
inline double negate_if(bool condition, double x) {
  return bits_as<double>(bits_as<uint64_t>(x) ^ (uint64_t(condition) << 63));
}

// ---- unit values of words ----------------------------------------------------------------

// (w >> 12) * 2**-52 in [0, 1), exact, for a 64-bit word: the top 52 bits as the mantissa of
// [1, 2), minus one.
inline double unit64(uint64_t w) {
  return bits_as<double>((w >> 12) | 0x3FF0000000000000ull) - 1.0;
}

// open(w) in (0, 1), exact: (w + 0.5) * 2**-32 for a 32-bit word, ((w >> 12) + 0.5) * 2**-52
// for a 64-bit word.
inline double open_unit32(uint32_t w) { return (double(w) + 0.5) * 0x1p-32; }
inline double open_unit64(uint64_t w) { return unit64(w) + 0x1p-53; }

// ---- float, from 32-bit words -----------------------------------------------------------

// ln(u) for u = (w + 0.5) * 2**-32.
inline float log_open32(uint32_t w) {
  // From ceil(sqrt(1/2) * 2**32) on, u - 1 = -(~w + 0.5) * 2**-32 is taken from the word.
  constexpr uint32_t kNearOne = 3037000500u;
  const float x = (float(w) + 0.5f) * 0x1p-32f;
  const uint32_t bits = bits_as<uint32_t>(x);
  const uint32_t mantissa = (bits & 0x7FFFFFu) | 0x3F800000u;  // of [1, 2)
  const uint32_t halve = mantissa > 0x3FB504F3u;                // to [sqrt(1/2), sqrt(2))
  const float from_value = bits_as<float>(mantissa - (halve << 23)) - 1.0f;
  const float from_word = (float(int32_t(~w)) + 0.5f) * -0x1p-32f;
  const bool near_one = w >= kNearOne;
  const float f = choose(near_one, from_word, from_value);
  const float exponent = choose(near_one, 0.0f, float(int32_t((bits >> 23) + halve) - 127));
  const float z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z - 2.12194440e-4f * exponent - 0.5f * z;
  return f + y + 0.693359375f * exponent;
}

// cos(2 pi u) for u = (w + 0.5) * 2**-32.
inline float cos_two_pi_open32(uint32_t w) {
  const uint32_t quarter = (w + 0x20000000u) >> 30;            // nearest quarter turn, mod 4
  const int32_t offset = int32_t(w - (quarter << 30));          // [-2**29, 2**29) of 2**32
  const float r = (float(offset) + 0.5f) * 1.46291807926716e-9f;  // radians, |r| <= pi/4
  const float z = r * r;
  const float sine =
      ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * r + r;
  const float cosine =
      ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) * z * z -
      0.5f * z + 1.0f;
  // cos(q pi/2 + r): cos r, -sin r, -cos r, sin r for q = 0, 1, 2, 3.
  return negate_if((quarter + 1u) & 2u, choose(quarter & 1u, sine, cosine));
}

// ---- double, from 64-bit words ----------------------------------------------------------

// ln(x) for a positive normal x.
inline double log_positive(double x) {
  const uint64_t bits = bits_as<uint64_t>(x);
  const uint64_t mantissa = (bits & 0xFFFFFFFFFFFFFull) | 0x3FF0000000000000ull;  // of [1, 2)
  const uint64_t halve = mantissa > 0x3FF6A09E667F3BCDull;  // to [sqrt(1/2), sqrt(2))
  const double f = bits_as<double>(mantissa - (halve << 52)) - 1.0;  // exact
  // The exponent as a double without an int64 conversion (AVX2 has none): 2**52 + e - 2**52.
  const double k = bits_as<double>(((bits >> 52) + halve) | 0x4330000000000000ull) -
                   (0x1p52 + 1023.0);
  const double s = f / (2.0 + f);
  const double z = s * s, w = z * z;
  const double t1 = w * (3.999999999940941908e-01 +
                         w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
  const double t2 = z * (6.666666666666735130e-01 +
                         w * (2.857142874366239149e-01 +
                              w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
  const double hfsq = 0.5 * f * f;
  return k * 6.93147180369123816490e-01 -
         ((hfsq - (s * (hfsq + (t2 + t1)) + k * 1.90821492927058770002e-10)) - f);
}

// cos(theta) for theta in [0, 2 pi].
inline double cos_of(double theta) {
  constexpr double kShifter = 0x1.8p52;  // adding it rounds to an integer in the low bits
  const double shifted = theta * 6.36619772367581382433e-01 + kShifter;
  const uint32_t quarter = uint32_t(bits_as<uint64_t>(shifted)) & 3u;
  const double q = shifted - kShifter;
  const double r = ((theta - q * 1.57079632673412561417e+00) - q * 6.07710050630396597660e-11) -
                   q * 2.02226624879595063154e-21;
  const double z = r * r, w = z * z;
  const double sine =
      r + z * r *
              (-1.66666666666666324348e-01 +
               z * (8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04 +
                                                      z * 2.75573137070700676789e-06) +
                    z * w * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)));
  const double c = z * (4.16666666666666019037e-02 +
                        z * (-1.38888888888741095749e-03 + z * 2.48015872894767294178e-05)) +
                   w * w * (-2.75573143513906633035e-07 +
                            z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11));
  const double hz = 0.5 * z, one_minus = 1.0 - hz;
  const double cosine = one_minus + (((1.0 - one_minus) - hz) + z * c);
  return negate_if((quarter + 1u) & 2u, choose(quarter & 1u, sine, cosine));
}

}  // namespace mskernel_cpu
