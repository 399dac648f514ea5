"""Algebraic simplification: the generic ``simplify`` pass and its pattern tables.

Every rule keeps the node's type: an operand replaces an arithmetic node only when it already
has the node's exact shape and dtype (``x + zeros(3,4)`` with ``x : f32[4]`` stays), so no rule
ever broadcasts or casts.  Arithmetic rules:

- ``x * 1``, ``1 * x``, ``x / 1`` → ``x`` for real dtypes.  Not for complex ones: NumPy's
  (and IEEE's) complex product ``(inf + 1j) * (1 + 0j)`` is ``inf + nanj``, not the operand.
- ``x + 0``, ``0 + x``, ``x - 0`` → ``x``.  For floats this returns ``-0.0`` where the graph
  computed ``-0.0 + 0.0 = +0.0``: equal numbers, as in XLA's and TVM's simplifiers.
- ``x * 0`` is never rewritten for floats (``inf * 0`` and ``nan * 0`` are NaN).
- ``neg(neg(x))`` → ``x`` (exact, also for wrapping integers).

A constant operand is a ``constant`` node whose elements are all equal, or a ``full`` node;
the comparison is made on the value as stored in the node's dtype.

Shape rules: ``transpose(transpose(x))`` → one transpose, removed when its permutation is
the identity, a ``reshape`` when it moves only size-1 axes (no copy on backends whose
reshapes are views: autodiff moves the batch axis of a convolution's single input channel
so); chains of ``reshape``/``squeeze``/``expand_dims`` → one ``reshape``; and
``reshape``, ``broadcast_to``, ``squeeze``, ``expand_dims`` and ``cast`` whose result has the
type of their input → the input.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np

from ..ir.dtypes import as_storage
from ..ir.graph import Node, Value
from ..ir.types import TensorType
from .base import PassContext
from .patterns import PatternPass, PatternResult, Patterns, make_node

Producers = Mapping[Value, Node]


def splat_value(value: Value, producers: Producers) -> Optional[Any]:
    """The single value of every element of ``value`` when it is made by a ``constant``
    with all elements equal or by a ``full`` (as stored in its dtype), else ``None``."""
    node = producers.get(value)
    if node is None or not isinstance(value.type, TensorType):
        return None
    if node.op == "full":
        return as_storage(np.asarray(node.attrs["value"]), value.type.dtype)[()]
    if node.op == "constant":
        stored = as_storage(node.attrs["value"], value.type.dtype)
        if stored.size and np.all(stored == stored.flat[0]):
            return stored.flat[0]
    return None


def _identity_operand(neutral: int, operands: tuple[int, ...], *, real_only: bool):
    """A rule replacing ``x op c`` by ``x`` when ``c`` is a splat of ``neutral`` and ``x``
    has the result's type; ``operands`` lists the positions ``x`` may take."""

    def pattern(node: Node, producers: Producers, context: PassContext) -> PatternResult:
        out = node.output.type
        assert isinstance(out, TensorType)  # an arithmetic op's result
        if real_only and out.dtype.is_complex:
            return None
        for position in operands:
            x, c = node.inputs[position], node.inputs[1 - position]
            if x.type == out and splat_value(c, producers) == neutral:
                return x
        return None

    return pattern


def double_negation(node: Node, producers: Producers, context: PassContext) -> PatternResult:
    inner = producers.get(node.inputs[0])
    if inner is not None and inner.op == "neg":
        return inner.inputs[0]
    return None


ARITHMETIC = Patterns([
    ("mul", _identity_operand(1, (0, 1), real_only=True)),
    ("div", _identity_operand(1, (0,), real_only=True)),
    ("add", _identity_operand(0, (0, 1), real_only=False)),
    ("sub", _identity_operand(0, (0,), real_only=False)),
    ("neg", double_negation),
])


def _permutation(node: Node) -> tuple[int, ...]:
    x = node.inputs[0].type
    assert isinstance(x, TensorType)  # transpose's operand
    rank = x.rank
    perm = node.attrs["perm"]
    if perm is None:
        return tuple(reversed(range(rank)))
    return tuple(p % rank for p in perm)


def transpose_chain(node: Node, producers: Producers, context: PassContext) -> PatternResult:
    """``transpose(x, identity)`` → ``x``; a transpose moving only size-1 axes → a
    ``reshape`` (the elements keep their order); ``transpose(transpose(x, p), q)`` →
    ``transpose(x, p∘q)``: output axis i is input axis ``p[q[i]]``."""
    perm = _permutation(node)
    if perm == tuple(range(len(perm))):
        return node.inputs[0]
    x = node.inputs[0].type
    assert isinstance(x, TensorType)  # transpose's operand
    shape = x.shape
    moved = [axis for axis in perm if shape[axis] != 1]
    if moved == sorted(moved):
        return make_node(context, "reshape", node.inputs[0],
                         shape=tuple(shape[axis] for axis in perm))
    inner = producers.get(node.inputs[0])
    if inner is None or inner.op != "transpose":
        return None
    first = _permutation(inner)
    return make_node(context, "transpose", inner.inputs[0], perm=tuple(first[i] for i in perm))


RESHAPES = ("reshape", "squeeze", "expand_dims")


def reshape_chain(node: Node, producers: Producers, context: PassContext) -> PatternResult:
    """A reshape-like op of a reshape-like op → one ``reshape`` of the first one's input."""
    inner = producers.get(node.inputs[0])
    if inner is None or inner.op not in RESHAPES:
        return None
    out = node.output.type
    assert isinstance(out, TensorType)  # a reshape's result
    return make_node(context, "reshape", inner.inputs[0], shape=out.shape)


def same_type_noop(node: Node, producers: Producers, context: PassContext) -> PatternResult:
    """An op that only reshapes, broadcasts or converts, and whose result has its input's
    type, is the identity."""
    x = node.inputs[0]
    return x if x.type == node.output.type else None


SHAPES = Patterns([
    ("transpose", transpose_chain),
    ((*RESHAPES, "broadcast_to", "cast"), same_type_noop),
    (RESHAPES, reshape_chain),
    # ops that only mark a value for a transform (autodiff's stop_gradient) and compute x
    ("trait:identity", same_type_noop),
])

SIMPLIFY = PatternPass("simplify", ARITHMETIC + SHAPES)
