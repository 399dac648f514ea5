// Declares the SIMD variants glibc's libmvec (2.35 and later) provides for libm functions, so
// GCC vectorises loops calling them (through the functors of functors.hpp) instead of calling
// the scalar function once per element.  Included only by the fused-elementwise kernel's
// interpreter (when CMake finds libmvec) and the C++ it generates (linked with -lmvec when
// the library is present; fusion_codegen.py); it must come before any other include.
// libmvec's results are within a few ulp of libm's: within every dtype's tolerance, though
// not always bit-identical to the unfused kernels.
#pragma once

#include <cmath>

#define MSKERNEL_CPU_VECTOR_MATH(name)                                      \
  __attribute__((simd("notinbranch"))) double name(double) noexcept;       \
  __attribute__((simd("notinbranch"))) float name##f(float) noexcept;

extern "C" {
MSKERNEL_CPU_VECTOR_MATH(exp)
MSKERNEL_CPU_VECTOR_MATH(expm1)
MSKERNEL_CPU_VECTOR_MATH(log)
MSKERNEL_CPU_VECTOR_MATH(log1p)
MSKERNEL_CPU_VECTOR_MATH(log2)
MSKERNEL_CPU_VECTOR_MATH(log10)
MSKERNEL_CPU_VECTOR_MATH(sin)
MSKERNEL_CPU_VECTOR_MATH(cos)
MSKERNEL_CPU_VECTOR_MATH(tan)
MSKERNEL_CPU_VECTOR_MATH(asin)
MSKERNEL_CPU_VECTOR_MATH(acos)
MSKERNEL_CPU_VECTOR_MATH(atan)
MSKERNEL_CPU_VECTOR_MATH(sinh)
MSKERNEL_CPU_VECTOR_MATH(cosh)
MSKERNEL_CPU_VECTOR_MATH(tanh)
MSKERNEL_CPU_VECTOR_MATH(asinh)
MSKERNEL_CPU_VECTOR_MATH(acosh)
MSKERNEL_CPU_VECTOR_MATH(atanh)
MSKERNEL_CPU_VECTOR_MATH(erf)
MSKERNEL_CPU_VECTOR_MATH(erfc)
__attribute__((simd("notinbranch"))) double pow(double, double) noexcept;
__attribute__((simd("notinbranch"))) float powf(float, float) noexcept;
__attribute__((simd("notinbranch"))) double atan2(double, double) noexcept;
__attribute__((simd("notinbranch"))) float atan2f(float, float) noexcept;
}

#undef MSKERNEL_CPU_VECTOR_MATH
