// The kernel ABI of the cpu backend.  See plugins/cpu/KERNELS.md for a walkthrough.
//
// A kernel is made in two phases:
//
//   compile time  A factory `Kernel make(KernelContext& ctx)` receives the node's input and
//                 output types (dtype + static shape) and its attributes, decides everything
//                 that depends on them (dtype dispatch, broadcasting, loop bounds, BLAS
//                 arguments), may ask for scratch memory (ctx.workspace_bytes), and returns a
//                 closure.  Factories run once per node when a graph is compiled.
//   run time      The closure receives only pointers (Args): one per input, one per output,
//                 and the workspace.  It runs at every call of the compiled graph.
//
// Memory contract.  Every tensor a kernel sees is dense and C-contiguous in its device
// storage type (see dtype.hpp), and buffers are 64-byte aligned.  Outputs never alias inputs
// or each other.  Tensors with zero elements still get a valid pointer; don't dereference it.
// A closure may be called many times but never concurrently with itself.
//
// Registration.  MSKERNEL_CPU_KERNEL("op_name", dtypes, factory) at namespace scope in any
// .cpp file under csrc/kernels/ registers a factory for an op name of the IR.  `dtypes` is
// the set of dtypes the kernel accepts on any input or output; it becomes the backend's
// capability table (mskernel plugins info cpu), so list exactly what the factory handles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "mskernel_cpu/convert.hpp"
#include "mskernel_cpu/dtype.hpp"
#include "mskernel_cpu/error.hpp"
#include "mskernel_cpu/parallel.hpp"

namespace mskernel_cpu {

// The static type of one tensor operand: dtype and shape (C-contiguous).
struct TensorInfo {
  DType dtype;
  std::vector<int64_t> shape;

  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * itemsize(dtype); }
  std::vector<int64_t> strides() const;  // element strides of the C-contiguous layout
};

// A constant array attribute (kind "array"): dtype (NumPy storage: bfloat16 arrives as
// float32), shape and the C-contiguous bytes.
struct ArrayAttr {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
};

// One attribute value.  monostate is None.  A "dtype" attribute arrives as its name (a
// string): read it with Attrs::get_dtype.
using AttrValue = std::variant<std::monostate, bool, int64_t, double, std::string,
                               std::vector<int64_t>, std::vector<double>, ArrayAttr>;

// The node's attributes, bound and validated by the op's schema (defaults filled in), packed
// once when the graph is compiled.  Getters throw an Error naming the attribute when it is
// missing or of another kind.
class Attrs {
 public:
  void set(const std::string& name, AttrValue value) { values_[name] = std::move(value); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  bool is_none(const std::string& name) const;

  bool get_bool(const std::string& name) const;
  int64_t get_int(const std::string& name) const;
  double get_float(const std::string& name) const;  // an int attribute is accepted too
  const std::string& get_str(const std::string& name) const;
  DType get_dtype(const std::string& name) const;
  const std::vector<int64_t>& get_ints(const std::string& name) const;
  std::vector<double> get_floats(const std::string& name) const;
  const ArrayAttr& get_array(const std::string& name) const;

  std::optional<int64_t> get_optional_int(const std::string& name) const;
  std::optional<double> get_optional_float(const std::string& name) const;
  std::optional<std::vector<int64_t>> get_optional_ints(const std::string& name) const;

 private:
  const AttrValue& find(const std::string& name) const;
  [[noreturn]] void wrong_kind(const std::string& name, const char* wanted) const;
  std::unordered_map<std::string, AttrValue> values_;
};

// What a factory sees.  It may set `workspace_bytes` (scratch memory handed to every call,
// 64-byte aligned, contents undefined on entry) and `detail` (a short note on what it chose,
// shown by the executable's plan dump).
//
// Validation.  prepare_kernel has checked the dtypes against the kernel's set and that every
// dim is non-negative and every tensor's size fits in int64 bytes; the rest is the factory's
// to check before it indexes: read operands through input(i)/output(i) (which throw for a
// missing one), and check ranks, shapes and attribute ranges with the helpers below (or
// Error(Value/Type, ...)) — a bad node must raise, never reach memory it does not own.
struct KernelContext {
  const std::string& op;
  const std::vector<TensorInfo>& inputs;
  const std::vector<TensorInfo>& outputs;
  const Attrs& attrs;
  size_t workspace_bytes = 0;
  std::string detail;

  const TensorInfo& input(size_t i) const;   // throws Error(Type) when there is no input i
  const TensorInfo& output(size_t i) const;  // likewise for outputs
  // Throw Error(Type) unless there are `n` inputs (between `min` and `max`) or outputs.
  void expect_inputs(size_t n) const { expect_inputs(n, n); }
  void expect_inputs(size_t min, size_t max) const;
  void expect_outputs(size_t n) const;
  // Throw Error(Value) unless tensor `t` (called `what`) has a rank in [min, max].
  void expect_rank(const TensorInfo& t, const char* what, int min, int max) const;
  // Throw Error(Value) unless `t` has exactly `shape`.
  void expect_shape(const TensorInfo& t, const char* what,
                    const std::vector<int64_t>& shape) const;
};

// "(2, 3)", "(4,)", "()": a shape as Python writes it.
std::string shape_text(const std::vector<int64_t>& shape);

// Throw Error(Value) naming `op` and `what` unless every dim of `shape` is non-negative and
// its size in `item`-byte elements is addressable (below 2**62 bytes).
void check_extent(const std::string& op, const std::vector<int64_t>& shape, size_t item,
                  const std::string& what);

// Whether `shape` broadcasts to `out` (NumPy's rule, `out` unchanged).
bool broadcasts_to(const std::vector<int64_t>& shape, const std::vector<int64_t>& out);

// `axis` (negative counts from the end) as an index in [0, rank); throws Error(Index).
int normalized_axis(int64_t axis, int rank, const std::string& op);

// What a kernel closure sees at run time.
struct Args {
  const void* const* inputs;
  void* const* outputs;
  void* workspace;

  template <class T> const T* in(int i) const { return static_cast<const T*>(inputs[i]); }
  template <class T> T* out(int i) const { return static_cast<T*>(outputs[i]); }
  template <class T> T* scratch() const { return static_cast<T*>(workspace); }
};

using Kernel = std::function<void(const Args&)>;
using KernelFactory = Kernel (*)(KernelContext&);

struct KernelEntry {
  std::string op;
  DTypeSet dtypes;
  KernelFactory factory;
};

// Kernel factories by op name.  Filled by static initialisers (MSKERNEL_CPU_KERNEL) when the
// extension loads; a second registration of one op name is recorded as a conflict and makes
// the import fail with both names listed.
class KernelRegistry {
 public:
  static KernelRegistry& instance();
  bool add(const std::string& op, DTypeSet dtypes, KernelFactory factory);
  const KernelEntry* find(const std::string& op) const;
  std::vector<KernelEntry> entries() const;  // sorted by op name
  const std::vector<std::string>& conflicts() const { return conflicts_; }

 private:
  std::unordered_map<std::string, KernelEntry> entries_;
  std::vector<std::string> conflicts_;
};

// Prepare a kernel for one node: look up the op, check its dtypes, dims and sizes, run the
// factory.  Every failure is an Error whose message names the op.
Kernel prepare_kernel(KernelContext& ctx);

}  // namespace mskernel_cpu

#define MSKERNEL_CPU_CONCAT_INNER(a, b) a##b
#define MSKERNEL_CPU_CONCAT(a, b) MSKERNEL_CPU_CONCAT_INNER(a, b)

// Register `factory` (a function Kernel(KernelContext&)) for op `op` accepting `dtypes`.
#define MSKERNEL_CPU_KERNEL(op, dtypes, factory)                                     \
  static const bool MSKERNEL_CPU_CONCAT(mskernel_cpu_registered_, __COUNTER__) = \
      ::mskernel_cpu::KernelRegistry::instance().add(op, dtypes, factory)

// A block of registrations run when the extension loads (for tables of similar ops):
//   MSKERNEL_CPU_REGISTRATIONS(unary_ops) { add_unary<Exp, kInexact>("exp"); ... }
#define MSKERNEL_CPU_REGISTRATIONS(name)                          \
  static void name();                                             \
  static const bool MSKERNEL_CPU_CONCAT(name, _registered) = (name(), true); \
  static void name()
