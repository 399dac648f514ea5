// The steps of a plan: a kernel call, a copy, ref_load/ref_store (the only steps that touch
// Python objects, under the GIL), and If/While running sub-plans compiled from regions.
#include <cstring>

#include "plan.hpp"

namespace mskernel_cpu {
namespace {

size_t storage_bytes(const Port& port) {
  size_t n = static_cast<size_t>(port.dtype.itemsize());
  for (int64_t d : port.shape) n *= static_cast<size_t>(d);
  return n;
}

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

class RefLoadStep : public Step {
 public:
  RefLoadStep(py::object backend, int ref, int target, Port value, std::string label)
      : Step(std::move(label)), backend_(std::move(backend)), ref_(ref), target_(target),
        value_(std::move(value)), nbytes_(storage_bytes(value_)) {}

  void run(std::vector<Slot>& slots) override {
    py::gil_scoped_acquire gil;
    const py::handle cell(slots[ref_].cell);
    const py::object value = cell.attr("value");
    if (!py::isinstance(value, runtime_types().device_array) ||
        !py::object(value.attr("backend")).is(backend_)) {
      throw Error(ErrorKind::Type, "the ref cell holds " + std::string(py::repr(value)) +
                                       ", not a DeviceArray of this cpu backend");
    }
    py::array data = py::array::ensure(value.attr("data"), py::array::c_style);
    if (!data || !data.dtype().equal(value_.dtype) ||
        static_cast<size_t>(data.nbytes()) != nbytes_) {
      throw Error(ErrorKind::Type, "the ref cell's array does not match its type");
    }
    if (nbytes_ != 0) std::memcpy(slots[target_].data, data.data(), nbytes_);
  }

 private:
  py::object backend_;
  int ref_, target_;
  Port value_;
  size_t nbytes_;
};

// A store puts a new array in the cell, so arrays read from it earlier never change.
class RefStoreStep : public Step {
 public:
  RefStoreStep(int ref, int source, Port value, std::string label)
      : Step(std::move(label)), ref_(ref), source_(source), value_(std::move(value)),
        nbytes_(storage_bytes(value_)) {}

  void run(std::vector<Slot>& slots) override {
    py::gil_scoped_acquire gil;
    py::array array = aligned_empty(value_.dtype, value_.shape);
    if (nbytes_ != 0) std::memcpy(array.mutable_data(), slots[source_].data, nbytes_);
    py::handle(slots[ref_].cell).attr("value") = value_.wrap(array);
  }

 private:
  int ref_, source_;
  Port value_;
  size_t nbytes_;
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

std::unique_ptr<Step> kernel_step(std::shared_ptr<PreparedKernel> kernel, std::vector<int> inputs,
                                  std::vector<int> outputs, int workspace, std::string label) {
  return std::make_unique<KernelStep>(std::move(kernel), std::move(inputs), std::move(outputs),
                                      workspace, std::move(label));
}

std::unique_ptr<Step> copy_step(int source, int target, size_t nbytes, std::string label) {
  return std::make_unique<CopyStep>(source, target, nbytes, std::move(label));
}

std::unique_ptr<Step> ref_load_step(const Plan& plan, int ref, int target, Port value,
                                    std::string label) {
  return std::make_unique<RefLoadStep>(plan.backend(), ref, target, std::move(value),
                                       std::move(label));
}

std::unique_ptr<Step> ref_store_step(int ref, int source, Port value, std::string label) {
  return std::make_unique<RefStoreStep>(ref, source, std::move(value), std::move(label));
}

std::unique_ptr<Step> if_step(int predicate, std::vector<int> operands, std::vector<int> outputs,
                              std::shared_ptr<Plan> then_plan, std::shared_ptr<Plan> else_plan,
                              std::string label) {
  return std::make_unique<IfStep>(predicate, std::move(operands), std::move(outputs),
                                  std::move(then_plan), std::move(else_plan), std::move(label));
}

std::unique_ptr<Step> while_step(std::vector<int> operands, std::vector<int> outputs,
                                 std::vector<ValueKind> kinds, std::vector<size_t> nbytes,
                                 int scratch, std::vector<int64_t> scratch_offsets,
                                 std::shared_ptr<Plan> cond, std::shared_ptr<Plan> body,
                                 int64_t max_iterations, std::string label) {
  return std::make_unique<WhileStep>(std::move(operands), std::move(outputs), std::move(kinds),
                                     std::move(nbytes), scratch, std::move(scratch_offsets),
                                     std::move(cond), std::move(body), max_iterations,
                                     std::move(label));
}

}  // namespace mskernel_cpu
