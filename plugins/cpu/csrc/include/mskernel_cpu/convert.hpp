// Value conversions with NumPy's astype semantics, shared by every kernel:
//
//   load(x)          storage -> compute type (f16_t/bf16_t -> float, others unchanged)
//   convert<To>(x)   any supported type -> To, as NumPy's astype (and IR `cast`) define it
//
// Rules: to bool is `x != 0` (either part for complex; NaN is true); complex to real drops the
// imaginary part; float to integer truncates toward zero, and values out of range (and NaN)
// give what NumPy gives on x86-64 (the "integer indefinite" value, then truncation) without
// undefined behaviour; integer to narrower integer wraps; to bfloat16 rounds to nearest even
// through float32 (as the reference does); to float16 rounds once from the source.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>

#include "mskernel_cpu/dtype.hpp"

namespace mskernel_cpu {

// ---- half types -------------------------------------------------------------------------

inline float to_float(f16_t h) {
  _Float16 v;
  std::memcpy(&v, &h.bits, 2);
  return static_cast<float>(v);
}

inline float to_float(bf16_t h) {
  uint32_t bits = uint32_t(h.bits) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline f16_t to_f16(float f) {
  _Float16 v = static_cast<_Float16>(f);
  f16_t h;
  std::memcpy(&h.bits, &v, 2);
  return h;
}

inline f16_t to_f16(double d) {
  _Float16 v = static_cast<_Float16>(d);
  f16_t h;
  std::memcpy(&h.bits, &v, 2);
  return h;
}

// Round to nearest even; NaN stays a (quiet) NaN of the same sign.
inline bf16_t to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return bf16_t{uint16_t((bits >> 16) | 0x0040u)};
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return bf16_t{uint16_t(bits >> 16)};
}

// ---- load: storage -> compute -----------------------------------------------------------

template <class T>
inline compute_t<T> load(T x) {
  if constexpr (is_half_v<T>) {
    return to_float(x);
  } else {
    return x;
  }
}

// ---- float -> integer without undefined behaviour ---------------------------------------

// Truncate toward zero to int32 (x86 cvttsd2si): out of range or NaN gives INT32_MIN.
inline int32_t truncate_i32(double v) {
  if (!(v > -2147483649.0 && v < 2147483648.0)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

// Truncate toward zero to int64: out of range or NaN gives INT64_MIN.
inline int64_t truncate_i64(double v) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) {
    return std::numeric_limits<int64_t>::min();
  }
  return static_cast<int64_t>(v);
}

template <class To>
inline To float_to_int(double v) {
  if constexpr (std::is_same_v<To, uint64_t>) {
    constexpr double two63 = 9223372036854775808.0;
    if (v >= two63) return uint64_t(truncate_i64(v - two63)) ^ (uint64_t(1) << 63);
    return uint64_t(truncate_i64(v));
  } else if constexpr (sizeof(To) == 8 || std::is_same_v<To, uint32_t>) {
    return To(uint64_t(truncate_i64(v)));
  } else {
    return To(uint32_t(truncate_i32(v)));  // int8..int32, uint8, uint16: via int32
  }
}

// ---- convert: any -> any -----------------------------------------------------------------

template <class To, class From>
inline To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (is_half_v<From>) {
    return convert<To>(to_float(x));
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_complex_v<From>) {
      return x.real() != 0 || x.imag() != 0;
    } else {
      return x != From(0);
    }
  } else if constexpr (is_complex_v<To>) {
    using R = typename To::value_type;
    if constexpr (is_complex_v<From>) {
      return To(R(x.real()), R(x.imag()));
    } else {
      return To(convert<R>(x), R(0));
    }
  } else if constexpr (is_complex_v<From>) {
    return convert<To>(x.real());
  } else if constexpr (std::is_same_v<To, bf16_t>) {
    return to_bf16(static_cast<float>(x));
  } else if constexpr (std::is_same_v<To, f16_t>) {
    if constexpr (std::is_same_v<From, float>) {
      return to_f16(x);
    } else {
      return to_f16(static_cast<double>(x));
    }
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return float_to_int<To>(static_cast<double>(x));
  } else {
    return static_cast<To>(x);  // integer/bool -> integer (wraps), anything real -> float
  }
}

}  // namespace mskernel_cpu
