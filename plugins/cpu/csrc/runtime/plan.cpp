// Plan: binding arguments, running the steps, returning DeviceArrays.
#include "plan.hpp"

#include <cstdint>
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

size_t storage_bytes(const Port& port) {
  size_t n = static_cast<size_t>(port.dtype.itemsize());
  for (int64_t d : port.shape) n *= static_cast<size_t>(d);
  return n;
}

static int64_t checked_arena_bytes(int64_t bytes) {
  if (bytes < 0) throw Error(ErrorKind::Value, "a plan's arena cannot have negative size");
  return bytes;
}

Plan::Plan(std::string name, int64_t arena_bytes, py::object backend)
    : name_(std::move(name)),
      backend_(std::move(backend)),
      arena_bytes_(checked_arena_bytes(arena_bytes)),
      arena_(static_cast<char*>(allocate_arena(arena_bytes)), std::free) {}

int Plan::add_slot(int64_t arena_offset, ValueKind kind, size_t nbytes) {
  const std::string what = "slot " + std::to_string(slots_.size()) + " of @" + name_;
  Slot slot;
  if (arena_offset >= 0) {
    if (kind != ValueKind::Tensor || arena_offset % static_cast<int64_t>(kAlignment) != 0 ||
        nbytes > static_cast<size_t>(arena_bytes_) ||
        static_cast<size_t>(arena_offset) > static_cast<size_t>(arena_bytes_) - nbytes) {
      throw Error(ErrorKind::Value, what + ": " + std::to_string(nbytes) + " bytes at arena "
                                        "offset " + std::to_string(arena_offset) + " do not "
                                        "fit, aligned, in the arena of " +
                                        std::to_string(arena_bytes_) + " bytes");
    }
    slot.data = arena_.get() + arena_offset;
  } else if (arena_offset != -1) {
    throw Error(ErrorKind::Value, what + ": an arena offset is >= 0, or -1 for a bound slot");
  }
  slots_.push_back(slot);
  slot_offsets_.push_back(arena_offset);
  slot_info_.push_back(SlotInfo{kind, kind == ValueKind::Tensor ? nbytes : 0,
                                arena_offset >= 0});
  return static_cast<int>(slots_.size()) - 1;
}

int Plan::add_constant(py::array data) {
  if (!(data.flags() & py::array::c_style) ||
      reinterpret_cast<uintptr_t>(data.data()) % kAlignment != 0) {
    throw Error(ErrorKind::Value, "a constant of @" + name_ + " must be C-contiguous and " +
                                      std::to_string(kAlignment) + "-byte aligned");
  }
  Slot slot;
  slot.data = data.mutable_data();
  slot_info_.push_back(SlotInfo{ValueKind::Tensor, static_cast<size_t>(data.nbytes()), true});
  constants_.push_back(std::move(data));
  slots_.push_back(slot);
  slot_offsets_.push_back(-1);
  return static_cast<int>(slots_.size()) - 1;
}

const SlotInfo& Plan::info(int slot, const std::string& what) const {
  if (slot < 0 || static_cast<size_t>(slot) >= slot_info_.size()) {
    throw Error(ErrorKind::Index, what + ": slot " + std::to_string(slot) + " is not a slot of @" +
                                      name_ + " (it has " + std::to_string(slot_info_.size()) +
                                      ")");
  }
  return slot_info_[slot];
}

static const char* kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::Tensor: return "tensor";
    case ValueKind::Ref: return "ref";
    case ValueKind::Token: return "token";
  }
  return "?";
}

void Plan::check_slot(int slot, ValueKind kind, size_t nbytes, const std::string& what) const {
  const SlotInfo& s = info(slot, what);
  if (s.kind != kind) {
    throw Error(ErrorKind::Type, what + ": slot " + std::to_string(slot) + " holds a " +
                                     kind_name(s.kind) + ", not a " + kind_name(kind));
  }
  if (kind != ValueKind::Tensor) return;
  if (s.nbytes != nbytes) {
    throw Error(ErrorKind::Value, what + ": slot " + std::to_string(slot) + " holds " +
                                      std::to_string(s.nbytes) + " bytes, not " +
                                      std::to_string(nbytes));
  }
  if (!s.has_memory) {
    throw Error(ErrorKind::Value, what + ": slot " + std::to_string(slot) + " has no memory "
                                      "(no arena offset, port or earlier step gives it some)");
  }
}

void Plan::check_room(int slot, size_t nbytes, const std::string& what) const {
  const SlotInfo& s = info(slot, what);
  if (s.kind != ValueKind::Tensor || !s.has_memory || s.nbytes < nbytes) {
    throw Error(ErrorKind::Value, what + ": slot " + std::to_string(slot) + " has no room for " +
                                      std::to_string(nbytes) + " bytes");
  }
}

void Plan::check_port(int slot, const Port& port, const std::string& what) const {
  check_slot(slot, port.kind, port.kind == ValueKind::Tensor ? storage_bytes(port) : 0, what);
}

void Plan::give_memory(int slot, size_t nbytes, const std::string& what) {
  const SlotInfo& s = info(slot, what);
  if (s.kind != ValueKind::Tensor || s.nbytes != nbytes) {
    throw Error(ErrorKind::Value, what + ": slot " + std::to_string(slot) + " is no tensor of " +
                                      std::to_string(nbytes) + " bytes");
  }
  slot_info_[slot].has_memory = true;
}

void Plan::bind_ports(const std::vector<Port>& ports, const char* what) {
  for (size_t i = 0; i < ports.size(); ++i) {
    const std::string where = std::string(what) + " " + std::to_string(i) + " of @" + name_;
    const SlotInfo& s = info(ports[i].slot, where);
    if (s.kind != ports[i].kind ||
        (s.kind == ValueKind::Tensor && s.nbytes != storage_bytes(ports[i]))) {
      throw Error(ErrorKind::Type, where + ": its slot " + std::to_string(ports[i].slot) +
                                       " holds another kind or size of value");
    }
    if (s.kind == ValueKind::Tensor) slot_info_[ports[i].slot].has_memory = true;
  }
}

void Plan::set_inputs(std::vector<Port> ports) {
  bind_ports(ports, "input");
  inputs_ = std::move(ports);
}

void Plan::set_outputs(std::vector<Port> ports) {
  bind_ports(ports, "output");
  outputs_ = std::move(ports);
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
