// Unary elementwise ops of mskernel/ops/elementwise.py, for every dtype each accepts: the
// functors of functors.hpp registered as kernels.  Where glibc's libmvec is present, the
// transcendental functions run on its SIMD variants (within a few ulp of libm).
#ifdef MSKERNEL_CPU_HAVE_LIBMVEC
#include "mskernel_cpu/libmvec.hpp"  // first: SIMD variants of libm for the loops below
#endif
#include <cmath>

#include "mskernel_cpu/elementwise.hpp"
#include "mskernel_cpu/functors.hpp"
#include "mskernel_cpu/scalar_math.hpp"

namespace mskernel_cpu {

using namespace functors;  // NOLINT: the scalar functors of these ops

namespace {

Kernel gelu(KernelContext& ctx) {
  const std::string& approximate = ctx.attrs.get_str("approximate");
  if (approximate == "none") return unary_kernel<GeluErf, kFloat>(ctx);
  if (approximate == "tanh") return unary_kernel<GeluTanh, kFloat>(ctx);
  throw Error(ErrorKind::Value, "gelu: approximate must be 'none' or 'tanh', got '" +
                                    approximate + "'");
}

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
