// Binary arithmetic ops of mskernel/ops/elementwise.py with NumPy broadcasting, for every
// dtype each accepts.  Integer arithmetic wraps; integer division by zero raises
// ZeroDivisionError as the reference does.
#include <cmath>

#include "mskernel_cpu/elementwise.hpp"
#include "mskernel_cpu/scalar_math.hpp"

namespace mskernel_cpu {
namespace {

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

}  // namespace

MSKERNEL_CPU_REGISTRATIONS(register_arithmetic_ops) {
  add_binary<Add, kNumeric>("add");
  add_binary<Sub, kNumeric>("sub");
  add_binary<Mul, kNumeric>("mul");
  add_binary<Div, kInexact>("div");
  add_binary<FloorDivide, kReal>("floor_divide");
  add_binary<Remainder, kReal>("remainder");
  add_binary<Pow, kNumeric>("pow");
  add_binary<Maximum, kReal>("maximum");
  add_binary<Minimum, kReal>("minimum");
  add_binary<Atan2, kFloat>("atan2");
}

}  // namespace mskernel_cpu
