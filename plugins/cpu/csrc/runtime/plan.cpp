// Plan: binding arguments, running the steps, returning DeviceArrays.
#include "plan.hpp"

#include <cstdlib>
#include <cstring>

namespace mskernel_cpu {

constexpr size_t kAlignment = 64;

ValueKind parse_kind(const std::string& kind) {
  if (kind == "tensor") return ValueKind::Tensor;
  if (kind == "ref") return ValueKind::Ref;
  if (kind == "token") return ValueKind::Token;
  throw Error(ErrorKind::Value, "unknown value kind '" + kind + "'");
}

RuntimeTypes& runtime_types() {
  static RuntimeTypes* types = new RuntimeTypes();  // leaked: outlives the interpreter's teardown
  return *types;
}

py::array aligned_empty(const py::dtype& dtype, const std::vector<int64_t>& shape) {
  size_t nbytes = static_cast<size_t>(dtype.itemsize());
  for (int64_t d : shape) nbytes *= static_cast<size_t>(d);
  const size_t rounded = (std::max<size_t>(nbytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  void* data = std::aligned_alloc(kAlignment, rounded);
  if (data == nullptr) throw std::bad_alloc();
  py::capsule owner(data, [](void* p) { std::free(p); });
  return py::array(dtype, std::vector<py::ssize_t>(shape.begin(), shape.end()), data, owner);
}

static void* allocate_arena(int64_t bytes) {
  const size_t rounded =
      (std::max<size_t>(static_cast<size_t>(bytes), 1) + kAlignment - 1) / kAlignment * kAlignment;
  void* data = std::aligned_alloc(kAlignment, rounded);
  if (data == nullptr) throw std::bad_alloc();
  return data;
}

Plan::Plan(std::string name, int64_t arena_bytes, py::object backend)
    : name_(std::move(name)),
      backend_(std::move(backend)),
      arena_(static_cast<char*>(allocate_arena(arena_bytes)), std::free) {}

int Plan::add_slot(int64_t arena_offset) {
  Slot slot;
  if (arena_offset >= 0) slot.data = arena_.get() + arena_offset;
  slots_.push_back(slot);
  slot_offsets_.push_back(arena_offset);
  return static_cast<int>(slots_.size()) - 1;
}

int Plan::add_constant(py::array data) {
  Slot slot;
  slot.data = data.mutable_data();
  constants_.push_back(std::move(data));
  slots_.push_back(slot);
  slot_offsets_.push_back(-1);
  return static_cast<int>(slots_.size()) - 1;
}

void Plan::execute(const Slot* inputs, Slot* outputs) {
  for (size_t i = 0; i < inputs_.size(); ++i) slots_[inputs_[i].slot] = inputs[i];
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i].kind == ValueKind::Tensor) slots_[outputs_[i].slot].data = outputs[i].data;
  }
  if (profiling_) {
    for (size_t i = 0; i < steps_.size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      run_step(*steps_[i]);
      step_time_[i] += std::chrono::steady_clock::now() - start;
      ++step_calls_[i];
    }
  } else {
    for (const std::unique_ptr<Step>& step : steps_) run_step(*step);
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i].kind == ValueKind::Ref) outputs[i].cell = slots_[outputs_[i].slot].cell;
  }
}

void Plan::run_step(Step& step) {
  try {
    step.run(slots_);
  } catch (const py::error_already_set&) {
    throw;
  } catch (const Error& error) {
    throw Error(error.kind(), step.label() + ": " + error.what());
  } catch (const std::exception& error) {
    throw Error(ErrorKind::Runtime, step.label() + ": " + error.what());
  }
}

void Plan::set_profiling(bool on) {
  std::lock_guard<std::mutex> lock(running_);
  profiling_ = on;
  if (on) {
    step_time_.assign(steps_.size(), std::chrono::steady_clock::duration::zero());
    step_calls_.assign(steps_.size(), 0);
  }
}

std::vector<Plan::StepTime> Plan::step_times() const {
  std::vector<StepTime> times;
  for (size_t i = 0; i < step_time_.size(); ++i) {
    times.push_back({steps_[i]->label(),
                     std::chrono::duration<double>(step_time_[i]).count(), step_calls_[i]});
  }
  return times;
}

static std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

void* Plan::tensor_argument(const py::handle& arg, size_t index, const Port& port,
                            std::vector<py::object>& keep) const {
  const RuntimeTypes& types = runtime_types();
  if (!py::isinstance(arg, types.device_array) || !py::object(arg.attr("backend")).is(backend_)) {
    throw Error(ErrorKind::Type, "input " + std::to_string(index) + " of graph @" + name_ +
                                     " must be a DeviceArray of this cpu backend, got " +
                                     std::string(py::repr(arg)));
  }
  py::object data = arg.attr("data");
  if (!py::isinstance<py::array>(data)) {
    throw Error(ErrorKind::Type, "input " + std::to_string(index) + " of graph @" + name_ +
                                     ": DeviceArray.data must be a NumPy array");
  }
  py::array array = py::reinterpret_borrow<py::array>(data);
  const bool same_shape =
      static_cast<size_t>(array.ndim()) == port.shape.size() &&
      std::equal(port.shape.begin(), port.shape.end(), array.shape());
  if (!array.dtype().equal(port.dtype) || !same_shape) {
    throw Error(ErrorKind::Type, "input " + std::to_string(index) + " of graph @" + name_ +
                                     " expects storage " + std::string(py::str(port.dtype)) +
                                     " of shape " + shape_text(port.shape) +
                                     ", got " + std::string(py::str(array.dtype())) + " of shape " +
                                     std::string(py::str(data.attr("shape"))));
  }
  if (!(array.flags() & py::array::c_style)) {  // a strided view: read a contiguous copy
    array = py::array::ensure(array, py::array::c_style);
    keep.push_back(array);
  }
  return const_cast<void*>(array.data());
}

py::list Plan::run(const py::sequence& args) {
  if (args.size() != inputs_.size()) {
    throw Error("graph @" + name_ + " takes " + std::to_string(inputs_.size()) +
                " inputs, got " + std::to_string(args.size()));
  }
  std::vector<Slot> in(inputs_.size());
  std::vector<py::object> keep;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const py::handle arg = args[i];
    if (inputs_[i].kind == ValueKind::Tensor) {
      in[i].data = tensor_argument(arg, i, inputs_[i], keep);
    } else if (inputs_[i].kind == ValueKind::Ref) {
      in[i].cell = arg.ptr();
    }
  }
  std::vector<Slot> out(outputs_.size());
  std::vector<py::array> arrays(outputs_.size());
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i].kind == ValueKind::Tensor) {
      arrays[i] = aligned_empty(outputs_[i].dtype, outputs_[i].shape);
      out[i].data = arrays[i].mutable_data();
    }
  }
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(running_);
    execute(in.data(), out.data());
  }
  py::list results(outputs_.size());
  for (size_t i = 0; i < outputs_.size(); ++i) {
    switch (outputs_[i].kind) {
      case ValueKind::Tensor:
        results[i] = outputs_[i].wrap(arrays[i]);
        break;
      case ValueKind::Ref:
        results[i] = py::reinterpret_borrow<py::object>(out[i].cell);
        break;
      case ValueKind::Token:
        results[i] = runtime_types().token;
        break;
    }
  }
  return results;
}

std::string Plan::describe(const std::string& indent) const {
  std::string text;
  for (size_t i = 0; i < steps_.size(); ++i) {
    text += indent + std::to_string(i) + ". " + steps_[i]->describe(indent) + "\n";
  }
  return text;
}

}  // namespace mskernel_cpu
