// The kernel of `cpu.fused_elementwise` (made by the cpu fusion pass): a chain or DAG of
// elementwise ops computed in one pass over the output, so intermediates never go to memory.
//
// Two engines, chosen at compile time by mskernel_cpu/fusion_codegen.py:
//   - generated C++ (attributes "library", the path of a shared object compiled for the graph,
//     cached on disk and verified by mskernel_cpu/jit_cache.py, "digest", the SHA-256 of its
//     bytes, and "symbol", this node's function in it), which computes a range of output
//     elements; the kernel calls it from parallel_for and turns its error code into an Error;
//   - the interpreter (fused.hpp): the program of attributes "<k>:op", "<k>:operands",
//     "<k>:dtype" (and each op's own attributes as "<k>.<name>") run over tiles of
//     fused::kTile elements held in stack registers.
// Broadcasting is resolved per input at compile time into (size, stride) runs over the output.
#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "mskernel_cpu/elementwise.hpp"
#include "mskernel_cpu/fused.hpp"

namespace mskernel_cpu {
namespace {

using fused::kRegisterBytes;
using fused::kTile;

constexpr int kMaxRegisters = 32;

// ---- generated code ---------------------------------------------------------------------

// int symbol(inputs, output, begin, end, message, capacity): 0, or 1 + the ErrorKind of a
// failure whose text it wrote to `message`.
using GeneratedRange = int (*)(const void* const*, void*, int64_t, int64_t, char*, int64_t);

// Shared objects stay loaded for the life of the process (kernels may outlive any owner), one
// handle per digest: `path` is read only the first time a digest is seen.
GeneratedRange load_generated(const std::string& path, const std::string& digest,
                              const std::string& symbol) {
  if (digest.size() != 64) {
    throw Error(ErrorKind::Value, "cpu.fused_elementwise: attribute 'digest' must be the "
                                  "SHA-256 (64 hex digits) of the library's bytes");
  }
  static std::mutex mutex;
  static std::unordered_map<std::string, void*> handles;
  std::lock_guard<std::mutex> lock(mutex);
  void*& handle = handles[digest];
  if (handle == nullptr) handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    throw Error(ErrorKind::Runtime, std::string("cpu.fused_elementwise: cannot load ") + path +
                                        ": " + dlerror());
  }
  auto run = reinterpret_cast<GeneratedRange>(dlsym(handle, symbol.c_str()));
  if (run == nullptr) {
    throw Error(ErrorKind::Runtime, "cpu.fused_elementwise: " + path + " does not export " +
                                        symbol);
  }
  return run;
}

Kernel generated_kernel(GeneratedRange run, int64_t numel, int64_t grain) {
  return [run, numel, grain](const Args& args) {
    parallel_for(numel, grain, [&](int64_t begin, int64_t end) {
      char message[512];
      const int status = run(args.inputs, args.outputs[0], begin, end, message, sizeof message);
      if (status != 0) throw Error(static_cast<ErrorKind>(status - 1), message);
    });
  };
}

// ---- the interpreter --------------------------------------------------------------------

// How one input is read for a range of output elements: runs over the output's dimensions,
// outermost first, each a size and this input's element stride (0 where it broadcasts).
// Dimensions are merged where the input walks them contiguously (or not at all).
struct InputLayout {
  std::vector<int64_t> sizes, strides;

  // Input `index` of shape `shape`, which must broadcast to `out`.
  InputLayout(size_t index, const std::vector<int64_t>& shape, const std::vector<int64_t>& out) {
    if (!broadcasts_to(shape, out)) {
      throw Error(ErrorKind::Value, "cpu.fused_elementwise: input " + std::to_string(index) +
                                        " of shape " + shape_text(shape) +
                                        " does not broadcast to the output's shape " +
                                        shape_text(out));
    }
    const size_t offset = out.size() - shape.size();
    std::vector<int64_t> contiguous(out.size(), 0);
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      contiguous[offset + d] = shape[d] == 1 ? 0 : stride;
      stride *= shape[d];
    }
    for (size_t d = 0; d < out.size(); ++d) {
      if (out[d] == 1) continue;
      if (!sizes.empty() && strides.back() == contiguous[d] * out[d]) {
        sizes.back() *= out[d];
        strides.back() = contiguous[d];
        continue;
      }
      sizes.push_back(out[d]);
      strides.push_back(contiguous[d]);
    }
    if (sizes.empty()) {
      sizes.push_back(1);
      strides.push_back(0);
    }
  }

  bool contiguous() const { return sizes.size() == 1 && strides[0] == 1; }
  bool scalar() const {
    return std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s == 0; });
  }

  // The input offset of the first element of the innermost run holding output `row`.
  int64_t row_offset(int64_t row) const {
    int64_t offset = 0;
    for (size_t d = sizes.size() - 1; d-- > 0;) {
      offset += (row % sizes[d]) * strides[d];
      row /= sizes[d];
    }
    return offset;
  }
};

// Fills register `out` with output elements [begin, begin + count) of an input.
using Gather = void (*)(const InputLayout&, const void*, int64_t, int64_t, char*);

template <class T>
void gather(const InputLayout& layout, const void* data, int64_t begin, int64_t count,
            char* out) {
  const T* x = static_cast<const T*>(data);
  auto* reg = reinterpret_cast<compute_t<T>*>(out);
  const int64_t length = layout.sizes.back(), step = layout.strides.back();
  for (int64_t done = 0; done < count;) {
    const int64_t position = begin + done;
    const int64_t column = position % length;
    const int64_t n = std::min(length - column, count - done);
    const T* src = x + layout.row_offset(position / length) + column * step;
    if (step == 1) {
      for (int64_t i = 0; i < n; ++i) reg[done + i] = load(src[i]);
    } else {
      const compute_t<T> v = load(src[0]);
      for (int64_t i = 0; i < n; ++i) reg[done + i] = v;
    }
    done += n;
  }
}

// Writes a register (already rounded to the output dtype) to the output.
using Store = void (*)(const char*, void*, int64_t, int64_t);

template <class T>
void store(const char* reg, void* data, int64_t begin, int64_t count) {
  const auto* values = reinterpret_cast<const compute_t<T>*>(reg);
  T* y = static_cast<T*>(data) + begin;
  for (int64_t i = 0; i < count; ++i) y[i] = convert<T>(values[i]);
}

struct Input {
  InputLayout layout;
  Gather gather;
  size_t itemsize;
  bool direct;  // contiguous and stored in its compute type: the register is the input itself
  bool scalar;  // gathered once per range
};

struct Program {
  std::vector<Input> inputs;
  std::vector<std::unique_ptr<fused::TileOp>> ops;
  int result = 0;        // the register of the output
  Store store = nullptr;
  size_t out_itemsize = 0;
  bool direct_output = false;  // the last op writes the output directly

  void run(const Args& args, int64_t begin, int64_t end) const {
    alignas(64) char storage[kMaxRegisters][kRegisterBytes];
    char* registers[kMaxRegisters];
    for (int r = 0; r < kMaxRegisters; ++r) registers[r] = storage[r];
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].scalar) inputs[i].gather(inputs[i].layout, args.inputs[i], 0, kTile,
                                             registers[i]);
    }
    char* out = static_cast<char*>(args.outputs[0]);
    for (int64_t tile = begin; tile < end; tile += kTile) {
      const int64_t count = std::min(kTile, end - tile);
      for (size_t i = 0; i < inputs.size(); ++i) {
        const Input& input = inputs[i];
        if (input.direct) {
          registers[i] = const_cast<char*>(static_cast<const char*>(args.inputs[i])) +
                         tile * input.itemsize;
        } else if (!input.scalar) {
          input.gather(input.layout, args.inputs[i], tile, count, registers[i]);
        }
      }
      if (direct_output) registers[result] = out + tile * out_itemsize;
      for (const auto& op : ops) op->run(registers, count);
      if (!direct_output) store(registers[result], out, tile, count);
    }
  }
};

// Whether a dtype is computed in a wider type than it is stored in.
bool is_half(DType dt) { return dt == DType::Float16 || dt == DType::BFloat16; }

std::shared_ptr<Program> decode(const KernelContext& ctx, int64_t& cost) {
  auto program = std::make_shared<Program>();
  const std::vector<int64_t>& out_shape = ctx.output(0).shape;
  std::vector<DType> types;
  for (const TensorInfo& info : ctx.inputs) {
    InputLayout layout(types.size(), info.shape, out_shape);
    types.push_back(info.dtype);
    const bool direct = !is_half(info.dtype) && layout.contiguous();
    const bool scalar = layout.scalar();
    const Gather gather_fn = dispatch<fused::kFusable>(info.dtype, [](auto tag) -> Gather {
      return &gather<typename decltype(tag)::type>;
    });
    program->inputs.push_back(Input{std::move(layout), gather_fn, itemsize(info.dtype), direct,
                                    scalar});
  }
  const int64_t count = ctx.attrs.get_int("count");
  if (count < 1 || ctx.inputs.size() + count > kMaxRegisters) {
    throw Error(ErrorKind::Value, "cpu.fused_elementwise: a program of " +
                                      std::to_string(count) + " ops on " +
                                      std::to_string(ctx.inputs.size()) +
                                      " inputs does not fit in " +
                                      std::to_string(kMaxRegisters) + " registers");
  }
  cost = 0;
  for (int64_t k = 0; k < count; ++k) {
    const std::string key = std::to_string(k);
    fused::InstructionSpec spec{ctx.attrs.get_str(key + ":op"), {}, {},
                                ctx.attrs.get_dtype(key + ":dtype"),
                                static_cast<int>(types.size()), ctx.attrs, key + "."};
    for (int64_t r : ctx.attrs.get_ints(key + ":operands")) {
      if (r < 0 || r >= static_cast<int64_t>(types.size())) {
        throw Error(ErrorKind::Value, "cpu.fused_elementwise: op " + key + " reads register " +
                                          std::to_string(r) + " before it is written");
      }
      spec.operands.push_back(static_cast<int>(r));
      spec.operand_types.push_back(types[r]);
    }
    program->ops.push_back(fused::make_tile_op(spec));
    types.push_back(spec.result_type);
    cost += program->ops.back()->cost();
  }
  program->result = static_cast<int>(types.size()) - 1;
  const DType out = ctx.output(0).dtype;
  if (types.back() != out) {
    throw Error(ErrorKind::Type, "cpu.fused_elementwise: the program computes " +
                                     std::string(dtype_name(types.back())) + ", the node " +
                                     dtype_name(out));
  }
  program->out_itemsize = itemsize(out);
  program->direct_output = !is_half(out);
  program->store = dispatch<fused::kFusable>(out, [](auto tag) -> Store {
    return &store<typename decltype(tag)::type>;
  });
  return program;
}

Kernel fused_elementwise(KernelContext& ctx) {
  ctx.expect_outputs(1);
  int64_t cost = 0;
  const std::shared_ptr<Program> program = decode(ctx, cost);
  const int64_t numel = ctx.output(0).numel();
  const int64_t grain = std::max<int64_t>(kTile, grain_for(static_cast<int>(cost)));
  const std::string& library = ctx.attrs.get_str("library");
  if (!library.empty()) {
    ctx.detail = "generated C++, " + std::to_string(program->ops.size()) + " ops";
    return generated_kernel(load_generated(library, ctx.attrs.get_str("digest"),
                                           ctx.attrs.get_str("symbol")), numel, grain);
  }
  ctx.detail = "interpreter, " + std::to_string(program->ops.size()) + " ops";
  return [program, numel, grain](const Args& args) {
    parallel_for(numel, grain, [&](int64_t begin, int64_t end) {
      program->run(args, begin, end);
    });
  };
}

}  // namespace

MSKERNEL_CPU_KERNEL("cpu.fused_elementwise", fused::kFusable, fused_elementwise);

}  // namespace mskernel_cpu
