// Binary comparison, logical, bitwise and shift ops of mskernel/ops/elementwise.py with NumPy
// broadcasting, for every dtype each accepts.  Comparisons produce bool.
#include "mskernel_cpu/elementwise.hpp"
#include "mskernel_cpu/functors.hpp"
#include "mskernel_cpu/scalar_math.hpp"

namespace mskernel_cpu {

using namespace functors;  // NOLINT: the scalar functors of these ops

namespace {

// ---- logical and bitwise ----------------------------------------------------------------

// NumPy's npy_lshift/npy_rshift: a shift by the bit width or more (or by a negative amount,
// seen as a huge unsigned one) gives 0, or -1 for a right shift of a negative number.
}  // namespace

MSKERNEL_CPU_REGISTRATIONS(register_comparison_ops) {
  add_binary<Equal, kAll, BoolType>("equal");
  add_binary<NotEqual, kAll, BoolType>("not_equal");
  add_binary<Less, kReal, BoolType>("less");
  add_binary<LessEqual, kReal, BoolType>("less_equal");
  add_binary<Greater, kReal, BoolType>("greater");
  add_binary<GreaterEqual, kReal, BoolType>("greater_equal");
  add_binary<LogicalAnd, kBool, BoolType>("logical_and");
  add_binary<LogicalOr, kBool, BoolType>("logical_or");
  add_binary<LogicalXor, kBool, BoolType>("logical_xor");
  add_binary<BitwiseAnd, kIntOrBool>("bitwise_and");
  add_binary<BitwiseOr, kIntOrBool>("bitwise_or");
  add_binary<BitwiseXor, kIntOrBool>("bitwise_xor");
  add_binary<LeftShift, kInteger>("left_shift");
  add_binary<RightShift, kInteger>("right_shift");
}

}  // namespace mskernel_cpu
