// Binary comparison, logical, bitwise and shift ops of mskernel/ops/elementwise.py with NumPy
// broadcasting, for every dtype each accepts.  Comparisons produce bool.
#include "mskernel_cpu/elementwise.hpp"
#include "mskernel_cpu/scalar_math.hpp"

namespace mskernel_cpu {
namespace {

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
