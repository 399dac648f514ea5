"""Named circuit parameters and the linear expressions gates take: ``2*theta + 0.5``.

A :class:`ParameterExpression` is ``sum_k c_k * name_k + const`` with real coefficients.  Gates
hold expressions, so one named parameter can drive several gates with different scales, and
the chain rule of a gradient is just the coefficients.  Expressions are immutable, compare by
value, and print in a form :meth:`ParameterExpression.parse` reads back.

The expression reader is shared with the OpenQASM reader: it understands numbers, ``pi``,
``+ - * / ^`` (``**`` too), parentheses and the OpenQASM 2.0 functions ``sin cos tan exp ln
sqrt`` (whose arguments must be constant), and keeps the result linear in the names.
"""

from __future__ import annotations

import math
import re
from types import MappingProxyType
from typing import Callable, Mapping, Optional, Union

from .errors import ParameterError

Number = Union[int, float]
ExpressionLike = Union["ParameterExpression", Number, str, Mapping[str, Number]]

FUNCTIONS: dict[str, Callable[[float], float]] = {
    "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "exp": math.exp, "ln": math.log, "sqrt": math.sqrt,
}
RESERVED = frozenset({"pi", *FUNCTIONS})


def format_number(x: float) -> str:
    """The shortest text that reads back as exactly ``x`` (``2.0`` prints as ``2``)."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


class ParameterExpression:
    """``sum_k coeffs[name_k] * name_k + const``, immutable."""

    __slots__ = ("_coeffs", "_const")

    def __init__(self, coeffs: Optional[Mapping[str, Number]] = None, const: Number = 0.0):
        cleaned: dict[str, float] = {}
        for name, c in (coeffs or {}).items():
            check_name(name)
            if float(c) != 0.0:
                cleaned[name] = float(c)
        self._coeffs = MappingProxyType(cleaned)
        self._const = float(const) + 0.0  # no negative zero

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def coerce(cls, value: ExpressionLike) -> "ParameterExpression":
        """An expression from a number, an expression text (``"2*theta + 0.5"``), a mapping
        ``{name: coefficient}`` (MindQuantum's form) or an expression."""
        if isinstance(value, ParameterExpression):
            return value
        if isinstance(value, str):
            return cls.parse(value)
        if isinstance(value, Mapping):
            return cls(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(
                value, "__float__"):
            raise ParameterError(f"a gate parameter must be a number, a name or an expression, "
                                 f"got {value!r}")
        if isinstance(value, complex):
            raise ParameterError(f"a gate parameter must be real, got {value!r}")
        return cls(const=float(value))

    @classmethod
    def parse(cls, text: str) -> "ParameterExpression":
        """Read ``"2*theta + 0.5"``, ``"-phi/2"``, ``"pi/4"``: see the module docstring."""
        return evaluate_expression(text)

    # -- inspection --------------------------------------------------------------------------

    @property
    def coeffs(self) -> Mapping[str, float]:
        return self._coeffs

    @property
    def const(self) -> float:
        return self._const

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._coeffs)

    @property
    def is_constant(self) -> bool:
        return not self._coeffs

    @property
    def value(self) -> float:
        """The value of a constant expression."""
        if self._coeffs:
            raise ParameterError(f"'{self}' depends on {', '.join(self.names)}; give values")
        return self._const

    def evaluate(self, values: Mapping[str, float]) -> float:
        missing = [n for n in self._coeffs if n not in values]
        if missing:
            raise ParameterError(f"no value for parameter(s) {', '.join(missing)} of '{self}'")
        return self._const + sum(c * float(values[n]) for n, c in self._coeffs.items())

    def bind(self, values: Mapping[str, float]) -> "ParameterExpression":
        """Substitute the names that ``values`` gives; the others stay symbolic."""
        const = self._const + sum(c * float(values[n]) for n, c in self._coeffs.items()
                                  if n in values)
        rest = {n: c for n, c in self._coeffs.items() if n not in values}
        return ParameterExpression(rest, const)

    # -- arithmetic (linear only) ------------------------------------------------------------

    def __add__(self, other: ExpressionLike) -> "ParameterExpression":
        other = _operand(other)
        if other is NotImplemented:
            return NotImplemented
        coeffs = dict(self._coeffs)
        for n, c in other._coeffs.items():
            coeffs[n] = coeffs.get(n, 0.0) + c
        return ParameterExpression(coeffs, self._const + other._const)

    __radd__ = __add__

    def __neg__(self) -> "ParameterExpression":
        return self * -1.0

    def __sub__(self, other: ExpressionLike) -> "ParameterExpression":
        other = _operand(other)
        return NotImplemented if other is NotImplemented else self + (-other)

    def __rsub__(self, other: ExpressionLike) -> "ParameterExpression":
        other = _operand(other)
        return NotImplemented if other is NotImplemented else other + (-self)

    def __mul__(self, other: ExpressionLike) -> "ParameterExpression":
        other = _operand(other)
        if other is NotImplemented:
            return NotImplemented
        if not self.is_constant and not other.is_constant:
            raise ParameterError(f"({self}) * ({other}) is not linear in the parameters")
        scale, expr = (self._const, other) if self.is_constant else (other._const, self)
        return ParameterExpression({n: c * scale for n, c in expr._coeffs.items()},
                                   expr._const * scale)

    __rmul__ = __mul__

    def __truediv__(self, other: ExpressionLike) -> "ParameterExpression":
        other = _operand(other)
        if other is NotImplemented:
            return NotImplemented
        if not other.is_constant:
            raise ParameterError(f"({self}) / ({other}) is not linear in the parameters")
        if other._const == 0.0:
            raise ParameterError(f"({self}) / 0: division by zero")
        return self * (1.0 / other._const)

    # -- identity and printing ---------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            other = ParameterExpression(const=other)
        if not isinstance(other, ParameterExpression):
            return NotImplemented
        return dict(self._coeffs) == dict(other._coeffs) and self._const == other._const

    def __hash__(self) -> int:
        return hash((frozenset(self._coeffs.items()), self._const))

    def __str__(self) -> str:
        parts: list[str] = []
        for name, c in self._coeffs.items():
            magnitude = "" if abs(c) == 1.0 else f"{format_number(abs(c))}*"
            parts.append(("-" if c < 0 else "+") + f"{magnitude}{name}")
        if self._const != 0.0 or not parts:
            parts.append(("-" if math.copysign(1.0, self._const) < 0 else "+")
                         + format_number(abs(self._const)))
        text = " ".join(f"{p[0]} {p[1:]}" for p in parts)
        return text[2:] if text.startswith("+") else "-" + text[2:]

    def __repr__(self) -> str:
        return f"ParameterExpression('{self}')"

    def to_dict(self) -> dict:
        """Plain data for serialisation: ``{"coeffs": {...}, "const": c}``."""
        return {"coeffs": dict(self._coeffs), "const": self._const}

    @classmethod
    def from_dict(cls, data: Mapping) -> "ParameterExpression":
        return cls(data.get("coeffs", {}), data.get("const", 0.0))


def Parameter(name: str) -> ParameterExpression:  # noqa: N802 - reads as a type to users
    """The expression ``1 * name``: ``theta = Parameter("theta"); RX(2 * theta + 0.5)``."""
    check_name(name)
    return ParameterExpression({name: 1.0})


def check_name(name: str) -> None:
    if not isinstance(name, str) or not name.isidentifier() or name in RESERVED:
        raise ParameterError(f"{name!r} cannot name a parameter: use an identifier other than "
                             f"{', '.join(sorted(RESERVED))}")


def _operand(value: object) -> "ParameterExpression":
    if isinstance(value, ParameterExpression):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return ParameterExpression(const=value)
    return NotImplemented  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------
# the expression reader
# ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"""\s*(?:
    (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\*\*|[-+*/^(),]))""", re.VERBOSE)


class _Reader:
    def __init__(self, text: str, env: Optional[Mapping[str, ParameterExpression]],
                 free_names: bool) -> None:
        self.text, self.env, self.free_names = text, env or {}, free_names
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text.rstrip()):
            match = _TOKEN.match(text, pos)
            if match is None or match.end() == pos:
                column = pos + _lstrip(text, pos)
                self.fail(f"unexpected character {text[column]!r}", column)
            kind = match.lastgroup or ""
            self.tokens.append((kind, match.group(kind), match.start(kind)))
            pos = match.end()
        self.i = 0

    def fail(self, message: str, column: int) -> None:
        raise ParameterError(f"cannot read expression {self.text!r}: {message} "
                             f"at column {column + 1}")

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", "", len(self.text))

    def take(self, op: Optional[str] = None) -> tuple[str, str, int]:
        token = self.peek()
        if op is not None and token[1] != op:
            self.fail(f"expected {op!r}, found {token[1] or 'the end'!r}", token[2])
        self.i += 1
        return token

    def expression(self) -> ParameterExpression:
        value = self.term()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            right = self.term()
            value = value + right if op == "+" else value - right
        return value

    def term(self) -> ParameterExpression:
        value = self.unary()
        while self.peek()[1] in ("*", "/"):
            _, op, column = self.take()
            right = self.unary()
            try:
                value = value * right if op == "*" else value / right
            except ParameterError as exc:
                self.fail(str(exc), column)
        return value

    def unary(self) -> ParameterExpression:
        if self.peek()[1] in ("+", "-"):
            sign = self.take()[1]
            value = self.unary()
            return -value if sign == "-" else value
        return self.power()

    def power(self) -> ParameterExpression:
        base = self.atom()
        if self.peek()[1] in ("^", "**"):
            column = self.take()[2]
            exponent = self.unary()
            if not (base.is_constant and exponent.is_constant):
                self.fail("a power of a parameter is not linear", column)
            return ParameterExpression(const=base.const ** exponent.const)
        return base

    def atom(self) -> ParameterExpression:
        kind, text, column = self.take()
        if kind == "number":
            return ParameterExpression(const=float(text))
        if text == "(":
            value = self.expression()
            self.take(")")
            return value
        if kind == "name":
            if text == "pi":
                return ParameterExpression(const=math.pi)
            if text in FUNCTIONS:
                self.take("(")
                argument = self.expression()
                self.take(")")
                if not argument.is_constant:
                    self.fail(f"{text}() of a parameter is not linear", column)
                try:
                    return ParameterExpression(const=FUNCTIONS[text](argument.const))
                except ValueError:
                    self.fail(f"{text}({format_number(argument.const)}) is undefined", column)
            if text in self.env:
                return self.env[text]
            if self.free_names:
                return Parameter(text)
            self.fail(f"unknown name {text!r}", column)
        self.fail(f"expected a number, a name or '(', found {text or 'the end'!r}", column)
        raise AssertionError("unreachable")


def _lstrip(text: str, pos: int) -> int:
    return len(text[pos:]) - len(text[pos:].lstrip())


def evaluate_expression(text: str, env: Optional[Mapping[str, ParameterExpression]] = None,
                        *, free_names: bool = True) -> ParameterExpression:
    """Read ``text`` into an expression.  Names in ``env`` stand for the given expressions;
    other names become parameters when ``free_names`` is true and are an error otherwise."""
    reader = _Reader(text, env, free_names)
    if not reader.tokens:
        reader.fail("the expression is empty", 0)
    value = reader.expression()
    kind, rest, column = reader.peek()
    if kind != "end":
        reader.fail(f"unexpected {rest!r}", column)
    return value
