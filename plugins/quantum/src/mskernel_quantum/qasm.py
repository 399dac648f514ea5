"""OpenQASM 2.0: reading text into a :class:`~mskernel_quantum.circuit.Circuit` and writing
one out.

Reading understands ``OPENQASM 2.0;``, ``include "qelib1.inc";`` (the only include; its gates
map to this library's, see :mod:`mskernel_quantum.qelib`), ``qreg``/``creg`` (several
registers are laid out one after another), ``gate`` definitions (expanded), the built-ins
``U`` and ``CX``, register broadcasting (``h q;``), ``measure`` (key ``<creg><index>``) and
``barrier`` (dropped).  ``opaque``, ``reset`` and ``if`` are refused with an error naming the
line.  Parameter expressions use numbers, ``pi``, ``+ - * / ^``, ``sin cos tan exp ln sqrt``.

Writing emits one register ``q``, a register ``c`` when the circuit measures, and qelib1.inc
instructions (:mod:`mskernel_quantum.decompose` rewrites gates without a qelib1.inc name).
Parameters must be bound first (OpenQASM 2.0 has no free parameters).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Optional

from .circuit import Circuit
from .decompose import to_qelib
from .errors import ParameterError, QasmError
from .gates import Measure
from .parameters import ParameterExpression, evaluate_expression, format_number
from .qelib import BUILTINS, DEFINITIONS, QELIB

_TOKEN = re.compile(r"""
    (?P<skip>\s+|//[^\n]*)
  | (?P<number>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"[^"\n]*")
  | (?P<symbol>->|==|[;,()\[\]{}+\-*/^])
""", re.VERBOSE)


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    offset: int


@dataclass(frozen=True)
class Call:
    """A gate application inside a ``gate`` body: parameter texts and argument names."""

    name: str
    params: tuple[str, ...]
    args: tuple[str, ...]
    offset: int


@dataclass(frozen=True)
class Definition:
    name: str
    params: tuple[str, ...]
    qargs: tuple[str, ...]
    body: tuple[Call, ...]


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.tokens = self._tokenize()
        self.i = 0
        self.known: dict[str, object] = dict(BUILTINS)  # name -> QelibGate or Definition
        self.qregs: dict[str, tuple[int, int]] = {}     # name -> (first qubit, size)
        self.cregs: dict[str, int] = {}
        self.circuit = Circuit()

    # -- tokens ------------------------------------------------------------------------------

    def _tokenize(self) -> list[Token]:
        tokens, pos = [], 0
        while pos < len(self.text):
            match = _TOKEN.match(self.text, pos)
            if match is None:
                self.fail(f"unexpected character {self.text[pos]!r}", pos)
            kind = match.lastgroup or ""
            if kind != "skip":
                tokens.append(Token(kind, match.group(kind), pos))
            pos = match.end()
        return tokens

    def where(self, offset: int) -> str:
        line = bisect.bisect_right(self.line_starts, offset)
        return f"{line}:{offset - self.line_starts[line - 1] + 1}"

    def fail(self, message: str, offset: int) -> None:
        raise QasmError(f"OpenQASM {self.where(offset)}: {message}")

    def peek(self) -> Token:
        if self.i < len(self.tokens):
            return self.tokens[self.i]
        return Token("end", "", len(self.text))

    def take(self, text: Optional[str] = None, kind: Optional[str] = None) -> Token:
        token = self.peek()
        if (text is not None and token.text != text) or (kind is not None and token.kind != kind):
            want = repr(text) if text is not None else f"a {kind}"
            self.fail(f"expected {want}, found {token.text or 'the end'!r}", token.offset)
        self.i += 1
        return token

    def identifiers(self, closing: str) -> tuple[str, ...]:
        names = [self.take(kind="id").text]
        while self.peek().text == ",":
            self.take(",")
            names.append(self.take(kind="id").text)
        self.take(closing) if closing != "{" else None
        return tuple(names)

    def parameter_texts(self) -> tuple[str, ...]:
        """``( e1, e2 )`` → the source text of each expression (none without parentheses)."""
        if self.peek().text != "(":
            return ()
        self.take("(")
        texts, depth, start = [], 0, self.peek().offset
        while True:
            token = self.take()
            if token.kind == "end":
                self.fail("unclosed '('", token.offset)
            if token.text == "(":
                depth += 1
            elif token.text == ")" and depth:
                depth -= 1
            elif token.text in (",", ")") and not depth:
                texts.append(self.text[start:token.offset])
                if token.text == ")":
                    return tuple(t for t in texts if t.strip() or len(texts) > 1)
                start = self.peek().offset

    # -- statements --------------------------------------------------------------------------

    def read(self) -> Circuit:
        if self.peek().text == "OPENQASM":
            start = self.take().offset
            version = self.take(kind="number").text
            if not version.startswith("2"):
                self.fail(f"OpenQASM {version} is not supported (only 2.0)", start)
            self.take(";")
        while self.peek().kind != "end":
            self.statement()
        return self.circuit

    def statement(self) -> None:
        token = self.take()
        keyword = token.text
        if keyword == "include":
            name = self.take(kind="string").text.strip('"')
            self.take(";")
            if name != "qelib1.inc":
                self.fail(f"cannot include {name!r}: only qelib1.inc is built in", token.offset)
            self.known.update(QELIB)
            _Reader._define_into(self.known, DEFINITIONS)
        elif keyword in ("qreg", "creg"):
            name = self.take(kind="id").text
            self.take("[")
            size = int(self.take(kind="number").text)
            self.take("]")
            self.take(";")
            if name in self.qregs or name in self.cregs:
                self.fail(f"register {name!r} is declared twice", token.offset)
            if keyword == "qreg":
                self.qregs[name] = (sum(s for _, s in self.qregs.values()), size)
            else:
                self.cregs[name] = size
        elif keyword == "gate":
            self.definition(token)
        elif keyword == "measure":
            self.measure(token)
        elif keyword == "barrier":
            while self.take().text != ";":
                pass
        elif keyword in ("opaque", "reset", "if"):
            self.fail(f"'{keyword}' is not supported (circuits here are unitary gates followed "
                      f"by terminal measurements)", token.offset)
        elif token.kind == "id":
            params = self.parameter_texts()
            args = [self.argument()]
            while self.peek().text == ",":
                self.take(",")
                args.append(self.argument())
            self.take(";")
            values = [self.expression(t, {}, token.offset) for t in params]
            for qubits in self.broadcast(args, token.offset):
                self.apply(keyword, values, qubits, token.offset)
        else:
            self.fail(f"unexpected {keyword!r}", token.offset)

    def definition(self, token: Token) -> None:
        name = self.take(kind="id").text
        params: tuple[str, ...] = ()
        if self.peek().text == "(":
            self.take("(")
            params = () if self.peek().text == ")" else self.identifiers(")")
            if not params:
                self.take(")")
        qargs = self.identifiers("{")
        self.take("{")
        body = []
        while self.peek().text != "}":
            call = self.take(kind="id")
            call_params = self.parameter_texts()
            args = self.identifiers(";")
            if call.text != "barrier":
                body.append(Call(call.text, call_params, args, call.offset))
        self.take("}")
        self.known[name] = Definition(name, params, qargs, tuple(body))

    @staticmethod
    def _define_into(known: dict[str, object], text: str) -> None:
        reader = _Reader(text)
        reader.known = known
        while reader.peek().kind != "end":
            reader.definition(reader.take("gate"))

    def argument(self) -> list[int]:
        """``q[3]`` → [its qubit]; ``q`` → every qubit of the register."""
        token = self.take(kind="id")
        if token.text not in self.qregs:
            self.fail(f"unknown quantum register {token.text!r}", token.offset)
        first, size = self.qregs[token.text]
        if self.peek().text != "[":
            return list(range(first, first + size))
        self.take("[")
        index = int(self.take(kind="number").text)
        self.take("]")
        if index >= size:
            self.fail(f"{token.text}[{index}] is outside register {token.text}[{size}]",
                      token.offset)
        return [first + index]

    def broadcast(self, args: list[list[int]], offset: int) -> list[list[int]]:
        sizes = {len(a) for a in args if len(a) > 1}
        if len(sizes) > 1:
            self.fail(f"registers of different sizes {sorted(sizes)} in one statement", offset)
        n = sizes.pop() if sizes else 1
        return [[a[i] if len(a) > 1 else a[0] for a in args] for i in range(n)]

    def measure(self, token: Token) -> None:
        qubits = self.argument()
        self.take("->")
        creg = self.take(kind="id").text
        if creg not in self.cregs:
            self.fail(f"unknown classical register {creg!r}", token.offset)
        if self.peek().text == "[":
            self.take("[")
            bits = [int(self.take(kind="number").text)]
            self.take("]")
        else:
            bits = list(range(self.cregs[creg]))
        self.take(";")
        if len(bits) != len(qubits) or max(bits) >= self.cregs[creg]:
            self.fail(f"measure: {len(qubits)} qubit(s) into {creg} bits {bits}", token.offset)
        for q, b in zip(qubits, bits):
            self.circuit += Measure(f"{creg}{b}").on(q)

    # -- gate applications -------------------------------------------------------------------

    def expression(self, text: str, env: dict[str, ParameterExpression],
                   offset: int) -> ParameterExpression:
        try:
            return evaluate_expression(text, env, free_names=False)
        except ParameterError as exc:
            self.fail(str(exc), offset)
            raise

    def apply(self, name: str, params: list[ParameterExpression], qubits: list[int],
              offset: int) -> None:
        gate = self.known.get(name)
        if gate is None:
            hint = "" if "x" in self.known else ' (missing include "qelib1.inc"?)'
            self.fail(f"unknown gate {name!r}{hint}", offset)
        n_params = len(gate.params) if isinstance(gate, Definition) else gate.n_params
        n_qubits = len(gate.qargs) if isinstance(gate, Definition) else gate.n_qubits
        if len(params) != n_params or len(qubits) != n_qubits:
            self.fail(f"{name} takes {n_params} parameter(s) and {n_qubits} qubit(s), got "
                      f"{len(params)} and {len(qubits)}", offset)
        if len(set(qubits)) != len(qubits):
            self.fail(f"{name} is applied to a qubit twice: {qubits}", offset)
        if isinstance(gate, Definition):
            env = dict(zip(gate.params, params))
            where = dict(zip(gate.qargs, qubits))
            for call in gate.body:
                unknown = [a for a in call.args if a not in where]
                if unknown:
                    self.fail(f"gate {name}: unknown argument(s) {unknown}", call.offset)
                values = [self.expression(t, env, call.offset) for t in call.params]
                self.apply(call.name, values, [where[a] for a in call.args], call.offset)
        else:
            self.circuit += gate.build(params, qubits)


def read_qasm(text: str) -> Circuit:
    """Read OpenQASM 2.0 text (see the module docstring)."""
    return _Reader(text).read()


def _instruction(name: str, angles: tuple[float, ...], qubits: tuple[int, ...]) -> str:
    args = ",".join(f"q[{q}]" for q in qubits)
    params = f"({','.join(format_number(a) for a in angles)})" if angles else ""
    return f"{name}{params} {args};"


def write_qasm(circuit: Circuit) -> str:
    """OpenQASM 2.0 text of ``circuit`` (unitary gates and terminal measurements)."""
    if circuit.params_name:
        raise QasmError(f"OpenQASM 2.0 has no free parameters: bind "
                        f"{', '.join(circuit.params_name)} with circuit.apply_value(...) first")
    measures = sum(isinstance(g, Measure) for g in circuit)
    lines = ["OPENQASM 2.0;", 'include "qelib1.inc";', f"qreg q[{max(circuit.n_qubits, 1)}];"]
    if measures:
        lines.append(f"creg c[{measures}];")
    bit = 0
    for gate in circuit:
        if isinstance(gate, Measure):
            lines.append(f"measure q[{gate.obj_qubits[0]}] -> c[{bit}];")
            bit += 1
        elif not gate.unitary:
            raise QasmError(f"{gate} has no OpenQASM 2.0 form (noise channels are not gates)")
        else:
            lines.extend(_instruction(*ins) for ins in to_qelib(gate))
    return "\n".join(lines) + "\n"
