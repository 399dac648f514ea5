// The instruction set of the fused-elementwise interpreter: for every elementwise op it can
// fuse, a tile op applying the op's functor (functors.hpp) to whole registers, instantiated
// per dtype.  Results are rounded to the instruction's storage dtype (load(convert<R>(v))),
// exactly as the op's own kernel stores them.  With glibc's libmvec, the loops of libm
// functions vectorise (libmvec.hpp), within a few ulp of the scalar functions.
#ifdef MSKERNEL_CPU_HAVE_LIBMVEC
#include "mskernel_cpu/libmvec.hpp"
#endif

#include <array>
#include <map>
#include <tuple>
#include <utility>

#include "mskernel_cpu/elementwise.hpp"
#include "mskernel_cpu/functors.hpp"
#include "mskernel_cpu/fused.hpp"

namespace mskernel_cpu {
namespace fused {
namespace {

using namespace functors;  // NOLINT: the functors are this file's vocabulary

// result = op(operands...) over `count` values; Ts are the operands' storage types, R the
// result's.  Registers hold compute_t values.
template <class Op, class R, class... Ts>
class MapTile final : public TileOp {
 public:
  // The spec must read sizeof...(Ts) registers of the types Ts and declare R's type: every
  // register is read and written as the type the functor works in.
  MapTile(Op op, const InstructionSpec& spec) : op_(op), result_(spec.result) {
    const DType expected[] = {dtype_of<Ts>()...};
    if (spec.operands.size() != sizeof...(Ts)) {
      throw Error(ErrorKind::Type, "cpu.fused_elementwise: " + spec.op + " takes " +
                                       std::to_string(sizeof...(Ts)) + " operand(s), got " +
                                       std::to_string(spec.operands.size()));
    }
    for (size_t i = 0; i < sizeof...(Ts); ++i) {
      if (spec.operand_types[i] != expected[i]) {
        throw Error(ErrorKind::Type, "cpu.fused_elementwise: " + spec.op + " operand " +
                                         std::to_string(i) + " is " +
                                         dtype_name(spec.operand_types[i]) + ", expected " +
                                         dtype_name(expected[i]));
      }
      operands_[i] = spec.operands[i];
    }
    if (spec.result_type != dtype_of<R>()) {
      throw Error(ErrorKind::Type, "cpu.fused_elementwise: " + spec.op + " gives " +
                                       dtype_name(dtype_of<R>()) + ", the program says " +
                                       dtype_name(spec.result_type));
    }
  }

  void run(char* const* registers, int64_t count) const override {
    apply(registers, count, std::index_sequence_for<Ts...>{});
  }

  int cost() const override { return Op::cost; }

 private:
  template <size_t... I>
  void apply(char* const* registers, int64_t count, std::index_sequence<I...>) const {
    const std::tuple<const compute_t<Ts>*...> in{
        reinterpret_cast<const compute_t<Ts>*>(registers[operands_[I]])...};
    auto* out = reinterpret_cast<compute_t<R>*>(registers[result_]);
    for (int64_t i = 0; i < count; ++i) out[i] = load(convert<R>(op_(std::get<I>(in)[i]...)));
  }

  Op op_;
  std::array<int, sizeof...(Ts)> operands_{};
  int result_;
};

using TileOpPtr = std::unique_ptr<TileOp>;
using Maker = TileOpPtr (*)(const InstructionSpec&);

template <class Op, DTypeSet Set, class Out = SameType>
TileOpPtr unary(const InstructionSpec& spec) {
  return dispatch<Set & kFusable>(spec.operand_types[0], [&](auto tag) -> TileOpPtr {
    using T = typename decltype(tag)::type;
    return std::make_unique<MapTile<Op, typename Out::template type<T>, T>>(Op{}, spec);
  });
}

template <class Op, DTypeSet Set, class Out = SameType>
TileOpPtr binary(const InstructionSpec& spec) {
  return dispatch<Set & kFusable>(spec.operand_types[0], [&](auto tag) -> TileOpPtr {
    using T = typename decltype(tag)::type;
    return std::make_unique<MapTile<Op, typename Out::template type<T>, T, T>>(Op{}, spec);
  });
}

TileOpPtr gelu(const InstructionSpec& spec) {
  const std::string& approximate = spec.attrs.get_str(spec.prefix + "approximate");
  if (approximate == "none") return unary<GeluErf, kFloat>(spec);
  if (approximate == "tanh") return unary<GeluTanh, kFloat>(spec);
  throw Error(ErrorKind::Value, "gelu: approximate must be 'none' or 'tanh', got '" +
                                    approximate + "'");
}

TileOpPtr clip(const InstructionSpec& spec) {
  const std::optional<double> low = spec.attrs.get_optional_float(spec.prefix + "min");
  const std::optional<double> high = spec.attrs.get_optional_float(spec.prefix + "max");
  return dispatch<kReal>(spec.operand_types[0], [&](auto tag) -> TileOpPtr {
    using T = typename decltype(tag)::type;
    return std::make_unique<MapTile<Clip<compute_t<T>>, T, T>>(Clip<compute_t<T>>(low, high),
                                                              spec);
  });
}

TileOpPtr cast(const InstructionSpec& spec) {
  return dispatch<kFusable>(spec.operand_types[0], [&](auto from) -> TileOpPtr {
    using From = typename decltype(from)::type;
    return dispatch<kFusable>(spec.result_type, [&](auto to) -> TileOpPtr {
      using To = typename decltype(to)::type;
      return std::make_unique<MapTile<Identity, To, From>>(Identity{}, spec);
    });
  });
}

TileOpPtr where(const InstructionSpec& spec) {
  if (spec.operand_types.size() != 3) {
    throw Error(ErrorKind::Type, "cpu.fused_elementwise: where takes 3 operands");
  }
  return dispatch<kFusable>(spec.operand_types[1], [&](auto tag) -> TileOpPtr {
    using T = typename decltype(tag)::type;
    return std::make_unique<MapTile<Select, T, bool, T, T>>(Select{}, spec);
  });
}

const std::map<std::string, Maker>& instruction_set() {
  static const std::map<std::string, Maker> table = {
      {"neg", &unary<Neg, kNumeric>},
      {"abs", &unary<Abs, kNumeric, RealType>},
      {"sign", &unary<Sign, kNumeric>},
      {"square", &unary<Square, kNumeric>},
      {"reciprocal", &unary<Reciprocal, kInexact>},
      {"sqrt", &unary<Sqrt, kInexact>},
      {"rsqrt", &unary<Rsqrt, kFloat>},
      {"exp", &unary<Exp, kInexact>},
      {"expm1", &unary<Expm1, kFloat>},
      {"log", &unary<Log, kInexact>},
      {"log1p", &unary<Log1p, kFloat>},
      {"log2", &unary<Log2, kFloat>},
      {"log10", &unary<Log10, kFloat>},
      {"sin", &unary<Sin, kInexact>},
      {"cos", &unary<Cos, kInexact>},
      {"tan", &unary<Tan, kInexact>},
      {"asin", &unary<Asin, kFloat>},
      {"acos", &unary<Acos, kFloat>},
      {"atan", &unary<Atan, kFloat>},
      {"sinh", &unary<Sinh, kInexact>},
      {"cosh", &unary<Cosh, kInexact>},
      {"tanh", &unary<Tanh, kInexact>},
      {"asinh", &unary<Asinh, kFloat>},
      {"acosh", &unary<Acosh, kFloat>},
      {"atanh", &unary<Atanh, kFloat>},
      {"erf", &unary<Erf, kFloat>},
      {"erfc", &unary<Erfc, kFloat>},
      {"lgamma", &unary<Lgamma, kFloat>},
      {"sigmoid", &unary<Sigmoid, kFloat>},
      {"softplus", &unary<Softplus, kFloat>},
      {"relu", &unary<Relu, kReal>},
      {"silu", &unary<Silu, kFloat>},
      {"floor", &unary<Floor, kFloat>},
      {"ceil", &unary<Ceil, kFloat>},
      {"round", &unary<Round, kFloat>},
      {"trunc", &unary<Trunc, kFloat>},
      {"isnan", &unary<IsNan, kInexact, BoolType>},
      {"isinf", &unary<IsInf, kInexact, BoolType>},
      {"isfinite", &unary<IsFinite, kInexact, BoolType>},
      {"logical_not", &unary<LogicalNot, kBool>},
      {"bitwise_not", &unary<BitwiseNot, kIntOrBool>},
      {"real", &unary<Real, kNumeric, RealType>},
      {"imag", &unary<Imag, kNumeric, RealType>},
      {"conj", &unary<Conj, kNumeric>},
      {"gelu", &gelu},
      {"add", &binary<Add, kNumeric>},
      {"sub", &binary<Sub, kNumeric>},
      {"mul", &binary<Mul, kNumeric>},
      {"div", &binary<Div, kInexact>},
      {"floor_divide", &binary<FloorDivide, kReal>},
      {"remainder", &binary<Remainder, kReal>},
      {"pow", &binary<Pow, kNumeric>},
      {"maximum", &binary<Maximum, kReal>},
      {"minimum", &binary<Minimum, kReal>},
      {"atan2", &binary<Atan2, kFloat>},
      {"equal", &binary<Equal, kAll, BoolType>},
      {"not_equal", &binary<NotEqual, kAll, BoolType>},
      {"less", &binary<Less, kReal, BoolType>},
      {"less_equal", &binary<LessEqual, kReal, BoolType>},
      {"greater", &binary<Greater, kReal, BoolType>},
      {"greater_equal", &binary<GreaterEqual, kReal, BoolType>},
      {"logical_and", &binary<LogicalAnd, kBool, BoolType>},
      {"logical_or", &binary<LogicalOr, kBool, BoolType>},
      {"logical_xor", &binary<LogicalXor, kBool, BoolType>},
      {"bitwise_and", &binary<BitwiseAnd, kIntOrBool>},
      {"bitwise_or", &binary<BitwiseOr, kIntOrBool>},
      {"bitwise_xor", &binary<BitwiseXor, kIntOrBool>},
      {"left_shift", &binary<LeftShift, kInteger>},
      {"right_shift", &binary<RightShift, kInteger>},
      {"where", &where},
      {"clip", &clip},
      {"cast", &cast},
  };
  return table;
}

}  // namespace

std::unique_ptr<TileOp> make_tile_op(const InstructionSpec& spec) {
  const auto& table = instruction_set();
  const auto it = table.find(spec.op);
  if (it == table.end()) {
    throw Error(ErrorKind::Type, "cpu.fused_elementwise: op '" + spec.op + "' cannot be fused");
  }
  if (spec.operand_types.empty()) {
    throw Error(ErrorKind::Type, "cpu.fused_elementwise: " + spec.op + " reads no register");
  }
  if (!contains(kFusable, spec.result_type)) {
    throw Error(ErrorKind::Type, "cpu.fused_elementwise: cannot fuse " + spec.op + " to " +
                                     dtype_name(spec.result_type));
  }
  for (DType dt : spec.operand_types) {
    if (!contains(kFusable, dt)) {
      throw Error(ErrorKind::Type, "cpu.fused_elementwise: cannot fuse " + spec.op + " on " +
                                       dtype_name(dt));
    }
  }
  return it->second(spec);
}

std::vector<std::string> fusable_ops() {
  std::vector<std::string> names;
  for (const auto& item : instruction_set()) names.push_back(item.first);
  return names;
}

}  // namespace fused
}  // namespace mskernel_cpu
