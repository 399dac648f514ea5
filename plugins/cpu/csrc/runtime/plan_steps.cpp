// The steps of a plan: a kernel call, a copy, ref_load/ref_store (the only steps that touch
// Python objects, under the GIL), and If/While running sub-plans compiled from regions.
#include <algorithm>
#include <cstring>

#include "plan.hpp"

namespace mskernel_cpu {
namespace {

std::string nested(const std::string& label, const std::string& indent,
                   std::initializer_list<std::pair<const char*, const Plan*>> regions) {
  std::string text = label;
  for (const auto& [name, plan] : regions) {
    text += "\n" + indent + "   " + name + " @" + plan->name() + ":\n";
    std::string body = plan->describe(indent + "     ");
    if (!body.empty() && body.back() == '\n') body.pop_back();
    text += body;
  }
  return text;
}

class KernelStep : public Step {
 public:
  KernelStep(std::shared_ptr<PreparedKernel> kernel, std::vector<int> inputs,
             std::vector<int> outputs, int workspace, std::string label)
      : Step(std::move(label)), kernel_(std::move(kernel)), inputs_(std::move(inputs)),
        outputs_(std::move(outputs)), workspace_(workspace),
        input_data_(inputs_.size()), output_data_(outputs_.size()) {}

  void run(std::vector<Slot>& slots) override {
    for (size_t i = 0; i < inputs_.size(); ++i) input_data_[i] = slots[inputs_[i]].data;
    for (size_t i = 0; i < outputs_.size(); ++i) output_data_[i] = slots[outputs_[i]].data;
    const Args args{input_data_.data(), output_data_.data(),
                    workspace_ >= 0 ? slots[workspace_].data : nullptr};
    kernel_->kernel(args);
  }

  std::string describe(const std::string&) const override {
    return kernel_->detail.empty() ? label() : label() + " [" + kernel_->detail + "]";
  }

 private:
  std::shared_ptr<PreparedKernel> kernel_;
  std::vector<int> inputs_, outputs_;
  int workspace_;
  std::vector<const void*> input_data_;
  std::vector<void*> output_data_;
};

class CopyStep : public Step {
 public:
  CopyStep(int source, int target, size_t nbytes, std::string label)
      : Step(std::move(label)), source_(source), target_(target), nbytes_(nbytes) {}

  void run(std::vector<Slot>& slots) override {
    if (nbytes_ != 0) std::memcpy(slots[target_].data, slots[source_].data, nbytes_);
  }

 private:
  int source_, target_;
  size_t nbytes_;
};

// The cell's DeviceArray of this backend, checked against the cell's type (under the GIL).
py::array cell_array(const py::handle& cell, const py::object& backend, const Port& value,
                     size_t nbytes) {
  py::object current = cell.attr("value");
  if (!py::isinstance(current, runtime_types().device_array) ||
      !py::object(current.attr("backend")).is(backend)) {
    throw Error(ErrorKind::Type, "the ref cell holds " + std::string(py::repr(current)) +
                                     ", not a DeviceArray of this cpu backend");
  }
  py::object data = current.attr("data");
  if (!py::isinstance<py::array>(data)) {
    throw Error(ErrorKind::Type, "the ref cell's DeviceArray.data is not a NumPy array");
  }
  py::array array = py::reinterpret_borrow<py::array>(data);
  if (!array.dtype().equal(value.dtype) || static_cast<size_t>(array.nbytes()) != nbytes) {
    throw Error(ErrorKind::Type, "the ref cell's array does not match its type");
  }
  return array;
}

// A load copies the cell's array into the value's buffer or (`alias`) points the value's slot
// at the array itself, holding it until the next run: stores never write over an array
// anyone else references, so it cannot change while the value is live.  A strided array is
// read through a contiguous copy, held likewise.
class RefLoadStep : public Step {
 public:
  RefLoadStep(py::object backend, int ref, int target, Port value, bool alias, std::string label)
      : Step(std::move(label)), backend_(std::move(backend)), ref_(ref), target_(target),
        value_(std::move(value)), nbytes_(storage_bytes(value_)), alias_(alias) {}

  void run(std::vector<Slot>& slots) override {
    py::gil_scoped_acquire gil;
    py::array array = cell_array(py::handle(slots[ref_].cell), backend_, value_, nbytes_);
    array = py::array::ensure(array, py::array::c_style);
    if (alias_) {
      held_ = array;
      slots[target_].data = const_cast<void*>(array.data());
    } else if (nbytes_ != 0) {
      std::memcpy(slots[target_].data, array.data(), nbytes_);
    }
  }

  std::string describe(const std::string&) const override {
    return alias_ ? label() + " [aliases the cell's array]" : label();
  }

 private:
  py::object backend_;
  int ref_, target_;
  Port value_;
  size_t nbytes_;
  bool alias_;
  py::object held_;
};

// A store puts a new DeviceArray in the cell, so arrays read from it earlier never change.
// Its array comes from its StoreArrays (plan.hpp); the source is copied there, or (`taken`)
// the step producing it already wrote it there, the array acquired before that step.
class RefStoreStep : public Step {
 public:
  RefStoreStep(int ref, int source, Port value, std::shared_ptr<StoreArrays> arrays, bool taken,
               std::string label)
      : Step(std::move(label)), ref_(ref), source_(source), value_(std::move(value)),
        nbytes_(storage_bytes(value_)), arrays_(std::move(arrays)), taken_(taken) {}

  void run(std::vector<Slot>& slots) override {
    py::gil_scoped_acquire gil;
    if (!taken_) {
      void* target = arrays_->acquire(value_).mutable_data();
      if (nbytes_ != 0) std::memcpy(target, slots[source_].data, nbytes_);
    }
    py::handle(slots[ref_].cell).attr("value") = value_.wrap(arrays_->pending());
  }

  std::string describe(const std::string&) const override {
    return taken_ ? label() + " [its value was computed in the cell's new array]" : label();
  }

 private:
  int ref_, source_;
  Port value_;
  size_t nbytes_;
  std::shared_ptr<StoreArrays> arrays_;
  bool taken_;
};

// Points the slot of a value a store takes over at the array the store will put in its cell.
class AcquireStep : public Step {
 public:
  AcquireStep(int target, Port value, std::shared_ptr<StoreArrays> arrays, std::string label)
      : Step(std::move(label)), target_(target), value_(std::move(value)),
        arrays_(std::move(arrays)) {}

  void run(std::vector<Slot>& slots) override {
    py::gil_scoped_acquire gil;
    slots[target_].data = arrays_->acquire(value_).mutable_data();
  }

 private:
  int target_;
  Port value_;
  std::shared_ptr<StoreArrays> arrays_;
};

class IfStep : public Step {
 public:
  IfStep(int predicate, std::vector<int> operands, std::vector<int> outputs,
         std::shared_ptr<Plan> then_plan, std::shared_ptr<Plan> else_plan, std::string label)
      : Step(std::move(label)), predicate_(predicate), operands_(std::move(operands)),
        outputs_(std::move(outputs)), then_(std::move(then_plan)), else_(std::move(else_plan)),
        in_(operands_.size()), out_(outputs_.size()) {}

  void run(std::vector<Slot>& slots) override {
    const bool taken = *static_cast<const bool*>(slots[predicate_].data);
    for (size_t i = 0; i < operands_.size(); ++i) in_[i] = slots[operands_[i]];
    for (size_t i = 0; i < outputs_.size(); ++i) out_[i] = slots[outputs_[i]];
    (taken ? then_ : else_)->execute(in_.data(), out_.data());
    for (size_t i = 0; i < outputs_.size(); ++i) slots[outputs_[i]].cell = out_[i].cell;
  }

  std::string describe(const std::string& indent) const override {
    return nested(label(), indent, {{"then", then_.get()}, {"else", else_.get()}});
  }

 private:
  int predicate_;
  std::vector<int> operands_, outputs_;
  std::shared_ptr<Plan> then_, else_;
  std::vector<Slot> in_, out_;
};

// Carried tensors alternate between the node's output buffers and a scratch set, so the body
// always reads one set and writes the other.
class WhileStep : public Step {
 public:
  WhileStep(std::vector<int> operands, std::vector<int> outputs, std::vector<ValueKind> kinds,
            std::vector<size_t> nbytes, int scratch, std::vector<int64_t> scratch_offsets,
            std::shared_ptr<Plan> cond, std::shared_ptr<Plan> body, int64_t max_iterations,
            std::string label)
      : Step(std::move(label)), operands_(std::move(operands)), outputs_(std::move(outputs)),
        kinds_(std::move(kinds)), nbytes_(std::move(nbytes)), scratch_(scratch),
        scratch_offsets_(std::move(scratch_offsets)), cond_(std::move(cond)),
        body_(std::move(body)), max_iterations_(max_iterations), current_(operands_.size()),
        sets_{std::vector<Slot>(operands_.size()), std::vector<Slot>(operands_.size())} {}

  void run(std::vector<Slot>& slots) override {
    const size_t n = operands_.size();
    char* scratch = scratch_ >= 0 ? static_cast<char*>(slots[scratch_].data) : nullptr;
    for (size_t i = 0; i < n; ++i) {
      current_[i] = slots[operands_[i]];
      sets_[0][i] = slots[outputs_[i]];
      sets_[1][i].data = kinds_[i] == ValueKind::Tensor ? scratch + scratch_offsets_[i] : nullptr;
    }
    int64_t iterations = 0;
    for (;;) {
      bool predicate = false;
      Slot result{&predicate, nullptr};
      cond_->execute(current_.data(), &result);
      if (!predicate) break;
      if (max_iterations_ >= 0 && iterations == max_iterations_) {
        throw Error("While: the loop exceeded max_iterations=" + std::to_string(max_iterations_) +
                    " (its cond region @" + cond_->name() + " was still true after " +
                    std::to_string(iterations) + " iterations)");
      }
      std::vector<Slot>& target = sets_[iterations % 2];
      body_->execute(current_.data(), target.data());
      current_ = target;
      ++iterations;
    }
    for (size_t i = 0; i < n; ++i) {
      if (kinds_[i] == ValueKind::Tensor && current_[i].data != sets_[0][i].data &&
          nbytes_[i] != 0) {
        std::memcpy(sets_[0][i].data, current_[i].data, nbytes_[i]);
      }
      slots[outputs_[i]].cell = current_[i].cell;
    }
  }

  std::string describe(const std::string& indent) const override {
    return nested(label(), indent, {{"cond", cond_.get()}, {"body", body_.get()}});
  }

 private:
  std::vector<int> operands_, outputs_;
  std::vector<ValueKind> kinds_;
  std::vector<size_t> nbytes_;
  int scratch_;
  std::vector<int64_t> scratch_offsets_;
  std::shared_ptr<Plan> cond_, body_;
  int64_t max_iterations_;
  std::vector<Slot> current_;
  std::vector<Slot> sets_[2];
};

}  // namespace

std::unique_ptr<Step> kernel_step(const Plan& plan, std::shared_ptr<PreparedKernel> kernel,
                                  std::vector<int> inputs, std::vector<int> outputs,
                                  int workspace, std::string label) {
  if (!kernel) throw Error(ErrorKind::Type, label + ": no kernel");
  if (inputs.size() != kernel->input_bytes.size() ||
      outputs.size() != kernel->output_bytes.size()) {
    throw Error(ErrorKind::Type, label + ": the kernel of '" + kernel->op + "' was prepared for " +
                                     std::to_string(kernel->input_bytes.size()) + " input(s) and " +
                                     std::to_string(kernel->output_bytes.size()) +
                                     " output(s), the step passes " +
                                     std::to_string(inputs.size()) + " and " +
                                     std::to_string(outputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    plan.check_slot(inputs[i], ValueKind::Tensor, kernel->input_bytes[i],
                    label + " (input " + std::to_string(i) + ")");
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    plan.check_slot(outputs[i], ValueKind::Tensor, kernel->output_bytes[i],
                    label + " (output " + std::to_string(i) + ")");
  }
  if (workspace >= 0 || kernel->workspace_bytes != 0) {
    plan.check_room(workspace, kernel->workspace_bytes, label + " (workspace)");
  }
  return std::make_unique<KernelStep>(std::move(kernel), std::move(inputs), std::move(outputs),
                                      workspace, std::move(label));
}

std::unique_ptr<Step> copy_step(const Plan& plan, int source, int target, size_t nbytes,
                                std::string label) {
  plan.check_room(source, nbytes, label + " (source)");
  plan.check_room(target, nbytes, label + " (target)");
  return std::make_unique<CopyStep>(source, target, nbytes, std::move(label));
}

std::unique_ptr<Step> ref_load_step(Plan& plan, int ref, int target, Port value, bool alias,
                                    std::string label) {
  plan.check_slot(ref, ValueKind::Ref, 0, label + " (cell)");
  if (alias) {
    plan.give_memory(target, storage_bytes(value), label + " (value)");
  } else {
    plan.check_slot(target, ValueKind::Tensor, storage_bytes(value), label + " (value)");
  }
  return std::make_unique<RefLoadStep>(plan.backend(), ref, target, std::move(value), alias,
                                       std::move(label));
}

py::array& StoreArrays::acquire(const Port& value) {
  for (size_t i = 0; i < made_.size(); ++i) {
    if (Py_REFCNT(made_[i].ptr()) == 1) {  // held by made_ alone
      pending_ = i;
      return made_[i];
    }
  }
  if (made_.size() == kKept) made_.erase(made_.begin());
  made_.push_back(aligned_empty(value.dtype, value.shape));
  pending_ = made_.size() - 1;
  return made_.back();
}

std::unique_ptr<Step> ref_store_step(const Plan& plan, int ref, int source, Port value,
                                     std::shared_ptr<StoreArrays> arrays, bool taken,
                                     std::string label) {
  plan.check_slot(ref, ValueKind::Ref, 0, label + " (cell)");
  plan.check_slot(source, ValueKind::Tensor, storage_bytes(value), label + " (value)");
  if (!arrays) throw Error(ErrorKind::Type, label + ": no StoreArrays");
  return std::make_unique<RefStoreStep>(ref, source, std::move(value), std::move(arrays), taken,
                                        std::move(label));
}

std::unique_ptr<Step> acquire_step(Plan& plan, int target, Port value,
                                   std::shared_ptr<StoreArrays> arrays, std::string label) {
  plan.give_memory(target, storage_bytes(value), label + " (value)");
  if (!arrays) throw Error(ErrorKind::Type, label + ": no StoreArrays");
  return std::make_unique<AcquireStep>(target, std::move(value), std::move(arrays),
                                       std::move(label));
}

namespace {

// `slots` of `plan` match the ports of `sub` one to one (`what`: "operand", "output").
void check_ports(const Plan& plan, const std::vector<int>& slots, const std::vector<Port>& ports,
                 const std::string& label, const char* what) {
  if (slots.size() != ports.size()) {
    throw Error(ErrorKind::Type, label + ": " + std::to_string(slots.size()) + " " + what +
                                     "(s) for a region of " + std::to_string(ports.size()));
  }
  for (size_t i = 0; i < slots.size(); ++i) {
    plan.check_port(slots[i], ports[i], label + " (" + what + " " + std::to_string(i) + ")");
  }
}

// A region's outputs are one predicate: a bool (one byte).
void check_predicate(const std::vector<Port>& ports, const std::string& label) {
  if (ports.size() != 1 || ports[0].kind != ValueKind::Tensor || storage_bytes(ports[0]) != 1) {
    throw Error(ErrorKind::Type, label + ": the cond region must return one bool");
  }
}

size_t port_bytes(const Port& port) {
  return port.kind == ValueKind::Tensor ? storage_bytes(port) : 0;
}

}  // namespace

std::unique_ptr<Step> if_step(const Plan& plan, int predicate, std::vector<int> operands,
                              std::vector<int> outputs, std::shared_ptr<Plan> then_plan,
                              std::shared_ptr<Plan> else_plan, std::string label) {
  if (!then_plan || !else_plan) throw Error(ErrorKind::Type, label + ": a branch is missing");
  plan.check_slot(predicate, ValueKind::Tensor, 1, label + " (predicate)");
  for (const Plan* branch : {then_plan.get(), else_plan.get()}) {
    check_ports(plan, operands, branch->inputs(), label, "operand");
    check_ports(plan, outputs, branch->outputs(), label, "output");
  }
  return std::make_unique<IfStep>(predicate, std::move(operands), std::move(outputs),
                                  std::move(then_plan), std::move(else_plan), std::move(label));
}

std::unique_ptr<Step> while_step(const Plan& plan, std::vector<int> operands,
                                 std::vector<int> outputs, std::vector<ValueKind> kinds,
                                 std::vector<size_t> nbytes, int scratch,
                                 std::vector<int64_t> scratch_offsets,
                                 std::shared_ptr<Plan> cond, std::shared_ptr<Plan> body,
                                 int64_t max_iterations, std::string label) {
  if (!cond || !body) throw Error(ErrorKind::Type, label + ": a region is missing");
  const size_t n = operands.size();
  if (kinds.size() != n || nbytes.size() != n || scratch_offsets.size() != n) {
    throw Error(ErrorKind::Type, label + ": one kind, size and scratch offset per carried value");
  }
  check_ports(plan, operands, body->inputs(), label, "operand");
  check_ports(plan, outputs, body->outputs(), label, "output");
  check_ports(plan, operands, cond->inputs(), label, "operand");
  check_predicate(cond->outputs(), label);
  size_t scratch_bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    const Port& port = body->outputs()[i];
    const size_t bytes = port_bytes(port);
    const Port& next = body->inputs()[i];  // what the next iteration reads it as
    if (kinds[i] != port.kind || nbytes[i] != bytes || scratch_offsets[i] < 0 ||
        next.kind != port.kind || port_bytes(next) != bytes) {
      throw Error(ErrorKind::Type, label + ": carried value " + std::to_string(i) +
                                       " is described unlike the body's output");
    }
    if (kinds[i] == ValueKind::Tensor) {
      scratch_bytes = std::max(scratch_bytes, static_cast<size_t>(scratch_offsets[i]) + bytes);
    }
  }
  if (scratch_bytes != 0 || scratch >= 0) {
    plan.check_room(scratch, scratch_bytes, label + " (scratch)");
  }
  return std::make_unique<WhileStep>(std::move(operands), std::move(outputs), std::move(kinds),
                                     std::move(nbytes), scratch, std::move(scratch_offsets),
                                     std::move(cond), std::move(body), max_iterations,
                                     std::move(label));
}

}  // namespace mskernel_cpu
