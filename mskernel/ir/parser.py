"""Reading the text form of the IR (see :mod:`.printer` for the syntax) back into a
:class:`~mskernel.ir.graph.Graph`.

A small tokenizer and a recursive-descent parser; nothing in the text is ever evaluated as
code.  Each node goes through the op registry as if it were built again: its attributes are
bound (defaults filled in), its type rule runs, and the inferred types must equal the printed
ones.  Every problem raises :class:`~mskernel.errors.ParseError` with ``line:column``, what
was expected and the offending line — also for text no printer writes (attributes or regions
nested deeper than ``MAX_NESTING``, integers longer than Python converts, a type rule failing
on odd attributes), since the text may come from a file.  ``%``-labels are local to the text:
a region is closed, so it sees only its own inputs.  ``//`` starts a comment that runs to the
end of the line.
"""

from __future__ import annotations

import math
import re
import struct
import sys
from dataclasses import dataclass
from typing import Any, Callable, NoReturn, Optional

import numpy as np

from ..defaults import or_default_ops
from ..errors import MskernelError, ParseError
from .dtypes import DType, bfloat16, dtype as to_dtype
from .graph import Graph, Node, SourceLoc, Value
from .lookup import OpLookup, OpSchema
from .types import TOKEN, RefType, TensorType, Type

_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\n]+|//[^\n]*)
  | (?P<value>%[A-Za-z0-9_.]+)
  | (?P<hex>0x[0-9A-Fa-f]*)
  | (?P<number>-?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<punct>[(){}\[\]<>,:=!@-])
""", re.VERBOSE)
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "n": "\n", "t": "\t", "r": "\r",
                   "b": "\b", "f": "\f"}
_KEYWORDS = {"true": True, "false": False, "none": None}
#: How deep attribute tuples and regions may nest (each level is a few Python frames).
MAX_NESTING = 100


@dataclass(frozen=True)
class _Token:
    kind: str  # value, hex, number, ident, string, punct, end
    text: str
    line: int
    col: int

    def describe(self) -> str:
        return "end of input" if self.kind == "end" else repr(self.text)


def parse_graph(text: str, registry: Optional[OpLookup[OpSchema]] = None) -> Graph:
    """Parse the text form of one graph.  ``registry`` resolves op names (default: the
    process's op registry)."""
    return _Parser(text, or_default_ops(registry)).graph()


def unquote(literal: str, fail: Callable[[str, int], NoReturn]) -> str:
    """Decode a double-quoted literal as :func:`~.printer.quote` writes it; ``fail(message,
    offset)`` reports a bad escape at ``offset`` into the literal."""
    out: list[str] = []
    i, end = 1, len(literal) - 1
    while i < end:
        ch = literal[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        code = literal[i + 1]
        if code in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[code])
            i += 2
            continue
        width = {"u": 4, "U": 8}.get(code)
        digits = literal[i + 2:i + 2 + width] if width else ""
        if not width or len(digits) != width or not re.fullmatch(r"[0-9A-Fa-f]+", digits):
            fail(f"invalid escape sequence {literal[i:i + 2 + (width or 0)]!r} in string", i)
        if int(digits, 16) > 0x10FFFF:
            fail(f"escape \\U{digits} is beyond the last Unicode code point", i)
        out.append(chr(int(digits, 16)))
        i += 2 + width
    return "".join(out)


class _Parser:
    def __init__(self, text: str, registry: OpLookup[OpSchema]) -> None:
        self.lines = text.split("\n")
        self.registry = registry
        self.tokens = self._tokenize(text)
        self.pos = 0
        self.region_depth = 0
        self.tuple_depth = 0

    # -- tokens --------------------------------------------------------------------------------

    def _tokenize(self, text: str) -> list[_Token]:
        tokens: list[_Token] = []
        pos, line, line_start = 0, 1, 0
        while pos < len(text):
            match = _TOKEN.match(text, pos)
            if match is None:
                what = ("unterminated string literal" if text[pos] == '"'
                        else f"unexpected character {text[pos]!r}")
                self._fail_at(line, pos - line_start + 1, what)
            kind = match.lastgroup
            assert kind is not None
            if kind != "space":
                tokens.append(_Token(kind, match.group(), line, pos - line_start + 1))
            newlines = match.group().count("\n")
            if newlines:
                line += newlines
                line_start = match.start() + match.group().rindex("\n") + 1
            pos = match.end()
        tokens.append(_Token("end", "", line, pos - line_start + 1))
        return tokens

    def _fail_at(self, line: int, col: int, message: str) -> NoReturn:
        source = self.lines[line - 1] if line - 1 < len(self.lines) else ""
        raise ParseError(f"{line}:{col}: {message}\n  {source}\n  {' ' * (col - 1)}^")

    def fail(self, message: str, token: Optional[_Token] = None) -> NoReturn:
        token = token or self.peek()
        self._fail_at(token.line, token.col, message)

    def expected(self, what: str) -> NoReturn:
        self.fail(f"expected {what}, found {self.peek().describe()}")

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def advance(self) -> _Token:
        token = self.peek()
        self.pos += 1
        return token

    def at(self, text: str, ahead: int = 0) -> bool:
        token = self.peek(ahead)
        return token.kind in ("punct", "ident") and token.text == text

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.pos += 1
            return True
        return False

    def expect(self, text: str) -> _Token:
        if not self.at(text):
            self.expected(repr(text))
        return self.advance()

    def take(self, kind: str, what: str) -> _Token:
        if self.peek().kind != kind:
            self.expected(what)
        return self.advance()

    def string(self) -> str:
        token = self.take("string", "a quoted string")
        return unquote(token.text, lambda msg, offset: self._fail_at(
            token.line, token.col + offset, msg))

    def name(self, what: str) -> str:
        """A bare identifier or a quoted string."""
        if self.peek().kind == "string":
            return self.string()
        return self.take("ident", what).text

    def comma_list(self, close: str, item: Callable[[], Any]) -> list[Any]:
        """Items separated by commas up to (and consuming) ``close``."""
        items: list[Any] = []
        if self.accept(close):
            return items
        items.append(item())
        while self.accept(","):
            items.append(item())
        self.expect(close)
        return items

    # -- graphs --------------------------------------------------------------------------------

    def graph(self) -> Graph:
        self.expect("graph")
        self.expect("@")
        graph = self.graph_body(self.name("a graph name"))
        if self.peek().kind != "end":
            self.expected("end of input after the graph")
        return graph

    def graph_body(self, name: str) -> Graph:
        """``(params) { statements return ... }`` with a fresh scope (graphs are closed)."""
        scope: dict[str, Value] = {}
        self.expect("(")
        inputs = self.comma_list(")", lambda: self.param(scope))
        self.expect("{")
        nodes: list[Node] = []
        while not self.at("return"):
            if self.at("}") or self.peek().kind == "end":
                self.expected("'return' ending the graph")
            nodes.append(self.node(scope))
        self.advance()
        outputs = []
        if self.peek().kind == "value":
            outputs.append(self.use(scope))
            while self.accept(","):
                outputs.append(self.use(scope))
        self.expect("}")
        return Graph(tuple(inputs), tuple(nodes), tuple(outputs), name)

    def param(self, scope: dict[str, Value]) -> Value:
        label = self.take("value", "a value such as %0")
        self.expect(":")
        value = self.typed_value()
        self.define(scope, label, value)
        return value

    def define(self, scope: dict[str, Value], label: _Token, value: Value) -> None:
        if label.text in scope:
            self.fail(f"value {label.text} is defined twice", label)
        scope[label.text] = value

    def use(self, scope: dict[str, Value]) -> Value:
        label = self.take("value", "a value such as %0")
        value = scope.get(label.text)
        if value is None:
            hint = " (regions see only their own inputs)" if self.region_depth else ""
            self.fail(f"value {label.text} is not defined before this use{hint}", label)
        return value

    def typed_value(self) -> Value:
        """``type ["name"]`` as a fresh value."""
        t = self.type()
        name = self.string() if self.peek().kind == "string" else None
        return Value(t, name)

    # -- nodes ---------------------------------------------------------------------------------

    def node(self, scope: dict[str, Value]) -> Node:
        labels: list[_Token] = []
        if self.peek().kind == "value":
            labels.append(self.advance())
            while self.accept(","):
                labels.append(self.take("value", "a value such as %0"))
            self.expect("=")
        op_token = self.peek()
        if op_token.kind not in ("ident", "string"):
            self.expected("an op name")
        op = self.name("an op name")
        self.expect("(")
        inputs = self.comma_list(")", lambda: self.use(scope))
        attrs = self.attr_dict() if self.at("{") else {}
        self.expect(":")
        outputs = self.result_types()
        if len(outputs) != len(labels):
            self.fail(f"op '{op}' defines {len(labels)} value(s) but lists "
                      f"{len(outputs)} result type(s)", op_token)
        loc = self.loc() if self.at("loc") and self.at("(", 1) else None
        regions = self.regions() if self.at("{") else []
        node = self.checked_node(op_token, op, inputs, attrs, outputs, regions, loc)
        for label, value in zip(labels, outputs):
            self.define(scope, label, value)
        return node

    def result_types(self) -> list[Value]:
        """``()`` for no results, else ``type ["name"], ...``."""
        if self.accept("("):
            self.expect(")")
            return []
        values = [self.typed_value()]
        while self.accept(","):
            values.append(self.typed_value())
        return values

    def loc(self) -> SourceLoc:
        self.expect("loc")
        self.expect("(")
        file = self.string()
        self.expect(":")
        line = self.int_literal("a line number")
        self.expect(")")
        return SourceLoc(file, line)

    def regions(self) -> list[Graph]:
        self.expect("{")
        regions = []
        self.region_depth += 1
        self.check_nesting(self.region_depth, "regions")
        while not self.accept("}"):
            if self.peek().kind not in ("ident", "string"):
                self.expected("a region such as then(...) { ... } or '}'")
            regions.append(self.graph_body(self.name("a region name")))
        self.region_depth -= 1
        return regions

    def checked_node(self, token: _Token, op: str, inputs: list[Value], attrs: dict[str, Any],
                     outputs: list[Value], regions: list[Graph], loc: Optional[SourceLoc]) -> Node:
        """The node, after the registry has bound its attributes and its type rule agrees
        with the printed result types."""
        try:
            opdef = self.registry.get(op)
            bound = opdef.bind_attrs(attrs, loc=loc)
            inferred, _ = opdef.infer_outputs([v.type for v in inputs], bound,
                                              regions=regions, loc=loc)
        except MskernelError as exc:
            self.fail(str(exc), token)
        except Exception as exc:  # a type rule that did not foresee such attributes
            self.fail(f"op '{op}' cannot take these inputs and attributes "
                      f"({type(exc).__name__}: {exc})", token)
        printed = tuple(v.type for v in outputs)
        if tuple(inferred) != printed:
            self.fail(f"op '{op}' infers result type(s) {_types(inferred)} but the text "
                      f"says {_types(printed)}", token)
        return Node(op, tuple(inputs), tuple(outputs), bound, tuple(regions), loc)

    # -- types ---------------------------------------------------------------------------------

    def type(self) -> Type:
        if self.accept("!"):
            kind = self.take("ident", "'token' or 'ref' after '!'")
            if kind.text == "token":
                return TOKEN
            if kind.text == "ref":
                self.expect("<")
                inner = self.tensor_type()
                self.expect(">")
                return RefType(inner)
            self.fail(f"unknown type !{kind.text}; expected !token or !ref<...>", kind)
        return self.tensor_type()

    def dtype(self) -> DType:
        token = self.take("ident", "a dtype such as f32")
        try:
            return to_dtype(token.text)
        except TypeError as exc:
            self.fail(str(exc), token)

    def tensor_type(self) -> TensorType:
        dt = self.dtype()
        self.expect("[")
        shape = self.comma_list("]", lambda: self.int_literal("a dimension"))
        if any(d < 0 for d in shape):
            self.fail(f"negative dimension in shape {shape}")
        return TensorType(dt, tuple(shape))

    def int_literal(self, what: str) -> int:
        token = self.peek()
        if token.kind != "number" or not re.fullmatch(r"-?[0-9]+", token.text):
            self.expected(what)
        return self.integer(self.advance())

    def integer(self, token: _Token) -> int:
        try:
            return int(token.text)
        except ValueError:  # beyond the interpreter's int-string limit
            self.fail(f"an integer of {len(token.text.lstrip('-'))} digits, more than "
                      f"{sys.get_int_max_str_digits()}", token)

    def check_nesting(self, depth: int, what: str) -> None:
        """Called after the opening bracket of one more level."""
        if depth > MAX_NESTING:
            self.fail(f"{what} nested more than {MAX_NESTING} deep", self.tokens[self.pos - 1])

    # -- attributes ----------------------------------------------------------------------------

    def attr_dict(self) -> dict[str, Any]:
        self.expect("{")
        attrs: dict[str, Any] = {}

        def item() -> None:
            key_token = self.peek()
            key = self.name("an attribute name")
            if key in attrs:
                self.fail(f"attribute '{key}' is given twice", key_token)
            self.expect("=")
            attrs[key] = self.attr_value()

        self.comma_list("}", item)
        return attrs

    def attr_value(self) -> Any:
        token = self.peek()
        if token.kind == "string":
            return self.string()
        if token.kind == "number":
            self.advance()
            return (self.integer(token) if re.fullmatch(r"-?[0-9]+", token.text)
                    else float(token.text))
        if self.accept("-"):
            if not self.accept("inf"):
                self.expected("'inf' after '-'")
            return float("-inf")
        if self.accept("("):
            return self.tuple_rest()
        if token.kind != "ident":
            self.expected("an attribute value")
        if token.text in _KEYWORDS:
            self.advance()
            return _KEYWORDS[token.text]
        if token.text in ("inf", "nan"):
            return self.float_literal()
        if token.text == "complex" and self.at("(", 1):
            self.pos += 2
            return self.complex_rest()
        if token.text in ("dense", "scalar") and self.at("<", 1):
            self.pos += 2
            return self.dense() if token.text == "dense" else self.scalar()
        return self.dtype()

    def tuple_rest(self) -> tuple[Any, ...]:
        """The items of a tuple after its ``(``; ``(x,)`` has one item."""
        self.tuple_depth += 1
        self.check_nesting(self.tuple_depth, "tuples")
        items: list[Any] = []
        while not self.accept(")"):
            items.append(self.attr_value())
            if not self.accept(","):
                self.expect(")")
                break
        self.tuple_depth -= 1
        return tuple(items)

    def float_literal(self) -> float:
        token = self.peek()
        if token.kind == "number":
            self.advance()
            return float(token.text)
        if self.accept("-"):
            self.expect("inf")
            return float("-inf")
        if self.accept("inf"):
            return float("inf")
        if self.accept("nan"):
            return self.nan_bits() if self.at("(") else float("nan")
        self.expected("a number")

    def complex_rest(self) -> complex:
        """``real, imag)`` after the ``(`` of a complex number."""
        real = self.float_literal()
        self.expect(",")
        imag = self.float_literal()
        self.expect(")")
        return complex(real, imag)

    def nan_bits(self) -> float:
        """``(0x<IEEE bits>)`` after ``nan``: a NaN with a sign or payload."""
        self.expect("(")
        token = self.take("hex", "the bits of a NaN such as 0xfff8000000000000")
        digits = token.text[2:]
        value = 0.0
        if 0 < len(digits) <= 16:
            value = struct.unpack("<d", int(digits, 16).to_bytes(8, "little"))[0]
        if not math.isnan(value):
            self.fail(f"{token.text} is not the bits of a 64-bit NaN", token)
        self.expect(")")
        return float(value)

    # -- array constants -----------------------------------------------------------------------

    def dense(self) -> np.ndarray:
        """``f32[2,2]: [1.0, 2.0, 3.0, 4.0]>`` or ``f32[2,2]: 0x...>`` after ``dense<``."""
        start = self.peek()
        t = self.tensor_type()
        self.expect(":")
        storage = self.storage_of(t.dtype, start)
        if self.peek().kind == "hex":
            flat = self.hex_elements(storage)
        else:
            self.expect("[")
            values = self.comma_list("]", lambda: self.element(storage))
            flat = self.array(values, storage, start)
        self.expect(">")
        if flat.size != t.size:
            self.fail(f"dense constant of type {t} needs {t.size} element(s), "
                      f"got {flat.size}", start)
        try:
            return flat.reshape(t.shape)
        except ValueError as exc:  # an empty array with a dimension beyond NumPy's
            self.fail(f"dense constant of type {t}: {exc}", start)

    def scalar(self) -> np.generic:
        """``i32: 7>`` or ``f32: 0x...>`` after ``scalar<``."""
        start = self.peek()
        storage = self.storage_of(self.dtype(), start)
        self.expect(":")
        if self.peek().kind == "hex":
            flat = self.hex_elements(storage)
        else:
            flat = self.array([self.element(storage)], storage, start)
        self.expect(">")
        if flat.size != 1:
            self.fail(f"a scalar constant needs 1 element, got {flat.size}", start)
        value: np.generic = flat[0]
        return value

    def storage_of(self, dt: DType, token: _Token) -> np.dtype:
        if dt is bfloat16:
            self.fail("array constants are typed by their NumPy storage; bfloat16 values are "
                      "stored as f32", token)
        return dt.storage

    def element(self, storage: np.dtype) -> Any:
        kind = storage.kind
        if kind == "b":
            token = self.peek()
            if not (self.at("true") or self.at("false")):
                self.expected("true or false")
            self.advance()
            return token.text == "true"
        if kind in "iu":
            return self.int_literal("an integer")
        if kind == "c":
            self.expect("(")
            return self.complex_rest()
        return self.float_literal()

    def array(self, values: list[Any], storage: np.dtype, start: _Token) -> np.ndarray:
        try:
            return np.array(values, dtype=storage)
        except (OverflowError, ValueError) as exc:
            self.fail(f"element out of range for {to_dtype(storage).short}: {exc}", start)

    def hex_elements(self, storage: np.dtype) -> np.ndarray:
        token = self.advance()
        digits = token.text[2:]
        if len(digits) % 2:
            self.fail("hex bytes need an even number of digits", token)
        if len(digits) // 2 % storage.itemsize:
            self.fail(f"{len(digits) // 2} byte(s) of hex is not a whole number of "
                      f"{storage.itemsize}-byte elements", token)
        little = np.frombuffer(bytes.fromhex(digits), dtype=storage.newbyteorder("<"))
        return little.astype(storage)


def _types(types: tuple[Type, ...]) -> str:
    return ", ".join(str(t) for t in types) or "()"
