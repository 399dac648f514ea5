// A compiled graph: slots (where each value lives), steps (kernels, copies, ref accesses,
// If/While over sub-plans) and one arena holding every intermediate tensor at the offset the
// memory planner chose.  Built once by mskernel_cpu/lowering.py; `run` executes every step in
// C++ in one call from Python.
//
// Building checks everything running relies on, and throws Error naming the step otherwise:
// every slot index is in range; an arena slot lies inside the arena, 64-byte aligned; each
// step reads and writes slots of the kind and byte size it works on (a kernel's operands as
// its factory saw them, a copy's bytes, a cell's value, a sub-plan's ports) that have memory
// (the arena, a constant, a graph input or output, or an earlier step that points them at an
// array); a sub-plan has as many ports as the step passes it.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mskernel_cpu/kernel.hpp"

namespace mskernel_cpu {

namespace py = pybind11;

// A value at run time: the tensor's data, or the RefCell object of a ref (borrowed: the
// caller's arguments keep it alive).  Tokens carry nothing.
struct Slot {
  void* data = nullptr;
  PyObject* cell = nullptr;
};

enum class ValueKind { Tensor, Ref, Token };
ValueKind parse_kind(const std::string& kind);

// What a slot holds: its kind and, for a tensor, its storage bytes; whether it has memory
// yet (see Plan).
struct SlotInfo {
  ValueKind kind;
  size_t nbytes;
  bool has_memory;
};

// What a graph input or output is, and the slot it lives in.
struct Port {
  int slot;
  ValueKind kind;
  py::dtype dtype;  // storage dtype (tensors only)
  std::vector<int64_t> shape;
  py::object wrap;  // output tensors of a top-level plan: array -> DeviceArray
};

// A kernel made by its factory, waiting to be placed in a plan, with the storage bytes of
// the operands the factory saw.
struct PreparedKernel {
  std::string op;
  Kernel kernel;
  size_t workspace_bytes = 0;
  std::string detail;
  std::vector<size_t> input_bytes, output_bytes;
};

// The storage bytes of a tensor port.
size_t storage_bytes(const Port& port);

class Plan;

class Step {
 public:
  explicit Step(std::string label) : label_(std::move(label)) {}
  virtual ~Step() = default;
  virtual void run(std::vector<Slot>& slots) = 0;
  // One line (or, for steps owning sub-plans, an indented block) for the plan dump.
  virtual std::string describe(const std::string& /*indent*/) const { return label_; }
  const std::string& label() const { return label_; }

 private:
  std::string label_;
};

class Plan {
 public:
  Plan(std::string name, int64_t arena_bytes, py::object backend);

  // Building (from Python, once).  A slot at `arena_offset` >= 0 is `nbytes` of the arena;
  // at -1 it is bound when the plan runs (a graph input or output, an array a step points
  // it at).
  int add_slot(int64_t arena_offset, ValueKind kind, size_t nbytes);
  int add_constant(py::array data);    // a slot holding `data` (kept by the plan) at every run
  void set_inputs(std::vector<Port> ports);
  void set_outputs(std::vector<Port> ports);
  void add_step(std::unique_ptr<Step> step) { steps_.push_back(std::move(step)); }
  const py::object& backend() const { return backend_; }

  // Checks for step factories (throw Error naming `what`): slot `slot` holds `kind` with
  // exactly `nbytes` bytes (tensors) and has memory; `room`: at least `nbytes` bytes.
  void check_slot(int slot, ValueKind kind, size_t nbytes, const std::string& what) const;
  void check_room(int slot, size_t nbytes, const std::string& what) const;
  void check_port(int slot, const Port& port, const std::string& what) const;
  // A step points tensor slot `slot` at memory of its own (a cell's array).
  void give_memory(int slot, size_t nbytes, const std::string& what);

  // Running.  `run` is the top-level entry from Python; `execute` runs with inputs bound to
  // `inputs` and tensor outputs written to the buffers in `outputs` (refs are returned there).
  py::list run(const py::sequence& args);
  void execute(const Slot* inputs, Slot* outputs);

  std::string describe(const std::string& indent) const;
  const std::string& name() const { return name_; }

  // Profiling: while on, every top-level step of `execute` is timed (steady_clock) and its
  // time and call count accumulate; off (the default), steps run untimed.  Turning it on
  // clears the counters.
  void set_profiling(bool on);
  bool profiling() const { return profiling_; }
  struct StepTime {
    std::string label;
    double seconds;
    int64_t calls;
  };
  std::vector<StepTime> step_times() const;
  const std::vector<Port>& inputs() const { return inputs_; }
  const std::vector<Port>& outputs() const { return outputs_; }
  int num_steps() const { return static_cast<int>(steps_.size()); }

 private:
  void run_step(Step& step);
  void* tensor_argument(const py::handle& arg, size_t index, const Port& port,
                        std::vector<py::object>& keep) const;

  const SlotInfo& info(int slot, const std::string& what) const;
  void bind_ports(const std::vector<Port>& ports, const char* what);

  std::string name_;
  py::object backend_;
  int64_t arena_bytes_;
  std::unique_ptr<char, void (*)(void*)> arena_;
  std::vector<int64_t> slot_offsets_;  // -1 for bound slots
  std::vector<SlotInfo> slot_info_;
  std::vector<Slot> slots_;
  std::vector<Port> inputs_, outputs_;
  std::vector<std::unique_ptr<Step>> steps_;
  std::vector<py::array> constants_;
  std::mutex running_;  // a plan's arena serves one call at a time
  bool profiling_ = false;
  std::vector<std::chrono::steady_clock::duration> step_time_;
  std::vector<int64_t> step_calls_;
};

// The Python objects the plans create or recognise, set once by mskernel_cpu.native.
struct RuntimeTypes {
  py::object device_array;  // mskernel.runtime.DeviceArray
  py::object token;         // mskernel.runtime.TOKEN_VALUE
  py::object dtype;         // mskernel.ir.DType (attributes of this type pass as their name)
  py::object type_check;    // mskernel_cpu.native.check_node_types
};
RuntimeTypes& runtime_types();

// An uninitialised C-contiguous array whose data is 64-byte aligned.
py::array aligned_empty(const py::dtype& dtype, const std::vector<int64_t>& shape);

// Step factories (plan_steps.cpp): each checks its slots against `plan` (see Plan).
std::unique_ptr<Step> kernel_step(const Plan& plan, std::shared_ptr<PreparedKernel> kernel,
                                  std::vector<int> inputs, std::vector<int> outputs,
                                  int workspace, std::string label);
std::unique_ptr<Step> copy_step(const Plan& plan, int source, int target, size_t nbytes,
                                std::string label);
// `alias`: the loaded value's slot points at the cell's array instead of a copy (lowering
// guarantees that no kernel writes over it).
std::unique_ptr<Step> ref_load_step(Plan& plan, int ref, int target, Port value, bool alias,
                                    std::string label);
// The arrays one ref_store puts in its cell: one it made earlier that nothing references
// anymore (the cell has moved on and no value, view or load holds it), else a fresh one, so a
// parameter updated every step alternates between two warm buffers instead of faulting in
// new pages.  `acquire` picks the array of the coming store (`pending`).
class StoreArrays {
 public:
  py::array& acquire(const Port& value);
  const py::array& pending() const { return made_[pending_]; }

 private:
  static constexpr size_t kKept = 2;  // the cell's current array and a spare
  std::vector<py::array> made_;       // oldest first
  size_t pending_ = 0;
};

// `taken`: the value to store was computed in the array an acquire_step (run before the step
// producing it) took from `arrays`, so the store copies nothing.
std::unique_ptr<Step> ref_store_step(const Plan& plan, int ref, int source, Port value,
                                     std::shared_ptr<StoreArrays> arrays, bool taken,
                                     std::string label);
std::unique_ptr<Step> acquire_step(Plan& plan, int target, Port value,
                                   std::shared_ptr<StoreArrays> arrays, std::string label);
std::unique_ptr<Step> if_step(const Plan& plan, int predicate, std::vector<int> operands,
                              std::vector<int> outputs, std::shared_ptr<Plan> then_plan,
                              std::shared_ptr<Plan> else_plan, std::string label);
std::unique_ptr<Step> while_step(const Plan& plan, std::vector<int> operands,
                                 std::vector<int> outputs, std::vector<ValueKind> kinds,
                                 std::vector<size_t> nbytes, int scratch,
                                 std::vector<int64_t> scratch_offsets,
                                 std::shared_ptr<Plan> cond, std::shared_ptr<Plan> body,
                                 int64_t max_iterations, std::string label);

}  // namespace mskernel_cpu
