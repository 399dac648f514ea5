// The Python extension mskernel_cpu._native: kernel preparation, plans, aligned arrays,
// bfloat16 storage conversion, threads and library information.
#include <cblas.h>
#include <pybind11/stl.h>

#include "mskernel_cpu/fused.hpp"
#include "plan.hpp"

namespace mskernel_cpu {
namespace {

// ---- conversions from Python ------------------------------------------------------------

TensorInfo tensor_info(const py::handle& spec) {
  const auto pair = spec.cast<std::pair<std::string, std::vector<int64_t>>>();
  return TensorInfo{parse_dtype(pair.first), pair.second};
}

std::vector<TensorInfo> tensor_infos(const py::list& specs) {
  std::vector<TensorInfo> out;
  for (const py::handle& spec : specs) out.push_back(tensor_info(spec));
  return out;
}

// An int attribute as int64; one in [2**63, 2**64] (a uint64 seed or bound; an exclusive
// bound of the whole uint64 range) modulo 2**64, as kernels that read it as uint64 expect.
int64_t int_attr(const std::string& name, const py::handle& value) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow == 0) return v;
  const py::object two_to_64 = py::int_(1).attr("__lshift__")(64);
  const py::object wrapped = py::reinterpret_borrow<py::object>(value) - two_to_64;
  if (overflow > 0 && wrapped.cast<py::int_>() <= py::int_(0)) {
    return static_cast<int64_t>(PyLong_AsLongLong(wrapped.ptr()));
  }
  throw Error(ErrorKind::Value, "attribute '" + name + "' (" + std::string(py::repr(value)) +
                                    ") does not fit in 64 bits");
}

AttrValue attr_value(const std::string& name, const py::handle& value) {
  if (value.is_none()) return std::monostate{};
  if (PyBool_Check(value.ptr())) return value.cast<bool>();
  if (PyLong_Check(value.ptr())) return int_attr(name, value);
  if (runtime_types().dtype && py::isinstance(value, runtime_types().dtype)) {
    return py::str(value.attr("name")).cast<std::string>();
  }
  if (PyFloat_Check(value.ptr())) return value.cast<double>();
  if (PyUnicode_Check(value.ptr())) return value.cast<std::string>();
  if (py::isinstance<py::array>(value)) {
    const py::array array = py::array::ensure(value, py::array::c_style);
    const auto* bytes = static_cast<const unsigned char*>(array.data());
    return ArrayAttr{parse_dtype(py::str(array.dtype().attr("name"))),
                     std::vector<int64_t>(array.shape(), array.shape() + array.ndim()),
                     std::vector<unsigned char>(bytes, bytes + array.nbytes())};
  }
  if (py::isinstance<py::tuple>(value) || py::isinstance<py::list>(value)) {
    const py::sequence items = py::reinterpret_borrow<py::sequence>(value);
    bool all_ints = true, all_numbers = true;
    for (const py::handle& item : items) {
      const bool is_int = PyLong_Check(item.ptr()) && !PyBool_Check(item.ptr());
      all_ints = all_ints && is_int;
      all_numbers = all_numbers && (is_int || PyFloat_Check(item.ptr()));
    }
    if (all_ints) {
      std::vector<int64_t> ints;
      for (const py::handle& item : items) ints.push_back(int_attr(name, item));
      return ints;
    }
    if (all_numbers) return items.cast<std::vector<double>>();
  }
  throw Error(ErrorKind::Type, "attribute '" + name + "' (" +
                                   std::string(py::repr(value)) +
                                   ") has no representation in the cpu kernel ABI");
}

Attrs attrs_from(const py::dict& attrs) {
  Attrs out;
  for (const auto& item : attrs) {
    const std::string name = item.first.cast<std::string>();
    out.set(name, attr_value(name, item.second));
  }
  return out;
}

std::shared_ptr<PreparedKernel> prepare(const std::string& op, const py::list& inputs,
                                        const py::list& outputs, const py::dict& attrs) {
  const py::object& check = runtime_types().type_check;
  if (!check) {
    throw Error("mskernel_cpu: load the kernels with mskernel_cpu.native.load(), which "
                "installs the type check every kernel is prepared behind");
  }
  check(op, inputs, outputs, attrs);  // raises (naming the op) unless the op's rule agrees
  const std::vector<TensorInfo> in = tensor_infos(inputs), out = tensor_infos(outputs);
  const Attrs packed = attrs_from(attrs);
  KernelContext ctx{op, in, out, packed};
  auto prepared = std::make_shared<PreparedKernel>();
  prepared->op = op;
  prepared->kernel = prepare_kernel(ctx);
  prepared->workspace_bytes = ctx.workspace_bytes;
  prepared->detail = ctx.detail;
  for (const TensorInfo& t : in) prepared->input_bytes.push_back(t.nbytes());
  for (const TensorInfo& t : out) prepared->output_bytes.push_back(t.nbytes());
  return prepared;
}

// A port's shape: non-negative dims whose storage bytes are addressable.
std::vector<int64_t> port_shape(const py::handle& shape, const py::dtype& dtype) {
  std::vector<int64_t> dims = shape.cast<std::vector<int64_t>>();
  check_extent("plan", dims, static_cast<size_t>(dtype.itemsize()), "a value");
  return dims;
}

std::vector<Port> ports(const py::list& specs) {
  // (slot, kind, storage dtype or None, shape, wrap or None)
  std::vector<Port> out;
  for (const py::handle& spec : specs) {
    const py::tuple t = spec.cast<py::tuple>();
    if (t.size() != 5) {
      throw Error(ErrorKind::Type, "a port is (slot, kind, dtype, shape, wrap)");
    }
    const py::dtype dtype = t[2].is_none() ? py::dtype("uint8") : py::dtype::from_args(t[2]);
    out.push_back(Port{t[0].cast<int>(), parse_kind(t[1].cast<std::string>()), dtype,
                       port_shape(t[3], dtype), py::reinterpret_borrow<py::object>(t[4])});
  }
  return out;
}

Port value_port(const py::object& dtype, const std::vector<int64_t>& shape,
                const py::object& wrap) {
  const py::dtype storage = py::dtype::from_args(dtype);
  return Port{-1, ValueKind::Tensor, storage, port_shape(py::cast(shape), storage), wrap};
}

// ---- bfloat16 storage -------------------------------------------------------------------

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

py::array bfloat16_from_float32(const FloatArray& x) {
  py::array out = aligned_empty(py::dtype("uint16"),
                                std::vector<int64_t>(x.shape(), x.shape() + x.ndim()));
  const float* src = x.data();
  auto* dst = static_cast<bf16_t*>(out.mutable_data());
  const int64_t n = x.size();
  py::gil_scoped_release release;
  parallel_for(n, 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = to_bf16(src[i]);
  });
  return out;
}

py::array bfloat16_to_float32(const py::array_t<uint16_t, py::array::c_style>& bits) {
  py::array_t<float> out(std::vector<py::ssize_t>(bits.shape(), bits.shape() + bits.ndim()));
  const auto* src = reinterpret_cast<const bf16_t*>(bits.data());
  float* dst = out.mutable_data();
  const int64_t n = bits.size();
  py::gil_scoped_release release;
  parallel_for(n, 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = to_float(src[i]);
  });
  return out;
}

// ---- errors -----------------------------------------------------------------------------

void translate(std::exception_ptr error) {
  try {
    if (error) std::rethrow_exception(error);
  } catch (const Error& e) {
    PyObject* type = PyExc_RuntimeError;
    switch (e.kind()) {
      case ErrorKind::ZeroDivision: type = PyExc_ZeroDivisionError; break;
      case ErrorKind::Value: type = PyExc_ValueError; break;
      case ErrorKind::Index: type = PyExc_IndexError; break;
      case ErrorKind::Type: type = PyExc_TypeError; break;
      case ErrorKind::Runtime: {
        static py::object* mskernel_error = new py::object(
            py::module_::import("mskernel.errors").attr("MskernelError"));
        type = mskernel_error->ptr();
        break;
      }
    }
    PyErr_SetString(type, e.what());
  }
}

std::string compiled_isa() {
#if defined(__AVX512F__)
  return "x86-64-v4";
#elif defined(__AVX2__) && defined(__FMA__)
  return "x86-64-v3";
#elif defined(__x86_64__)
  return "x86-64";
#else
  return "generic";
#endif
}

}  // namespace
}  // namespace mskernel_cpu

PYBIND11_MODULE(_native, m) {
  namespace mk = mskernel_cpu;
  namespace py = pybind11;
  m.doc() = "Kernels and compiled plans of the mskernel cpu backend";

  const auto& conflicts = mk::KernelRegistry::instance().conflicts();
  if (!conflicts.empty()) {
    std::string names;
    for (const auto& op : conflicts) names += (names.empty() ? "" : ", ") + op;
    throw py::import_error("mskernel_cpu: more than one kernel registered for: " + names);
  }
  scipy_openblas_set_num_threads(1);  // gemm is split over the backend's own pool
  py::register_exception_translator(&mk::translate);

  py::class_<mk::PreparedKernel, std::shared_ptr<mk::PreparedKernel>>(m, "PreparedKernel")
      .def_readonly("op", &mk::PreparedKernel::op)
      .def_readonly("workspace_bytes", &mk::PreparedKernel::workspace_bytes)
      .def_readonly("detail", &mk::PreparedKernel::detail);

  m.def("prepare", &mk::prepare, py::arg("op"), py::arg("inputs"), py::arg("outputs"),
        py::arg("attrs"),
        "Run the kernel factory of `op` for inputs/outputs given as (dtype name, shape) and "
        "bound attributes, after the type check (set_type_check) has accepted them; returns "
        "a PreparedKernel");

  py::class_<mk::StoreArrays, std::shared_ptr<mk::StoreArrays>>(
      m, "StoreArrays", "The arrays one ref_store step puts in its cell, recycled")
      .def(py::init<>());

  py::class_<mk::Plan, std::shared_ptr<mk::Plan>>(m, "Plan")
      .def(py::init<std::string, int64_t, py::object>(), py::arg("name"),
           py::arg("arena_bytes"), py::arg("backend"))
      .def("add_slot",
           [](mk::Plan& p, int64_t arena_offset, const std::string& kind, size_t nbytes) {
             return p.add_slot(arena_offset, mk::parse_kind(kind), nbytes);
           },
           py::arg("arena_offset"), py::arg("kind"), py::arg("nbytes"),
           "A slot of `kind` ('tensor', 'ref', 'token') holding `nbytes` (tensors): in the "
           "arena at `arena_offset`, or bound when the plan runs (-1)")
      .def("add_constant", &mk::Plan::add_constant, py::arg("data"),
           "A slot holding `data` (C-contiguous, aligned device storage) at every run")
      .def("set_inputs",
           [](mk::Plan& p, const py::list& specs) { p.set_inputs(mk::ports(specs)); })
      .def("set_outputs",
           [](mk::Plan& p, const py::list& specs) { p.set_outputs(mk::ports(specs)); })
      .def("add_kernel",
           [](mk::Plan& p, std::shared_ptr<mk::PreparedKernel> kernel, std::vector<int> inputs,
              std::vector<int> outputs, int workspace, std::string label) {
             p.add_step(mk::kernel_step(p, std::move(kernel), std::move(inputs),
                                        std::move(outputs), workspace, std::move(label)));
           })
      .def("add_copy",
           [](mk::Plan& p, int source, int target, size_t nbytes, std::string label) {
             p.add_step(mk::copy_step(p, source, target, nbytes, std::move(label)));
           })
      .def("add_ref_load",
           [](mk::Plan& p, int ref, int target, py::object dtype, std::vector<int64_t> shape,
              bool alias, std::string label) {
             p.add_step(mk::ref_load_step(p, ref, target,
                                          mk::value_port(dtype, shape, py::none()), alias,
                                          std::move(label)));
           })
      .def("add_ref_store",
           [](mk::Plan& p, int ref, int source, py::object dtype, std::vector<int64_t> shape,
              py::object wrap, std::shared_ptr<mk::StoreArrays> arrays, bool taken,
              std::string label) {
             p.add_step(mk::ref_store_step(p, ref, source, mk::value_port(dtype, shape, wrap),
                                           std::move(arrays), taken, std::move(label)));
           })
      .def("add_acquire",
           [](mk::Plan& p, int target, py::object dtype, std::vector<int64_t> shape,
              std::shared_ptr<mk::StoreArrays> arrays, std::string label) {
             p.add_step(mk::acquire_step(p, target, mk::value_port(dtype, shape, py::none()),
                                         std::move(arrays), std::move(label)));
           })
      .def("add_if",
           [](mk::Plan& p, int predicate, std::vector<int> operands, std::vector<int> outputs,
              std::shared_ptr<mk::Plan> then_plan, std::shared_ptr<mk::Plan> else_plan,
              std::string label) {
             p.add_step(mk::if_step(p, predicate, std::move(operands), std::move(outputs),
                                    std::move(then_plan), std::move(else_plan),
                                    std::move(label)));
           })
      .def("add_while",
           [](mk::Plan& p, std::vector<int> operands, std::vector<int> outputs,
              std::vector<std::string> kinds, std::vector<size_t> nbytes, int scratch,
              std::vector<int64_t> scratch_offsets, std::shared_ptr<mk::Plan> cond,
              std::shared_ptr<mk::Plan> body, int64_t max_iterations, std::string label) {
             std::vector<mk::ValueKind> parsed;
             for (const auto& kind : kinds) parsed.push_back(mk::parse_kind(kind));
             p.add_step(mk::while_step(p, std::move(operands), std::move(outputs), std::move(parsed),
                                       std::move(nbytes), scratch, std::move(scratch_offsets),
                                       std::move(cond), std::move(body), max_iterations,
                                       std::move(label)));
           })
      .def("run", &mk::Plan::run, py::arg("args"),
           "Run every step on `args` (DeviceArrays, RefCells, TOKEN_VALUE); return the outputs")
      .def("describe", [](const mk::Plan& p) { return p.describe(""); })
      .def("set_profiling", &mk::Plan::set_profiling, py::arg("on"),
           "Time every step of the following runs (on clears the counters), or stop timing")
      .def_property_readonly("profiling", &mk::Plan::profiling)
      .def("step_times",
           [](const mk::Plan& p) {
             py::list rows;
             for (const auto& t : p.step_times()) {
               rows.append(py::make_tuple(t.label, t.seconds, t.calls));
             }
             return rows;
           },
           "(label, seconds, calls) of every step since profiling was turned on")
      .def_property_readonly("name", &mk::Plan::name)
      .def_property_readonly("num_steps", &mk::Plan::num_steps);

  m.def("set_runtime_types", [](py::object device_array, py::object token, py::object dtype) {
    mk::runtime_types().device_array = std::move(device_array);
    mk::runtime_types().token = std::move(token);
    mk::runtime_types().dtype = std::move(dtype);
  });
  m.def("set_type_check", [](py::object check) { mk::runtime_types().type_check = std::move(check); },
        "Install check(op, inputs, outputs, attrs), run by prepare before any kernel factory");
  m.def("kernel_table", [] {
    std::vector<std::pair<std::string, std::vector<std::string>>> table;
    for (const mk::KernelEntry& entry : mk::KernelRegistry::instance().entries()) {
      std::vector<std::string> names;
      for (int d = 0; d < mk::kNumDTypes; ++d) {
        const auto dt = static_cast<mk::DType>(d);
        if (mk::contains(entry.dtypes, dt)) names.emplace_back(mk::dtype_name(dt));
      }
      table.emplace_back(entry.op, std::move(names));
    }
    return table;
  }, "(op name, [dtype names]) for every registered kernel, sorted by op");
  m.def("fusable_ops", &mk::fused::fusable_ops,
        "The elementwise ops the cpu.fused_elementwise kernel can run, sorted");
  m.def("aligned_empty", [](py::object dtype, const py::handle& shape) {
    const py::dtype storage = py::dtype::from_args(dtype);
    return mk::aligned_empty(storage, mk::port_shape(shape, storage));
  }, py::arg("dtype"), py::arg("shape"));
  m.def("bfloat16_from_float32", &mk::bfloat16_from_float32,
        "uint16 bfloat16 bit patterns (rounded to nearest even) in a 64-byte aligned array");
  m.def("bfloat16_to_float32", &mk::bfloat16_to_float32);
  m.def("num_threads", &mk::num_threads);
  m.def("set_num_threads", [](int n) {
    if (n < 1) throw mk::Error(mk::ErrorKind::Value, "the number of threads must be at least 1");
    mk::set_num_threads(n);
  });
  m.def("blas_info", [] {
    return std::string(scipy_openblas_get_config()) + " (" + scipy_openblas_get_corename() + ")";
  });
  m.def("compiled_isa", &mk::compiled_isa);
}
