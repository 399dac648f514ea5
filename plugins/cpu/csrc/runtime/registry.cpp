// The kernel registry, attribute access, tensor infos and dtype names.
#include <algorithm>
#include <new>

#include "mskernel_cpu/kernel.hpp"

namespace mskernel_cpu {

// ---- dtypes -----------------------------------------------------------------------------

namespace {

struct DTypeRecord {
  DType dtype;
  const char* name;
  size_t itemsize;
};

constexpr DTypeRecord kDTypes[kNumDTypes] = {
    {DType::Bool, "bool", 1},         {DType::Int8, "int8", 1},
    {DType::Int16, "int16", 2},       {DType::Int32, "int32", 4},
    {DType::Int64, "int64", 8},       {DType::UInt8, "uint8", 1},
    {DType::UInt16, "uint16", 2},     {DType::UInt32, "uint32", 4},
    {DType::UInt64, "uint64", 8},     {DType::Float16, "float16", 2},
    {DType::BFloat16, "bfloat16", 2}, {DType::Float32, "float32", 4},
    {DType::Float64, "float64", 8},   {DType::Complex64, "complex64", 8},
    {DType::Complex128, "complex128", 16},
};

}  // namespace

const char* dtype_name(DType dt) { return kDTypes[static_cast<int>(dt)].name; }

size_t itemsize(DType dt) { return kDTypes[static_cast<int>(dt)].itemsize; }

DType parse_dtype(const std::string& name) {
  for (const DTypeRecord& record : kDTypes) {
    if (name == record.name) return record.dtype;
  }
  throw Error(ErrorKind::Type, "unknown dtype '" + name + "'");
}

// ---- tensors ----------------------------------------------------------------------------

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

bool broadcasts_to(const std::vector<int64_t>& shape, const std::vector<int64_t>& out) {
  if (shape.size() > out.size()) return false;
  const size_t offset = out.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1 && shape[d] != out[offset + d]) return false;
  }
  return true;
}

int normalized_axis(int64_t axis, int rank, const std::string& op) {
  if (axis < -rank || axis >= rank) {
    throw Error(ErrorKind::Index, op + ": axis " + std::to_string(axis) +
                                      " is out of range for rank " + std::to_string(rank));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> TensorInfo::strides() const {
  std::vector<int64_t> out(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    out[i] = stride;
    stride *= shape[i];
  }
  return out;
}

// ---- attributes -------------------------------------------------------------------------

const AttrValue& Attrs::find(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw Error(ErrorKind::Type, "missing attribute '" + name + "'");
  return it->second;
}

void Attrs::wrong_kind(const std::string& name, const char* wanted) const {
  throw Error(ErrorKind::Type, "attribute '" + name + "' is not " + wanted);
}

bool Attrs::is_none(const std::string& name) const {
  return std::holds_alternative<std::monostate>(find(name));
}

bool Attrs::get_bool(const std::string& name) const {
  if (auto v = std::get_if<bool>(&find(name))) return *v;
  wrong_kind(name, "a bool");
}

int64_t Attrs::get_int(const std::string& name) const {
  if (auto v = std::get_if<int64_t>(&find(name))) return *v;
  wrong_kind(name, "an int");
}

double Attrs::get_float(const std::string& name) const {
  const AttrValue& value = find(name);
  if (auto v = std::get_if<double>(&value)) return *v;
  if (auto v = std::get_if<int64_t>(&value)) return static_cast<double>(*v);
  wrong_kind(name, "a float");
}

const std::string& Attrs::get_str(const std::string& name) const {
  if (auto v = std::get_if<std::string>(&find(name))) return *v;
  wrong_kind(name, "a str");
}

DType Attrs::get_dtype(const std::string& name) const { return parse_dtype(get_str(name)); }

const std::vector<int64_t>& Attrs::get_ints(const std::string& name) const {
  if (auto v = std::get_if<std::vector<int64_t>>(&find(name))) return *v;
  wrong_kind(name, "a tuple of ints");
}

std::vector<double> Attrs::get_floats(const std::string& name) const {
  const AttrValue& value = find(name);
  if (auto v = std::get_if<std::vector<double>>(&value)) return *v;
  if (auto v = std::get_if<std::vector<int64_t>>(&value)) {
    return std::vector<double>(v->begin(), v->end());
  }
  wrong_kind(name, "a tuple of floats");
}

const ArrayAttr& Attrs::get_array(const std::string& name) const {
  if (auto v = std::get_if<ArrayAttr>(&find(name))) return *v;
  wrong_kind(name, "an array");
}

std::optional<int64_t> Attrs::get_optional_int(const std::string& name) const {
  if (is_none(name)) return std::nullopt;
  return get_int(name);
}

std::optional<double> Attrs::get_optional_float(const std::string& name) const {
  if (is_none(name)) return std::nullopt;
  return get_float(name);
}

std::optional<std::vector<int64_t>> Attrs::get_optional_ints(const std::string& name) const {
  if (is_none(name)) return std::nullopt;
  return get_ints(name);
}

// ---- registry ---------------------------------------------------------------------------

KernelRegistry& KernelRegistry::instance() {
  static KernelRegistry registry;
  return registry;
}

bool KernelRegistry::add(const std::string& op, DTypeSet dtypes, KernelFactory factory) {
  if (entries_.count(op) != 0) {
    conflicts_.push_back(op);
    return false;
  }
  entries_.emplace(op, KernelEntry{op, dtypes, factory});
  return true;
}

const KernelEntry* KernelRegistry::find(const std::string& op) const {
  auto it = entries_.find(op);
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<KernelEntry> KernelRegistry::entries() const {
  std::vector<KernelEntry> out;
  out.reserve(entries_.size());
  for (const auto& item : entries_) out.push_back(item.second);
  std::sort(out.begin(), out.end(),
            [](const KernelEntry& a, const KernelEntry& b) { return a.op < b.op; });
  return out;
}

// ---- kernel contexts --------------------------------------------------------------------

namespace {

const TensorInfo& operand(const KernelContext& ctx, const std::vector<TensorInfo>& list,
                          size_t i, const char* what) {
  if (i >= list.size()) {
    throw Error(ErrorKind::Type, ctx.op + " takes at least " + std::to_string(i + 1) + " " +
                                     what + "(s), got " + std::to_string(list.size()));
  }
  return list[i];
}

}  // namespace

void check_extent(const std::string& op, const std::vector<int64_t>& shape, size_t item,
                  const std::string& what) {
  constexpr int64_t kMaxBytes = int64_t(1) << 62;
  for (int64_t d : shape) {
    if (d < 0) {
      throw Error(ErrorKind::Value, op + ": " + what + " has a negative dim, shape " +
                                        shape_text(shape));
    }
  }
  int64_t bytes = static_cast<int64_t>(item);
  for (int64_t d : shape) {
    if (d == 0) return;
    if (bytes > kMaxBytes / d) {
      throw Error(ErrorKind::Value, op + ": " + what + " of shape " + shape_text(shape) +
                                        " is too large to address");
    }
    bytes *= d;
  }
}

const TensorInfo& KernelContext::input(size_t i) const { return operand(*this, inputs, i, "input"); }

const TensorInfo& KernelContext::output(size_t i) const {
  return operand(*this, outputs, i, "output");
}

void KernelContext::expect_inputs(size_t min, size_t max) const {
  if (inputs.size() < min || inputs.size() > max) {
    const std::string want = min == max ? std::to_string(min)
                                        : std::to_string(min) + " to " + std::to_string(max);
    throw Error(ErrorKind::Type, op + " takes " + want + " input(s), got " +
                                     std::to_string(inputs.size()));
  }
}

void KernelContext::expect_outputs(size_t n) const {
  if (outputs.size() != n) {
    throw Error(ErrorKind::Type, op + " gives " + std::to_string(n) + " output(s), got " +
                                     std::to_string(outputs.size()));
  }
}

void KernelContext::expect_rank(const TensorInfo& t, const char* what, int min, int max) const {
  if (t.rank() < min || t.rank() > max) {
    const std::string want = min == max ? std::to_string(min)
                                        : std::to_string(min) + " to " + std::to_string(max);
    throw Error(ErrorKind::Value, op + ": " + what + " must have rank " + want + ", got shape " +
                                      shape_text(t.shape));
  }
}

void KernelContext::expect_shape(const TensorInfo& t, const char* what,
                                 const std::vector<int64_t>& shape) const {
  if (t.shape != shape) {
    throw Error(ErrorKind::Value, op + ": " + what + " must have shape " + shape_text(shape) +
                                      ", got " + shape_text(t.shape));
  }
}

Kernel prepare_kernel(KernelContext& ctx) {
  const KernelEntry* entry = KernelRegistry::instance().find(ctx.op);
  if (entry == nullptr) throw Error(ErrorKind::Type, "no cpu kernel for op '" + ctx.op + "'");
  for (const auto* list : {&ctx.inputs, &ctx.outputs}) {
    const char* what = list == &ctx.inputs ? "input " : "output ";
    for (size_t i = 0; i < list->size(); ++i) {
      const TensorInfo& t = (*list)[i];
      if (!contains(entry->dtypes, t.dtype)) {
        throw Error(ErrorKind::Type, "the cpu kernel of '" + ctx.op + "' does not take " +
                                         dtype_name(t.dtype));
      }
      check_extent(ctx.op, t.shape, itemsize(t.dtype), what + std::to_string(i));
    }
  }
  try {
    return entry->factory(ctx);
  } catch (const Error& error) {
    const std::string message = error.what();
    if (message.rfind(ctx.op, 0) == 0) throw;  // already names the op
    throw Error(error.kind(), ctx.op + ": " + message);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& error) {  // a factory's container or parsing error
    throw Error(ErrorKind::Value, ctx.op + ": " + error.what());
  }
}

}  // namespace mskernel_cpu
