// The fused-elementwise kernel's program and its interpreter (kernels/fused_*.cpp).
//
// A program is the region of a `cpu.fused_elementwise` node flattened into registers: the
// node's inputs are registers 0..n-1 and instruction k (one elementwise op) writes register
// n + k; the last instruction's register is the output.  Every value is rounded to its own
// dtype as the unfused ops round it, so fusing never changes a result.
//
// The interpreter runs a program over tiles of kTile output elements: inputs are gathered
// into registers (broadcasting resolved per input at compile time), then each instruction
// applies its functor over the whole tile, a loop the compiler vectorises.  A register holds
// compute-type values (compute_t: float for float16/bfloat16).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mskernel_cpu/kernel.hpp"

namespace mskernel_cpu {
namespace fused {

constexpr int64_t kTile = 256;
// Bytes of one register: kTile values of the widest compute type (double, int64).
constexpr size_t kRegisterBytes = kTile * 8;

// One instruction as the factory decodes it from the node's attributes.
struct InstructionSpec {
  std::string op;
  std::vector<int> operands;         // registers read
  std::vector<DType> operand_types;  // their dtypes
  DType result_type;
  int result;                        // register written
  const Attrs& attrs;                // the node's attributes; the op's own are "<k>.<name>"
  std::string prefix;                // "<k>."
};

// An instruction ready to run over a tile: reads its operand registers and writes its
// result register, `count` <= kTile values each.
class TileOp {
 public:
  virtual ~TileOp() = default;
  virtual void run(char* const* registers, int64_t count) const = 0;
  virtual int cost() const = 0;  // the functor's cost tag (CheapOp: 1, CostlyOp: 8)
};

// The tile op of an instruction; throws Error(Type) for an op or dtype it cannot fuse.
std::unique_ptr<TileOp> make_tile_op(const InstructionSpec& spec);

// The ops make_tile_op accepts, sorted (the fusion pass fuses only these).
std::vector<std::string> fusable_ops();

// The dtypes the fused kernel takes on any register: everything but complex.
constexpr DTypeSet kFusable = kAll & ~kComplex;

}  // namespace fused
}  // namespace mskernel_cpu
