// Binary arithmetic ops of mskernel/ops/elementwise.py with NumPy broadcasting, for every
// dtype each accepts.  Integer arithmetic wraps; integer division by zero raises
// ZeroDivisionError as the reference does.
#ifdef MSKERNEL_CPU_HAVE_LIBMVEC
#include "mskernel_cpu/libmvec.hpp"  // first: SIMD variants of libm for the loops below
#endif
#include <cmath>

#include "mskernel_cpu/elementwise.hpp"
#include "mskernel_cpu/functors.hpp"
#include "mskernel_cpu/scalar_math.hpp"

namespace mskernel_cpu {

using namespace functors;  // NOLINT: the scalar functors of these ops

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
