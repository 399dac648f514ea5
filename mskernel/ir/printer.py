"""The text form of the IR: :func:`print_graph` writes it, :mod:`.parser` reads it back.

    graph @main(%0: f32[2,1] "x", %1: !ref<f32[2,1]> "fc.bias", %2: !token, %3: bool[] "c") {
      %4 = add(%0, %0) : f32[2,1]  loc("model.py":12)
      %5, %6 = split(%4) {axis=0, sizes=(1, 1)} : f32[1,1], f32[1,1]
      %7 = If(%3, %5) : f32[1,1] {
        then(%8: f32[1,1]) {
          %9 = neg(%8) : f32[1,1]
          return %9
        }
        else(%10: f32[1,1]) {
          return %10
        }
      }
      return %4, %7, %6
    }

Values are numbered in definition order — graph inputs, then each node's outputs followed by
its regions — with one counter for the whole text.  A value's optional name is printed, quoted,
after its type.  A node is ``results = op(inputs) {attributes} : types loc(...) {regions}``;
a node without outputs prints no ``results =`` and ``()`` as its types.

Attribute values: ``1`` (int), ``1.0``/``inf``/``-inf``/``nan`` (float, ``repr`` precision;
a NaN with another sign or payload as ``nan(0x<IEEE bits>)``), ``true``/``false``, ``none``,
``"text"`` (JSON-style escapes, ``\\UXXXXXXXX`` for a non-printable character outside the
BMP), ``f32`` (a dtype, never quoted), ``(1, (2.0,), "a")`` (tuples, nested),
``complex(1.0, -2.0)``, ``dense<f32[2,2]: [1.0, 2.0, 3.0, 4.0]>`` (a NumPy
array, flat in C order, typed by its NumPy storage dtype) and ``scalar<i32: 7>`` (a NumPy
scalar).  An array or scalar whose elements would not read back bit for bit (NaNs with a sign
or payload) is written as its little-endian bytes in hex: ``dense<f32[2]: 0x0000c07f...>``.
"""

from __future__ import annotations

import itertools
import math
import re
import struct
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from .dtypes import DType, dtype as to_dtype
from .types import TensorType

if TYPE_CHECKING:  # Graph.__str__ prints with this module
    from .graph import Graph, Node, Value

INDENT = "  "
#: Names that are written quoted where a bare name is allowed (they start other syntax).
RESERVED = frozenset({"return"})
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")
CANONICAL_NAN_BITS = struct.unpack("<Q", struct.pack("<d", math.nan))[0]
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b",
            "\f": "\\f"}


def print_graph(graph: Graph) -> str:
    """The text form of ``graph`` (ends with a newline); :func:`~.parser.parse_graph` reads it
    back into an identical graph."""
    return _Printer().graph(graph)


def quote(text: str) -> str:
    """``text`` as a double-quoted literal: printable characters as they are, the rest
    escaped."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def symbol(name: str) -> str:
    """A graph, region, op or attribute name: bare when it is an identifier, else quoted."""
    return name if _IDENTIFIER.match(name) and name not in RESERVED else quote(name)


def format_attr(value: Any) -> str:
    """One attribute value in the text form; ``TypeError`` for a value it cannot represent."""
    if value is None:
        return "none"
    if isinstance(value, np.ndarray):
        arr = _native(value)
        return f"dense<{TensorType(to_dtype(arr.dtype), arr.shape)}: {_elements(arr, '[', ']')}>"
    if isinstance(value, np.generic):
        arr = _native(np.asarray(value))
        return f"scalar<{to_dtype(arr.dtype).short}: {_elements(arr, '', '')}>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, complex):
        return f"complex({format_float(value.real)}, {format_float(value.imag)})"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, DType):
        return value.short
    if isinstance(value, tuple):
        items = [format_attr(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    raise TypeError(f"a {type(value).__name__} cannot be an IR attribute value")


def format_float(x: float) -> str:
    """``repr`` of a float, which reads back exactly, with ``inf``/``-inf``/``nan``; a NaN
    other than Python's own carries its IEEE bits: ``nan(0xfff8000000000000)``."""
    if math.isnan(x):
        bits = struct.unpack("<Q", struct.pack("<d", x))[0]
        return "nan" if bits == CANONICAL_NAN_BITS else f"nan({bits:#018x})"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


def _native(arr: np.ndarray) -> np.ndarray:
    """``arr`` in native byte order (the order the IR's dtypes describe)."""
    if arr.dtype.byteorder not in "=|":
        return arr.astype(arr.dtype.newbyteorder("="))
    return arr


def _elements(arr: np.ndarray, open_: str, close: str) -> str:
    """The elements of ``arr`` readable, or as hex bytes when text would not be exact."""
    flat = arr.reshape(-1)
    if flat.size == 0:
        return open_ + close
    texts, values = zip(*(_element(x, flat.dtype.kind) for x in flat))
    rebuilt = np.array(values, dtype=flat.dtype)  # what the parser will make of the text
    if rebuilt.tobytes() == flat.tobytes():
        return open_ + ", ".join(texts) + close
    return "0x" + flat.astype(flat.dtype.newbyteorder("<")).tobytes().hex()


def _element(x: np.generic, kind: str) -> tuple[str, Any]:
    """The text of one array element and the Python value the parser reads from it."""
    if kind == "b":
        return ("true" if x else "false"), bool(x)
    if kind in "iu":
        return str(int(x)), int(x)
    if kind == "c":
        real, real_value = _element(x.real, "f")
        imag, imag_value = _element(x.imag, "f")
        return f"({real}, {imag})", complex(real_value, imag_value)
    text = str(x)  # numpy's shortest form for the element's own type; nan, inf, -inf
    return text, float(text)


class _Printer:
    def __init__(self) -> None:
        self.numbers: dict[Value, int] = {}
        self.counter = itertools.count()
        self.lines: list[str] = []

    def graph(self, graph: Graph) -> str:
        self.lines.append(f"graph @{symbol(graph.name)}({self.params(graph.inputs)}) {{")
        self.body(graph, 1)
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"

    def define(self, value: Value) -> str:
        number = next(self.counter)
        self.numbers[value] = number
        return f"%{number}"

    def use(self, value: Value) -> str:
        number: Optional[int] = self.numbers.get(value)
        return f"%{number}" if number is not None else f"%?undefined#{value.uid}"

    def typed(self, value: Value) -> str:
        return f"{value.type}" + (f" {quote(value.name)}" if value.name is not None else "")

    def params(self, values: tuple[Value, ...]) -> str:
        return ", ".join(f"{self.define(v)}: {self.typed(v)}" for v in values)

    def body(self, graph: Graph, depth: int) -> None:
        for node in graph.nodes:
            self.node(node, depth)
        results = ", ".join(self.use(v) for v in graph.outputs)
        self.lines.append(INDENT * depth + "return" + (f" {results}" if results else ""))

    def node(self, node: Node, depth: int) -> None:
        pad = INDENT * depth
        results = ", ".join(self.define(v) for v in node.outputs)
        text = f"{pad}{results + ' = ' if results else ''}{symbol(node.op)}("
        text += ", ".join(self.use(v) for v in node.inputs) + ")"
        if node.attrs:
            text += " {" + ", ".join(self.attr(node, k) for k in sorted(node.attrs)) + "}"
        text += " : " + (", ".join(self.typed(v) for v in node.outputs) or "()")
        if node.loc is not None:
            text += f"  loc({quote(node.loc.file)}:{node.loc.line})"
        if not node.regions:
            self.lines.append(text)
            return
        self.lines.append(text + " {")
        for region in node.regions:
            params = self.params(region.inputs)
            self.lines.append(f"{pad}{INDENT}{symbol(region.name)}({params}) {{")
            self.body(region, depth + 2)
            self.lines.append(pad + INDENT + "}")
        self.lines.append(pad + "}")

    @staticmethod
    def attr(node: Node, name: str) -> str:
        try:
            return f"{symbol(name)}={format_attr(node.attrs[name])}"
        except TypeError as exc:
            raise TypeError(f"op '{node.op}'{node.where()}: attribute '{name}': {exc}") from None
