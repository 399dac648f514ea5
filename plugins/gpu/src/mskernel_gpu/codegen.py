"""CUDA C for the fused op ``gpu.fused`` (:mod:`.fused_op`): one kernel per fused region.

A region is a DAG of elementwise ops over the node's operands, evaluated at one shape (the
*domain*); the operands broadcast to it.  Without a reduction, a grid-stride loop computes
the region at every index of the domain and stores the result.  With one (``sum``, ``max``,
``min`` over the trailing ``inner`` elements of the domain), one block of 256 threads
computes each output element: every thread folds a strided share of the row, then the block
combines the partial results in shared memory — the whole chain (an exp, its sum, ...)
reads its inputs once and writes one value per row.

Numerics follow the reference: every value is computed in its own dtype, float16 and
bfloat16 in float registers rounded back to their type after each op (PTX ``cvt.rn``:
nearest even), ``erf``/``erfc``/``lgamma`` in double; NaN
propagates through ``maximum``/``minimum`` as NumPy's.  Reductions accumulate in float
(double for float64).

:func:`generate` returns the source and the kernel's name; the name holds the SHA-256 of
the source, which is also the key of the compiled code on disk (:mod:`.nvrtc`).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Optional, Sequence

from mskernel_sdk import DType, Graph, Node, TensorType, Value

#: C type of each dtype's storage, and the type its values are computed in
C_TYPES: dict[str, tuple[str, str]] = {
    "bool": ("bool", "bool"), "int8": ("signed char", "int"), "uint8": ("unsigned char", "int"),
    "int16": ("short", "int"), "uint16": ("unsigned short", "int"), "int32": ("int", "int"),
    "uint32": ("unsigned int", "unsigned int"), "int64": ("long long", "long long"),
    "uint64": ("unsigned long long", "unsigned long long"),
    "float16": ("unsigned short", "float"), "bfloat16": ("unsigned short", "float"),
    "float32": ("float", "float"), "float64": ("double", "double"),
}
FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})
INTEGERS = frozenset(C_TYPES) - FLOATS - {"bool"}

_MATH = ("sqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan",
         "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "floor")
_NAMED = {"asin": "asin", "acos": "acos", "atan": "atan", "round": "rint", **{f: f for f in _MATH}}
_DOUBLE = {"erf": "erf", "erfc": "erfc", "lgamma": "lgamma"}
_INFIX = {"add": "+", "mul": "*", "equal": "==", "less": "<", "bitwise_and": "&",
          "bitwise_or": "|", "bitwise_xor": "^"}

#: What the generator computes: op -> the dtypes of its inputs it takes
FUSABLE: dict[str, frozenset[str]] = {
    **{op: FLOATS for op in (*_NAMED, *_DOUBLE, "reciprocal", "div", "pow", "atan2")},
    "neg": FLOATS | INTEGERS, "abs": FLOATS | INTEGERS,
    "add": FLOATS | INTEGERS, "mul": FLOATS | INTEGERS,
    "maximum": FLOATS | INTEGERS, "minimum": FLOATS | INTEGERS, "relu": FLOATS | INTEGERS,
    "equal": frozenset(C_TYPES), "less": FLOATS | INTEGERS,
    "bitwise_and": INTEGERS | {"bool"}, "bitwise_or": INTEGERS | {"bool"},
    "bitwise_xor": INTEGERS | {"bool"}, "bitwise_not": INTEGERS | {"bool"},
    "where": frozenset(C_TYPES), "cast": frozenset(C_TYPES),
}
REDUCTIONS = ("sum", "max", "min")
THREADS = 256


def fusable(node: Node) -> bool:
    """Whether the generator computes ``node`` (its op, and the dtypes it reads)."""
    dtypes = FUSABLE.get(node.op)
    if dtypes is None or node.regions or len(node.outputs) != 1:
        return False
    values = (*node.inputs, node.outputs[0])
    if not all(isinstance(v.type, TensorType) and v.type.dtype.name in C_TYPES for v in values):
        return False
    operands = node.inputs[1:] if node.op == "where" else node.inputs
    return all(v.type.dtype.name in dtypes for v in operands)  # type: ignore[union-attr]


@dataclass(frozen=True)
class Generated:
    name: str
    source: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()


def _dtype(value: Value) -> DType:
    assert isinstance(value.type, TensorType)
    return value.type.dtype


def _round(expr: str, dt: DType) -> str:
    """``expr`` (computed in the compute type) rounded to ``dt``'s values."""
    if dt.name == "float16":
        return f"h2f(f2h({expr}))"
    if dt.name == "bfloat16":
        return f"b2f(f2b({expr}))"
    if dt.name in ("int8", "uint8", "int16", "uint16"):  # wraps after each op, as NumPy's
        return f"(int)({C_TYPES[dt.name][0]})({expr})"
    return expr


def _load(pointer: str, index: str, dt: DType) -> str:
    if dt.name == "float16":
        return f"h2f({pointer}[{index}])"
    if dt.name == "bfloat16":
        return f"b2f({pointer}[{index}])"
    return f"({C_TYPES[dt.name][1]}){pointer}[{index}]"


def _store(expr: str, dt: DType) -> str:
    if dt.name == "float16":
        return f"f2h({expr})"
    if dt.name == "bfloat16":
        return f"f2b({expr})"
    return f"({C_TYPES[dt.name][0]})({expr})"


def _expr(node: Node, args: list[str]) -> str:
    """The C expression of ``node`` on its operands' registers, in the output's compute type."""
    op, out = node.op, _dtype(node.outputs[0])
    ctype = C_TYPES[out.name][1]
    source = _dtype(node.inputs[0]) if node.inputs else out
    suffix = "f" if C_TYPES[source.name][1] == "float" else ""
    if op in _NAMED:
        return f"{_NAMED[op]}{suffix}({args[0]})"
    if op in _DOUBLE:
        return f"({ctype}){_DOUBLE[op]}((double){args[0]})"
    if op in _INFIX:
        return f"({args[0]} {_INFIX[op]} {args[1]})"
    if op == "neg":
        return f"(-{args[0]})"
    if op == "abs":
        return f"fabs{suffix}({args[0]})" if source.name in FLOATS else \
            f"({args[0]} < 0 ? -{args[0]} : {args[0]})"
    if op == "reciprocal":
        return f"(({ctype})1 / {args[0]})"
    if op == "div":
        return f"({args[0]} / {args[1]})"
    if op == "pow":
        return f"pow{suffix}({args[0]}, {args[1]})"
    if op == "atan2":
        return f"atan2{suffix}({args[0]}, {args[1]})"
    if op in ("maximum", "minimum"):  # NaN in either operand gives NaN, as NumPy's
        cmp = ">" if op == "maximum" else "<"
        a, b = args
        return f"(({a} {cmp} {b} || {a} != {a}) ? {a} : {b})"
    if op == "relu":  # maximum(x, 0): NaN stays NaN
        a = args[0]
        return f"(({a} > 0 || {a} != {a}) ? {a} : ({ctype})0)"
    if op == "bitwise_not":
        return f"(!{args[0]})" if out.name == "bool" else f"(~{args[0]})"
    if op == "where":
        return f"({args[0]} ? {args[1]} : {args[2]})"
    if op == "cast":
        if out.name == "bool":
            return f"({args[0]} != 0)"
        return f"({ctype})({args[0]})"
    raise ValueError(f"gpu.fused: no CUDA C for '{op}'")


def _offset(shape: Sequence[int], domain: Sequence[int], index: str) -> str:
    """The C expression of the position, in an operand of ``shape`` broadcast to ``domain``,
    of the domain's flat ``index``."""
    if tuple(shape) == tuple(domain):
        return index
    if math.prod(shape) == 1:
        return "0"
    lead = len(domain) - len(shape)
    terms, stride, inner = [], 1, 1
    for axis in reversed(range(len(domain))):
        size = domain[axis]
        own = shape[axis - lead] if axis >= lead else 1
        if own != 1:
            terms.append(f"(({index} / {inner}LL) % {size}LL) * {stride}LL")
        stride *= own
        inner *= size
    return " + ".join(terms) or "0"


def _body(region: Graph, domain: Sequence[int], index: str) -> tuple[list[str], str]:
    """The statements computing ``region`` at ``index``, and the register of its result."""
    registers: dict[Value, str] = {}
    lines = []
    for i, v in enumerate(region.inputs):
        shape = v.type.shape  # type: ignore[union-attr]
        registers[v] = f"r{i}"
        ctype = C_TYPES[_dtype(v).name][1]
        lines.append(f"{ctype} r{i} = {_load(f'in{i}', _offset(shape, domain, index), _dtype(v))};")
    for k, node in enumerate(region.nodes):
        out = node.outputs[0]
        name = f"t{k}"
        ctype = C_TYPES[_dtype(out).name][1]
        value = _round(_expr(node, [registers[v] for v in node.inputs]), _dtype(out))
        lines.append(f"{ctype} {name} = {value};")
        registers[out] = name
    return lines, registers[region.outputs[0]]


def _params(region: Graph, out: DType) -> str:
    ins = [f"const {C_TYPES[_dtype(v).name][0]}* __restrict__ in{i}"
           for i, v in enumerate(region.inputs)]
    return ", ".join([*ins, f"{C_TYPES[out.name][0]}* __restrict__ out", "long long n"])


#: float16 and bfloat16 kept as their bit patterns and converted with PTX's ``cvt`` (round to
#: nearest even), so the kernels need no CUDA headers (NVRTC's wheel ships none)
_HEADER = """\
__device__ __forceinline__ float h2f(unsigned short h) {
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short f2h(float f) {
  unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ float b2f(unsigned short b) {
  return __uint_as_float(((unsigned int)b) << 16); }
__device__ __forceinline__ unsigned short f2b(float f) {
  unsigned short b; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f)); return b; }
"""


def generate(region: Graph, domain: Sequence[int], reduce: Optional[str] = None,
             inner: int = 1, out_dtype: Optional[DType] = None) -> Generated:
    """The kernel of ``region`` over ``domain`` (see the module's docstring).  Without
    ``reduce`` it takes ``n`` = the domain's size; with it, ``n`` = the number of rows and
    each row is ``inner`` contiguous domain elements."""
    result = _dtype(region.outputs[0])
    out = out_dtype or result
    if reduce is None:
        lines, register = _body(region, domain, "i")
        body = "\n".join(f"    {line}" for line in lines)
        code = (f"(PARAMS) {{\n"
                f"  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;\n"
                f"       i += (long long)blockDim.x * gridDim.x) {{\n{body}\n"
                f"    out[i] = {_store(register, out)};\n  }}\n}}\n")
    else:
        acc = "double" if result.name == "float64" else "float"
        init, combine = {
            "sum": ("0", "a + b"),
            "max": ("-INF", "((a > b || a != a) ? a : b)"),
            "min": ("INF", "((a < b || a != a) ? a : b)"),
        }[reduce]
        lines, register = _body(region, domain, "i")
        body = "\n".join(f"      {line}" for line in lines)
        inf = "__longlong_as_double(0x7ff0000000000000LL)" if acc == "double" else \
            "__int_as_float(0x7f800000)"
        init = init.replace("INF", inf)
        code = (f"(PARAMS) {{\n"
                f"  __shared__ {acc} partial[{THREADS}];\n"
                f"  for (long long row = blockIdx.x; row < n; row += gridDim.x) {{\n"
                f"    {acc} a = {init};\n"
                f"    for (long long j = threadIdx.x; j < {inner}LL; j += blockDim.x) {{\n"
                f"      long long i = row * {inner}LL + j;\n{body}\n"
                f"      {acc} b = ({acc}){register};\n      a = {combine};\n    }}\n"
                f"    partial[threadIdx.x] = a;\n    __syncthreads();\n"
                f"    for (int s = blockDim.x / 2; s > 0; s >>= 1) {{\n"
                f"      if (threadIdx.x < s) {{ {acc} b = partial[threadIdx.x + s]; "
                f"a = partial[threadIdx.x]; partial[threadIdx.x] = {combine}; }}\n"
                f"      __syncthreads();\n    }}\n"
                f"    if (threadIdx.x == 0) out[row] = {_store('partial[0]', out)};\n"
                f"    __syncthreads();\n  }}\n}}\n")
    draft = _HEADER + "extern \"C\" __global__ void KERNEL" + code.replace(
        "(PARAMS)", f"({_params(region, out)})")
    name = "fused_" + hashlib.sha256(draft.encode()).hexdigest()[:16]
    return Generated(name, draft.replace("KERNEL", name))
