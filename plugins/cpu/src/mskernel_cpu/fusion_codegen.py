"""The kernel attributes of a ``cpu.fused_elementwise`` node: its program, and the shared
object of C++ generated for it when a compiler is available.

Program.  The region is flattened into registers (the node's inputs are registers 0..n-1, op
``k`` writes register ``n + k``) and passed as attributes ``"<k>:op"``, ``"<k>:operands"``,
``"<k>:dtype"``, the op's own attributes as ``"<k>.<name>"``, and ``"count"``.  The C++
kernel interprets it over tiles when ``"library"`` is empty.

Generated code.  Otherwise ``"library"`` is a shared object to load (a verified private
copy; see :mod:`.jit_cache`), ``"digest"`` the SHA-256 of its bytes (the kernel keeps one
handle per digest) and ``"symbol"`` its function
``int symbol(inputs, output, begin, end, message, capacity)``: one loop over output
elements ``[begin, end)`` applying the ops' functors (``mskernel_cpu/functors.hpp``, installed
with the package) with every intermediate in a register, and broadcasting turned into index
arithmetic with the shapes as constants.  Where glibc's vector math library (libmvec) is
present, ``mskernel_cpu/libmvec.hpp`` declares its SIMD variants of libm's functions, so
loops calling ``exp``, ``tanh``, ``erf``... vectorise too (within a few ulp of libm).  It is
compiled with ``-O3`` for the instruction set this CPU runs (:func:`isa_flags`: x86-64-v4
with 512-bit vectors where the CPU has AVX-512, twice the elements per instruction of the
x86-64-v3 baseline the rest of the backend is built for; ``MSKERNEL_CPU_ISA=x86-64-v3``
keeps the baseline) and ``-ffp-contract=off`` (so no multiply-add is contracted across ops
that round separately) by

- ``MSKERNEL_CPU_CXX`` if set, else ``g++``, else ``c++`` on ``PATH``;
- never when ``MSKERNEL_CPU_JIT=0``, or when no compiler is found;

and cached (:mod:`.jit_cache`: a directory only this user can write, content-addressed
objects verified before they are loaded) under the hash of the source, the compiler's
identity and the flags (one object per graph: all its fused nodes, regions included, compile
together).  A failed compilation warns and leaves the node to the interpreter.
:data:`JIT_STATS` counts what happened in this process.
"""

from __future__ import annotations

import ctypes.util
import functools
import hashlib
import math
import os
import shutil
import subprocess
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from mskernel_sdk import DType, Graph, Node

from .jit_cache import CachedObject, Refused, open_cache

JIT_ENV = "MSKERNEL_CPU_JIT"
CXX_ENV = "MSKERNEL_CPU_CXX"
ISA_ENV = "MSKERNEL_CPU_ISA"
FLAGS = ("-std=gnu++17", "-O3", "-mtune=generic", "-fno-math-errno", "-ffp-contract=off",
         "-fPIC", "-shared")
#: the instruction sets generated code is compiled for, with their flags
ISA_FLAGS = {"x86-64-v3": ("-march=x86-64-v3",),
             "x86-64-v4": ("-march=x86-64-v4", "-mprefer-vector-width=512")}

#: ``compiled``: objects built; ``cached``: found on disk and verified; ``refused``: found on
#: disk but not safe to load (compiled again); ``failed``: compilations that failed.
JIT_STATS = {"compiled": 0, "cached": 0, "refused": 0, "failed": 0}

_STORAGE = {
    "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
    "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
    "uint64": "uint64_t", "float16": "f16_t", "bfloat16": "bf16_t", "float32": "float",
    "float64": "double",
}
_FUNCTOR_NAMES = {"isnan": "IsNan", "isinf": "IsInf", "isfinite": "IsFinite", "where": "Select",
                  "cast": "Identity"}


@dataclass
class GeneratedCode:
    """What :func:`compile_fused_nodes` built for a graph: its fused nodes' functions in one
    verified shared object."""

    library: Optional[CachedObject] = None
    symbols: dict[Node, str] = field(default_factory=dict)

    def of(self, node: Node) -> tuple[str, str, str]:
        """``(library, digest, symbol)`` of ``node``; empty strings when it has none."""
        if self.library is None or node not in self.symbols:
            return "", "", ""
        return str(self.library.path), self.library.digest, self.symbols[node]


def check_fused_node(node: Node) -> None:
    """Raise the op's OpError unless ``node``'s region passes the ``cpu.fused_elementwise``
    rule: the program and the generated code rely on it (the kernel sees registers, not the
    region's shapes)."""
    from .fused_op import FUSED_OPDEF

    FUSED_OPDEF.infer_types([v.type for v in node.inputs], {}, regions=node.regions,
                            loc=node.loc)


def kernel_attrs(node: Node, generated: GeneratedCode) -> dict[str, Any]:
    """The attributes the fused kernel's factory reads (see the module's docstring);
    ``generated`` is what :func:`compile_fused_nodes` built."""
    check_fused_node(node)
    region: Graph = node.regions[0]
    register = {v: i for i, v in enumerate(region.inputs)}
    attrs: dict[str, Any] = {}
    for k, inner in enumerate(region.nodes):
        attrs[f"{k}:op"] = inner.op
        attrs[f"{k}:operands"] = [register[v] for v in inner.inputs]
        attrs[f"{k}:dtype"] = inner.output.type.dtype.name
        attrs.update((f"{k}.{name}", value) for name, value in inner.attrs.items())
        register[inner.output] = len(register)
    result = region.outputs[0]
    count = len(region.nodes)
    if not region.nodes or result is not region.nodes[-1].output:
        # a later pass left the result elsewhere (an operand, an earlier op): copy it
        dtype = result.type.dtype.name
        attrs.update({f"{count}:op": "cast", f"{count}:operands": [register[result]],
                      f"{count}:dtype": dtype, f"{count}.dtype": dtype})
        count += 1
    attrs["count"] = count
    attrs["library"], attrs["digest"], attrs["symbol"] = generated.of(node)
    return attrs


# -- the generated source ---------------------------------------------------------------------


def _storage(dt: DType) -> str:
    return _STORAGE[dt.name]


def _compute(dt: DType) -> str:
    return "float" if dt.name in ("float16", "bfloat16") else _STORAGE[dt.name]


def _functor(inner: Node) -> str:
    """A C++ expression constructing the functor of ``inner``."""
    if inner.op == "gelu":
        return "functors::GeluTanh{}" if inner.attrs["approximate"] == "tanh" else \
            "functors::GeluErf{}"
    if inner.op == "clip":
        bounds = ", ".join("std::nullopt" if b is None else f"std::optional<double>({_double(b)})"
                           for b in (inner.attrs["min"], inner.attrs["max"]))
        return f"functors::Clip<{_compute(inner.output.type.dtype)}>({bounds})"
    return f"functors::{functor_name(inner.op)}{{}}"


def functor_name(op: str) -> str:
    """The functor of ``functors.hpp`` that computes elementwise ``op`` (``log1p`` → ``Log1p``)."""
    return _FUNCTOR_NAMES.get(op) or "".join(p[:1].upper() + p[1:] for p in op.split("_"))


def _double(value: float) -> str:
    """A C++ expression of exactly ``value``."""
    if math.isnan(value):
        return "std::numeric_limits<double>::quiet_NaN()"
    if math.isinf(value):
        return f"{'-' if value < 0 else ''}std::numeric_limits<double>::infinity()"
    return float(value).hex()


def broadcast_layout(shapes: list[tuple[int, ...]],
                     out: tuple[int, ...]) -> tuple[list[int], list[list[int]]]:
    """The output's dimensions with size-1 ones dropped and neighbours merged where every
    input walks them alike, and each input's element stride per dimension (0: broadcast)."""
    rank = len(out)
    strides_in = []
    for shape in shapes:
        strides = [0] * rank
        step = 1
        for d in range(len(shape) - 1, -1, -1):
            strides[rank - len(shape) + d] = 0 if shape[d] == 1 else step
            step *= shape[d]
        strides_in.append(strides)
    sizes: list[int] = []
    merged: list[list[int]] = [[] for _ in shapes]
    for d in range(rank):
        if out[d] == 1:
            continue
        if sizes and all(m[-1] == s[d] * out[d] for m, s in zip(merged, strides_in)):
            sizes[-1] *= out[d]
            for m, s in zip(merged, strides_in):
                m[-1] = s[d]
            continue
        sizes.append(out[d])
        for m, s in zip(merged, strides_in):
            m.append(s[d])
    if not sizes:
        sizes = [1]
        merged = [[0] for _ in shapes]
    return sizes, merged


_PROLOGUE = """\
// Generated by mskernel_cpu.fusion_codegen: one function per cpu.fused_elementwise node.
{libmvec}#include <algorithm>
#include <cstring>
#include <limits>
#include "mskernel_cpu/functors.hpp"

using namespace mskernel_cpu;

// Reports a failure to the kernel: the message goes to `message`, `code` is returned.
static int failed(const std::exception& error, int code, char* message, int64_t capacity) {{
  std::strncpy(message, error.what(), capacity - 1);
  message[capacity - 1] = 0;
  return code;
}}
"""


def generate_source(functions: Mapping[str, Node]) -> str:
    """A translation unit defining, for each ``symbol → node``, the node's range function."""
    include = '#include "mskernel_cpu/libmvec.hpp"\n' if libmvec_present() else ""
    parts = [_PROLOGUE.format(libmvec=include)]
    parts += [generate_function(node, symbol) for symbol, node in functions.items()]
    return "\n".join(parts)


def generate_function(node: Node, symbol: str) -> str:
    """``int symbol(inputs, output, begin, end, message, capacity)``: output elements
    ``[begin, end)`` of ``node``, walked row by row (a row is the innermost merged dimension);
    each input is read at its row offset plus the column times its inner stride (0 or 1)."""
    region: Graph = node.regions[0]
    out_type = node.output.type
    sizes, strides = broadcast_layout([v.type.shape for v in region.inputs], out_type.shape)
    length = sizes[-1]
    names = {v: f"r{i}" for i, v in enumerate(region.inputs)}
    lines = [
        f'extern "C" __attribute__((visibility("default"))) int {symbol}(',
        "    const void* const* inputs, void* output, int64_t begin, int64_t end, char* message,",
        "    int64_t capacity) {",
        "  try {",
    ]
    for i, v in enumerate(region.inputs):
        t = _storage(v.type.dtype)
        lines.append(f"    const {t}* __restrict in{i} = static_cast<const {t}*>(inputs[{i}]);")
    out_t = _storage(out_type.dtype)
    lines.append(f"    {out_t}* __restrict out = static_cast<{out_t}*>(output);")
    for k, inner in enumerate(region.nodes):
        lines.append(f"    const auto f{k} = {_functor(inner)};")
    lines += [
        f"    int64_t row = begin / {length}, column = begin % {length};",
        "    for (int64_t position = begin; position < end; ++row, column = 0) {",
        f"      const int64_t stop = std::min<int64_t>({length}, column + end - position);",
    ]
    outer = sizes[:-1]
    if outer:
        lines.append("      int64_t rest = row;")
        for d in range(len(outer) - 1, -1, -1):
            lines.append(f"      const int64_t i{d} = rest % {outer[d]};")
            if d:
                lines.append(f"      rest /= {outer[d]};")
    for i in range(len(region.inputs)):
        terms = [f"i{d} * {strides[i][d]}" for d in range(len(outer)) if strides[i][d]]
        lines.append(f"      const int64_t o{i} = {' + '.join(terms) or '0'};")
    lines.append("      for (int64_t j = column; j < stop; ++j) {")
    for i, v in enumerate(region.inputs):
        index = f"o{i} + j" if strides[i][-1] else f"o{i}"
        lines.append(f"        const {_compute(v.type.dtype)} r{i} = load(in{i}[{index}]);")
    for k, inner in enumerate(region.nodes):
        name = f"r{len(region.inputs) + k}"
        dt = inner.output.type.dtype
        args = ", ".join(names[v] for v in inner.inputs)
        lines.append(f"        const {_compute(dt)} {name} = "
                     f"load(convert<{_storage(dt)}>(f{k}({args})));")
        names[inner.output] = name
    lines += [
        f"        out[row * {length} + j] = convert<{out_t}>({names[region.outputs[0]]});",
        "      }",
        "      position += stop - column;",
        "    }",
        "    return 0;",
        "  } catch (const Error& error) {",
        "    return failed(error, 1 + static_cast<int>(error.kind()), message, capacity);",
        "  } catch (const std::exception& error) {",
        "    return failed(error, 1, message, capacity);",
        "  }",
        "}",
    ]
    return "\n".join(lines) + "\n"


def compile_fused_nodes(graph: Graph) -> GeneratedCode:
    """The code of every ``cpu.fused_elementwise`` node of ``graph`` and its regions with
    elements to compute, compiled together into one shared object; none when code generation
    is off or fails."""
    from .fused_op import FUSED_OP

    nodes = [n for n in graph.walk() if n.op == FUSED_OP and n.output.type.size]
    if not nodes or not jit_enabled():
        return GeneratedCode()
    for node in nodes:
        check_fused_node(node)
    functions = {f"mskernel_fused_{k}": node for k, node in enumerate(nodes)}
    library = compile_library(generate_source(functions))
    if library is None:
        return GeneratedCode()
    return GeneratedCode(library, {node: symbol for symbol, node in functions.items()})


# -- compiling and caching --------------------------------------------------------------------


def jit_enabled() -> bool:
    return os.environ.get(JIT_ENV, "1").strip() != "0" and compiler() is not None


def compiler() -> Optional[str]:
    """The C++ compiler for generated code, or ``None``."""
    chosen = os.environ.get(CXX_ENV, "").strip()
    if chosen:
        return shutil.which(chosen)
    return shutil.which("g++") or shutil.which("c++")


@functools.cache
def _compiler_identity(cxx: str) -> str:
    try:
        result = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{cxx}: {exc}"
    return f"{cxx}: {result.stdout.strip()}"


@functools.cache
def libmvec_present() -> bool:
    """Whether glibc's vector math library is there (its functions vectorise libm calls)."""
    return ctypes.util.find_library("mvec") is not None


def include_dir() -> Path:
    """The headers installed beside the native extension (``mskernel_cpu/include``)."""
    from .native import load

    return Path(load().__file__).resolve().parent / "include"


@functools.cache
def target_isa() -> str:
    """The instruction set generated code is compiled for: ``MSKERNEL_CPU_ISA`` when it names
    one of :data:`ISA_FLAGS` (x86-64-v4 only where the CPU runs it), else x86-64-v4 on CPUs
    with AVX-512, else x86-64-v3 (what the backend requires)."""
    from . import _cpu_features

    v4 = _cpu_features.has_x86_64_v4()
    wanted = os.environ.get(ISA_ENV, "").strip()
    if wanted and wanted not in ISA_FLAGS:
        warnings.warn(f"{ISA_ENV}={wanted!r} is not one of {', '.join(ISA_FLAGS)}; ignored",
                      RuntimeWarning, stacklevel=2)
    if wanted == "x86-64-v3" or not v4:
        return "x86-64-v3"
    return "x86-64-v4"


def isa_flags() -> tuple[str, ...]:
    return ISA_FLAGS[target_isa()]


def compile_library(source: str) -> Optional[CachedObject]:
    """The shared object of ``source`` from the cache, compiled (and cached) if needed, and
    verified; ``None`` (with a warning) when it cannot be built or loaded safely."""
    cxx = compiler()
    if cxx is None:
        return None
    flags = (*FLAGS, *isa_flags())
    key = hashlib.sha256("\0".join((source, _compiler_identity(cxx), *flags)).encode())
    key_text = key.hexdigest()[:32]
    cache = open_cache()
    try:
        found = cache.lookup(key_text)
    except Refused as exc:
        warnings.warn(f"cpu.fused_elementwise: a cached object is refused ({exc}); compiling "
                      "it again", RuntimeWarning, stacklevel=2)
        JIT_STATS["refused"] += 1
        found = None
    if found is not None:
        JIT_STATS["cached"] += 1
        return found
    try:
        with cache.workspace() as build:
            src = Path(build) / "fused.cpp"
            src.write_text(source, encoding="utf-8")
            built = Path(build) / "fused.so"
            libraries = ["-lmvec"] if libmvec_present() else []
            result = subprocess.run([cxx, *flags, "-I", str(include_dir()), str(src), "-o",
                                     str(built), *libraries],
                                    capture_output=True, text=True, timeout=600)
            if result.returncode != 0:
                raise RuntimeError(result.stderr.strip()[-2000:])
            opened = cache.store(key_text, built)
    except (OSError, RuntimeError, Refused, subprocess.SubprocessError) as exc:
        JIT_STATS["failed"] += 1
        warnings.warn(f"cpu.fused_elementwise: cannot compile generated C++ with {cxx} "
                      f"({exc}); using the interpreter", RuntimeWarning, stacklevel=2)
        return None
    JIT_STATS["compiled"] += 1
    return opened
