// Scalar semantics shared by kernels, written to match NumPy's (the reference's) results:
// wrapping integer arithmetic without undefined behaviour, Python-style floor division and
// remainder, NaN-propagating maximum/minimum, integer and complex powers.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "mskernel_cpu/dtype.hpp"
#include "mskernel_cpu/error.hpp"

namespace mskernel_cpu {

// ---- wrapping integer arithmetic (two's complement, as NumPy) ---------------------------

template <class T> using unsigned_of = std::make_unsigned_t<T>;

template <class T> inline T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return T(unsigned_of<T>(a) + unsigned_of<T>(b));
  } else {
    return a + b;
  }
}

template <class T> inline T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return T(unsigned_of<T>(a) - unsigned_of<T>(b));
  } else {
    return a - b;
  }
}

template <class T> inline T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // Promote to at least unsigned int so small types do not multiply as signed int.
    using U = std::common_type_t<unsigned int, unsigned_of<T>>;
    return T(U(unsigned_of<T>(a)) * U(unsigned_of<T>(b)));
  } else {
    return a * b;
  }
}

template <class T> inline T wrap_neg(T a) {
  if constexpr (std::is_integral_v<T>) {
    return T(unsigned_of<T>(0) - unsigned_of<T>(a));
  } else {
    return -a;
  }
}

// ---- maximum / minimum: NaN propagates (np.maximum, np.minimum) -------------------------

template <class T> inline T nan_maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return (a >= b || std::isnan(a)) ? a : b;
  } else {
    return a >= b ? a : b;
  }
}

template <class T> inline T nan_minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return (a <= b || std::isnan(a)) ? a : b;
  } else {
    return a <= b ? a : b;
  }
}

// ---- floor division and remainder (Python semantics, as np.floor_divide/np.remainder) ---

[[noreturn]] inline void integer_division_by_zero(const char* op) {
  throw Error(ErrorKind::ZeroDivision, std::string(op) + ": integer division by zero");
}

template <class T> inline T int_floor_divide(T a, T b) {
  if (b == 0) integer_division_by_zero("floor_divide");
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrap_neg(a);  // INT_MIN // -1 wraps, as NumPy
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  } else {
    return a / b;
  }
}

template <class T> inline T int_remainder(T a, T b) {
  if (b == 0) integer_division_by_zero("remainder");
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else {
    return a % b;
  }
}

// NumPy's npy_divmod for floats: the floor quotient, and the remainder with the divisor's sign.
template <class T> inline T float_divmod(T a, T b, T* modulus) {
  T mod = std::fmod(a, b);
  if (b == 0) {
    *modulus = mod;
    return a / b;
  }
  T div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= T(1);
    }
  } else {
    mod = std::copysign(T(0), b);
  }
  T floordiv;
  if (div != 0) {
    floordiv = std::floor(div);
    if (div - floordiv > T(0.5)) floordiv += T(1);
  } else {
    floordiv = std::copysign(T(0), a / b);
  }
  *modulus = mod;
  return floordiv;
}

// ---- powers -----------------------------------------------------------------------------

// Integer power by squaring, wrapping; a negative exponent is an error (as NumPy).
template <class T> inline T int_power(T base, T exponent) {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) {
      throw Error(ErrorKind::Value, "pow: integers to negative integer powers are not allowed");
    }
  }
  T result = 1;
  auto e = unsigned_of<T>(exponent);
  while (e != 0) {
    if (e & 1u) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    e >>= 1;
  }
  return result;
}

// NumPy's complex power: exact for small integer exponents, cpow otherwise.
template <class R> inline std::complex<R> complex_power(std::complex<R> a, std::complex<R> b) {
  using C = std::complex<R>;
  if (b.real() == 0 && b.imag() == 0) return C(1, 0);
  if (a.real() == 0 && a.imag() == 0) {
    if (b.real() > 0 && b.imag() == 0) return C(0, 0);
    const R nan = std::numeric_limits<R>::quiet_NaN();
    return C(nan, nan);
  }
  if (b.imag() == 0 && b.real() == std::trunc(b.real()) && std::fabs(b.real()) < 100) {
    const int n = static_cast<int>(b.real());
    if (n == 1) return a;
    if (n == 2) return a * a;
    if (n == 3) return a * a * a;
    unsigned mask = 1;
    const unsigned magnitude = static_cast<unsigned>(n < 0 ? -n : n);
    C aa(1, 0), p = a;
    for (;;) {
      if (magnitude & mask) aa *= p;
      mask <<= 1;
      if (magnitude < mask || mask == 0) break;
      p *= p;
    }
    return n < 0 ? C(1, 0) / aa : aa;
  }
  return std::pow(a, b);
}

}  // namespace mskernel_cpu
