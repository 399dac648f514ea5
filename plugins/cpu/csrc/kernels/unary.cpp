// Unary elementwise ops of mskernel/ops/elementwise.py, for every dtype each accepts.
// Functors receive compute-type values (float for float16/bfloat16) and mirror the NumPy
// reference: erf, erfc and lgamma evaluate in double as the reference does; sigmoid and
// softplus use the same overflow-free forms.
#include <cmath>

#include "mskernel_cpu/elementwise.hpp"
#include "mskernel_cpu/scalar_math.hpp"

namespace mskernel_cpu {
namespace {

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

#define MSKERNEL_CPU_STD_FUNCTOR(Name, fn)                               \
  struct Name : CostlyOp {                                               \
    template <class C> C operator()(C x) const { return std::fn(x); }   \
  };

MSKERNEL_CPU_STD_FUNCTOR(Sqrt, sqrt)
MSKERNEL_CPU_STD_FUNCTOR(Exp, exp)
MSKERNEL_CPU_STD_FUNCTOR(Expm1, expm1)
MSKERNEL_CPU_STD_FUNCTOR(Log, log)
MSKERNEL_CPU_STD_FUNCTOR(Log1p, log1p)
MSKERNEL_CPU_STD_FUNCTOR(Log2, log2)
MSKERNEL_CPU_STD_FUNCTOR(Log10, log10)
MSKERNEL_CPU_STD_FUNCTOR(Sin, sin)
MSKERNEL_CPU_STD_FUNCTOR(Cos, cos)
MSKERNEL_CPU_STD_FUNCTOR(Tan, tan)
MSKERNEL_CPU_STD_FUNCTOR(Asin, asin)
MSKERNEL_CPU_STD_FUNCTOR(Acos, acos)
MSKERNEL_CPU_STD_FUNCTOR(Atan, atan)
MSKERNEL_CPU_STD_FUNCTOR(Sinh, sinh)
MSKERNEL_CPU_STD_FUNCTOR(Cosh, cosh)
MSKERNEL_CPU_STD_FUNCTOR(Tanh, tanh)
MSKERNEL_CPU_STD_FUNCTOR(Asinh, asinh)
MSKERNEL_CPU_STD_FUNCTOR(Acosh, acosh)
MSKERNEL_CPU_STD_FUNCTOR(Atanh, atanh)
MSKERNEL_CPU_STD_FUNCTOR(Floor, floor)
MSKERNEL_CPU_STD_FUNCTOR(Ceil, ceil)
MSKERNEL_CPU_STD_FUNCTOR(Trunc, trunc)
MSKERNEL_CPU_STD_FUNCTOR(Round, nearbyint)  // half to even in the default rounding mode
#undef MSKERNEL_CPU_STD_FUNCTOR

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

struct GeluErf : CostlyOp {
  template <class C> C operator()(C x) const {
    return C(0.5) * x * (C(1) + C(std::erf(double(x / C(M_SQRT2)))));
  }
};

struct GeluTanh : CostlyOp {
  template <class C> C operator()(C x) const {
    const C c = C(0.7978845608028654);  // sqrt(2 / pi)
    return C(0.5) * x * (C(1) + std::tanh(c * (x + C(0.044715) * x * x * x)));
  }
};

Kernel gelu(KernelContext& ctx) {
  const std::string& approximate = ctx.attrs.get_str("approximate");
  if (approximate == "none") return unary_kernel<GeluErf, kFloat>(ctx);
  if (approximate == "tanh") return unary_kernel<GeluTanh, kFloat>(ctx);
  throw Error(ErrorKind::Value, "gelu: approximate must be 'none' or 'tanh', got '" +
                                    approximate + "'");
}

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

}  // namespace

MSKERNEL_CPU_REGISTRATIONS(register_unary_ops) {
  add_unary<Neg, kNumeric>("neg");
  add_unary<Abs, kNumeric, RealType>("abs");
  add_unary<Sign, kNumeric>("sign");
  add_unary<Square, kNumeric>("square");
  add_unary<Reciprocal, kInexact>("reciprocal");
  add_unary<Sqrt, kInexact>("sqrt");
  add_unary<Rsqrt, kFloat>("rsqrt");
  add_unary<Exp, kInexact>("exp");
  add_unary<Expm1, kFloat>("expm1");
  add_unary<Log, kInexact>("log");
  add_unary<Log1p, kFloat>("log1p");
  add_unary<Log2, kFloat>("log2");
  add_unary<Log10, kFloat>("log10");
  add_unary<Sin, kInexact>("sin");
  add_unary<Cos, kInexact>("cos");
  add_unary<Tan, kInexact>("tan");
  add_unary<Asin, kFloat>("asin");
  add_unary<Acos, kFloat>("acos");
  add_unary<Atan, kFloat>("atan");
  add_unary<Sinh, kInexact>("sinh");
  add_unary<Cosh, kInexact>("cosh");
  add_unary<Tanh, kInexact>("tanh");
  add_unary<Asinh, kFloat>("asinh");
  add_unary<Acosh, kFloat>("acosh");
  add_unary<Atanh, kFloat>("atanh");
  add_unary<Erf, kFloat>("erf");
  add_unary<Erfc, kFloat>("erfc");
  add_unary<Lgamma, kFloat>("lgamma");
  add_unary<Sigmoid, kFloat>("sigmoid");
  add_unary<Softplus, kFloat>("softplus");
  add_unary<Relu, kReal>("relu");
  add_unary<Silu, kFloat>("silu");
  add_unary<Floor, kFloat>("floor");
  add_unary<Ceil, kFloat>("ceil");
  add_unary<Round, kFloat>("round");
  add_unary<Trunc, kFloat>("trunc");
  add_unary<IsNan, kInexact, BoolType>("isnan");
  add_unary<IsInf, kInexact, BoolType>("isinf");
  add_unary<IsFinite, kInexact, BoolType>("isfinite");
  add_unary<LogicalNot, kBool>("logical_not");
  add_unary<BitwiseNot, kIntOrBool>("bitwise_not");
  add_unary<Real, kNumeric, RealType>("real");
  add_unary<Imag, kNumeric, RealType>("imag");
  add_unary<Conj, kNumeric>("conj");
}

MSKERNEL_CPU_KERNEL("gelu", kFloat, gelu);

}  // namespace mskernel_cpu
