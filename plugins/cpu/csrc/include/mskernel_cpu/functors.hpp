// The scalar functors of the elementwise ops of mskernel/ops/elementwise.py, shared by their
// kernels (kernels/unary.cpp, arithmetic.cpp, comparison.cpp, select.cpp) and the
// fused-elementwise kernel (its interpreter and the C++ it generates at compile time, which
// includes this header from the installed package).  Each functor takes compute-type values
// (float for float16/bfloat16) and mirrors the NumPy reference exactly as the op's own kernel
// does (see elementwise.hpp for the cost tags and how kernels apply them).
#pragma once

#include <cmath>
#include <complex>
#include <optional>

#include "mskernel_cpu/convert.hpp"
#include "mskernel_cpu/scalar_math.hpp"

namespace mskernel_cpu {

// Cost tags: the relative price of one call, which sets the grain of multi-threading.
struct CheapOp { static constexpr int cost = 1; };
struct CostlyOp { static constexpr int cost = 8; };

namespace functors {

// ---- arithmetic -------------------------------------------------------------------------

struct Neg : CheapOp {
  template <class C> C operator()(C x) const { return wrap_neg(x); }
};

struct Abs : CheapOp {
  template <class C> auto operator()(C x) const {
    if constexpr (is_complex_v<C>) {
      return std::abs(x);
    } else if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else if constexpr (std::is_integral_v<C>) {
      return x < 0 ? wrap_neg(x) : x;
    } else {
      return std::fabs(x);
    }
  }
};

struct Sign : CheapOp {
  template <class C> C operator()(C x) const {
    if constexpr (is_complex_v<C>) {
      const auto magnitude = std::abs(x);
      return magnitude == 0 ? C(0) : x / magnitude;
    } else if constexpr (std::is_unsigned_v<C>) {
      return C(x > 0);
    } else if constexpr (std::is_integral_v<C>) {
      return C((x > 0) - (x < 0));
    } else {
      return x > 0 ? C(1) : (x < 0 ? C(-1) : (x == 0 ? C(0) : x));  // NaN stays NaN
    }
  }
};

struct Square : CheapOp {
  template <class C> C operator()(C x) const { return wrap_mul(x, x); }
};

struct Reciprocal : CheapOp {
  template <class C> C operator()(C x) const { return C(1) / x; }
};

struct Relu : CheapOp {
  template <class C> C operator()(C x) const { return nan_maximum(x, C(0)); }
};

// ---- powers, exponentials and logarithms ------------------------------------------------

#define MSKERNEL_CPU_FUNCTOR(Name, fn)                                   \
  struct Name : CostlyOp {                                               \
    template <class C> C operator()(C x) const { return std::fn(x); }   \
  };

MSKERNEL_CPU_FUNCTOR(Sqrt, sqrt)
MSKERNEL_CPU_FUNCTOR(Exp, exp)
MSKERNEL_CPU_FUNCTOR(Expm1, expm1)
MSKERNEL_CPU_FUNCTOR(Log, log)
MSKERNEL_CPU_FUNCTOR(Log1p, log1p)
MSKERNEL_CPU_FUNCTOR(Log2, log2)
MSKERNEL_CPU_FUNCTOR(Log10, log10)
MSKERNEL_CPU_FUNCTOR(Sin, sin)
MSKERNEL_CPU_FUNCTOR(Cos, cos)
MSKERNEL_CPU_FUNCTOR(Tan, tan)
MSKERNEL_CPU_FUNCTOR(Asin, asin)
MSKERNEL_CPU_FUNCTOR(Acos, acos)
MSKERNEL_CPU_FUNCTOR(Atan, atan)
MSKERNEL_CPU_FUNCTOR(Sinh, sinh)
MSKERNEL_CPU_FUNCTOR(Cosh, cosh)
MSKERNEL_CPU_FUNCTOR(Tanh, tanh)
MSKERNEL_CPU_FUNCTOR(Asinh, asinh)
MSKERNEL_CPU_FUNCTOR(Acosh, acosh)
MSKERNEL_CPU_FUNCTOR(Atanh, atanh)
MSKERNEL_CPU_FUNCTOR(Floor, floor)
MSKERNEL_CPU_FUNCTOR(Ceil, ceil)
MSKERNEL_CPU_FUNCTOR(Trunc, trunc)
MSKERNEL_CPU_FUNCTOR(Round, nearbyint)  // half to even in the default rounding mode
#undef MSKERNEL_CPU_FUNCTOR

struct Rsqrt : CostlyOp {
  template <class C> C operator()(C x) const { return C(1) / std::sqrt(x); }
};

struct Erf : CostlyOp {
  template <class C> C operator()(C x) const { return C(std::erf(double(x))); }
};

struct Erfc : CostlyOp {
  template <class C> C operator()(C x) const { return C(std::erfc(double(x))); }
};

struct Lgamma : CostlyOp {
  template <class C> C operator()(C x) const {
    int sign;
    return C(lgamma_r(double(x), &sign));  // lgamma() writes a global; lgamma_r does not
  }
};

template <class C> inline C sigmoid(C x) {
  const C e = std::exp(-std::fabs(x));
  return x >= 0 ? C(1) / (C(1) + e) : e / (C(1) + e);
}

struct Sigmoid : CostlyOp {
  template <class C> C operator()(C x) const { return sigmoid(x); }
};

struct Silu : CostlyOp {
  template <class C> C operator()(C x) const { return x * sigmoid(x); }
};

// np.logaddexp(0, x)
struct Softplus : CostlyOp {
  template <class C> C operator()(C x) const {
    if (x == 0) return C(M_LN2);
    const C difference = -x;
    if (difference > 0) return std::log1p(std::exp(x));
    if (difference <= 0) return x + std::log1p(std::exp(difference));
    return difference;  // NaN
  }
};

// In float (float32 and the half types), 0.5 x erfc(-x / sqrt 2): erfc keeps its relative
// accuracy where 1 + erf(x / sqrt 2) would cancel, so float needs no detour through double
// (within a few ulp of the reference's float64 evaluation); double as the reference.
struct GeluErf : CostlyOp {
  template <class C> C operator()(C x) const {
    if constexpr (std::is_same_v<C, float>) {
      return 0.5f * x * std::erfc(x * -float(M_SQRT1_2));
    } else {
      return C(0.5) * x * (C(1) + C(std::erf(double(x / C(M_SQRT2)))));
    }
  }
};

struct GeluTanh : CostlyOp {
  template <class C> C operator()(C x) const {
    const C c = C(0.7978845608028654);  // sqrt(2 / pi)
    return C(0.5) * x * (C(1) + std::tanh(c * (x + C(0.044715) * x * x * x)));
  }
};

// ---- predicates -------------------------------------------------------------------------

struct IsNan : CheapOp {
  template <class C> bool operator()(C x) const {
    if constexpr (is_complex_v<C>) {
      return std::isnan(x.real()) || std::isnan(x.imag());
    } else {
      return std::isnan(x);
    }
  }
};

struct IsInf : CheapOp {
  template <class C> bool operator()(C x) const {
    if constexpr (is_complex_v<C>) {
      return std::isinf(x.real()) || std::isinf(x.imag());
    } else {
      return std::isinf(x);
    }
  }
};

struct IsFinite : CheapOp {
  template <class C> bool operator()(C x) const {
    if constexpr (is_complex_v<C>) {
      return std::isfinite(x.real()) && std::isfinite(x.imag());
    } else {
      return std::isfinite(x);
    }
  }
};

// ---- logical and bitwise ----------------------------------------------------------------

struct LogicalNot : CheapOp {
  bool operator()(bool x) const { return !x; }
};

struct BitwiseNot : CheapOp {
  template <class C> C operator()(C x) const {
    if constexpr (std::is_same_v<C, bool>) {
      return !x;
    } else {
      return C(~x);
    }
  }
};

// ---- complex parts ----------------------------------------------------------------------

struct Real : CheapOp {
  template <class C> auto operator()(C x) const {
    if constexpr (is_complex_v<C>) {
      return x.real();
    } else {
      return x;
    }
  }
};

struct Imag : CheapOp {
  template <class C> auto operator()(C x) const {
    if constexpr (is_complex_v<C>) {
      return x.imag();
    } else {
      return C(0);
    }
  }
};

struct Conj : CheapOp {
  template <class C> C operator()(C x) const {
    if constexpr (is_complex_v<C>) {
      return std::conj(x);
    } else {
      return x;
    }
  }
};

// ---- arithmetic -------------------------------------------------------------------------

struct Add : CheapOp {
  template <class C> C operator()(C a, C b) const { return wrap_add(a, b); }
};

struct Sub : CheapOp {
  template <class C> C operator()(C a, C b) const { return wrap_sub(a, b); }
};

struct Mul : CheapOp {
  template <class C> C operator()(C a, C b) const { return wrap_mul(a, b); }
};

struct Div : CheapOp {
  template <class C> C operator()(C a, C b) const { return a / b; }
};

struct FloorDivide : CheapOp {
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return int_floor_divide(a, b);
    } else {
      C modulus;
      return float_divmod(a, b, &modulus);
    }
  }
};

struct Remainder : CheapOp {
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return int_remainder(a, b);
    } else {
      C modulus;
      float_divmod(a, b, &modulus);
      return modulus;
    }
  }
};

struct Pow : CostlyOp {
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      return int_power(a, b);
    } else if constexpr (is_complex_v<C>) {
      return complex_power(a, b);
    } else {
      return std::pow(a, b);
    }
  }
};

struct Maximum : CheapOp {
  template <class C> C operator()(C a, C b) const { return nan_maximum(a, b); }
};

struct Minimum : CheapOp {
  template <class C> C operator()(C a, C b) const { return nan_minimum(a, b); }
};

struct Atan2 : CostlyOp {
  template <class C> C operator()(C a, C b) const { return std::atan2(a, b); }
};

// ---- comparison -------------------------------------------------------------------------

struct Equal : CheapOp {
  template <class C> bool operator()(C a, C b) const { return a == b; }
};

struct NotEqual : CheapOp {
  template <class C> bool operator()(C a, C b) const { return a != b; }
};

struct Less : CheapOp {
  template <class C> bool operator()(C a, C b) const { return a < b; }
};

struct LessEqual : CheapOp {
  template <class C> bool operator()(C a, C b) const { return a <= b; }
};

struct Greater : CheapOp {
  template <class C> bool operator()(C a, C b) const { return a > b; }
};

struct GreaterEqual : CheapOp {
  template <class C> bool operator()(C a, C b) const { return a >= b; }
};

// ---- logical and bitwise ----------------------------------------------------------------

struct LogicalAnd : CheapOp {
  bool operator()(bool a, bool b) const { return a && b; }
};

struct LogicalOr : CheapOp {
  bool operator()(bool a, bool b) const { return a || b; }
};

struct LogicalXor : CheapOp {
  bool operator()(bool a, bool b) const { return a != b; }
};

struct BitwiseAnd : CheapOp {
  template <class C> C operator()(C a, C b) const { return C(a & b); }
};

struct BitwiseOr : CheapOp {
  template <class C> C operator()(C a, C b) const { return C(a | b); }
};

struct BitwiseXor : CheapOp {
  template <class C> C operator()(C a, C b) const { return C(a ^ b); }
};

// NumPy's npy_lshift/npy_rshift: a shift by the bit width or more (or by a negative amount,
// seen as a huge unsigned one) gives 0, or -1 for a right shift of a negative number.
struct LeftShift : CheapOp {
  template <class C> C operator()(C a, C b) const {
    if (static_cast<uint64_t>(b) >= sizeof(C) * 8) return C(0);
    return C(unsigned_of<C>(a) << b);
  }
};

struct RightShift : CheapOp {
  template <class C> C operator()(C a, C b) const {
    if (static_cast<uint64_t>(b) >= sizeof(C) * 8) {
      if constexpr (std::is_signed_v<C>) {
        return a < 0 ? C(-1) : C(0);
      } else {
        return C(0);
      }
    }
    return C(a >> b);
  }
};

// ---- selection and conversion ---------------------------------------------------------

struct Select : CheapOp {
  template <class T> T operator()(bool condition, T x, T y) const { return condition ? x : y; }
};

// np.maximum(x, min) then np.minimum(.., max); the bounds are converted to x's type first.
template <class C> struct Clip : CheapOp {
  Clip(std::optional<double> low_bound, std::optional<double> high_bound)
      : has_low(low_bound.has_value()), has_high(high_bound.has_value()),
        low(convert<C>(low_bound.value_or(0.0))), high(convert<C>(high_bound.value_or(0.0))) {}
  bool has_low, has_high;
  C low, high;
  C operator()(C x) const {
    if (has_low) x = nan_maximum(x, low);
    if (has_high) x = nan_minimum(x, high);
    return x;
  }
};

struct Identity : CheapOp {
  template <class C> C operator()(C x) const { return x; }
};

}  // namespace functors
}  // namespace mskernel_cpu
