"""Derivatives of ``matmul`` and ``einsum``.

Both are multilinear, so their JVPs apply the op with one operand replaced by its tangent, and
their VJPs contract the cotangent with the other operands.  ``matmul`` treats 1-D operands as
a row (left) or a column (right) and reduces broadcast batch dimensions back to each
operand's.  ``einsum``'s VJP for an operand is another einsum, the equation permuted so the
output's term comes first and the operand's term becomes the output; three things NumPy's
subscript language cannot say directly are handled on the way:

- a subscript repeated in the operand's term (a diagonal, ``"ii->i"``) gets fresh subscripts
  tied to it by identity-matrix operands, so the gradient lands on the diagonal;
- a subscript only the operand has (summed away, ``"ij->i"``) gets an all-ones operand, so the
  gradient is broadcast along it;
- dimensions the operand has as size 1 or lacks under ``...`` while others broadcast them are
  summed back (:func:`~._ops.sum_to_shape`).
"""

from __future__ import annotations

from typing import Optional

from mskernel_sdk import EinsumTerm, Tensor, parse_einsum

from . import _ops as ops
from ._ops import Grads, RuleTable

rules = RuleTable()
_ELLIPSIS = "..."

# -- matmul -----------------------------------------------------------------------------------


@rules.vjp("matmul")
def _matmul_vjp(primals, outputs, cotangents) -> Grads:
    (x, y), (g,) = primals, cotangents
    x2 = ops.reshape(x, shape=(1,) + x.shape) if x.ndim == 1 else x
    y2 = ops.reshape(y, shape=y.shape + (1,)) if y.ndim == 1 else y
    batch = g.shape[:g.ndim - (x.ndim > 1) - (y.ndim > 1)]
    g2 = ops.reshape(g, shape=batch + (x2.shape[-2], y2.shape[-1]))
    gx = ops.sum_to_shape(ops.matmul(g2, ops.swap_last_two(y2)), x2.shape)
    gy = ops.sum_to_shape(ops.matmul(ops.swap_last_two(x2), g2), y2.shape)
    return ops.reshape(gx, shape=x.shape), ops.reshape(gy, shape=y.shape)


@rules.jvp("matmul")
def _matmul_jvp(primals, tangents, outputs) -> Grads:
    (x, y), (tx, ty) = primals, tangents
    return (ops.add_all(None if tx is None else ops.matmul(tx, y),
                        None if ty is None else ops.matmul(x, ty)),)


# -- einsum -----------------------------------------------------------------------------------


def _explicit(equation: str, count: int) -> tuple[tuple[EinsumTerm, ...], EinsumTerm]:
    """The equation's input terms and its output term, made explicit in implicit mode
    (NumPy's rule: the ellipsis, then the subscripts used once, in ASCII order)."""
    inputs, output = parse_einsum(equation, count)
    if output is None:
        uses: dict[str, int] = {}
        for term in inputs:
            for label in term.letters:
                uses[label] = uses.get(label, 0) + 1
        once = sorted(label for label, n in uses.items() if n == 1)
        output = EinsumTerm((_ELLIPSIS, *once))
    return inputs, output


def _ellipsis_shape(term: EinsumTerm, x: Tensor) -> tuple[int, ...]:
    """The dimensions of ``x`` that ``term``'s ellipsis stands for."""
    if not term.has_ellipsis:
        return ()
    start = term.labels.index(_ELLIPSIS)
    return x.shape[start:start + x.ndim - len(term.letters)]


def _letter_sizes(term: EinsumTerm, x: Tensor) -> list[int]:
    """The size of each letter of ``term`` (in order) in operand ``x``."""
    spread = len(_ellipsis_shape(term, x))
    sizes, dim = [], 0
    for label in term.labels:
        if label == _ELLIPSIS:
            dim += spread
            continue
        sizes.append(x.shape[dim])
        dim += 1
    return sizes


def _operand_vjp(i: int, inputs: tuple[EinsumTerm, ...], output: EinsumTerm,
                 operands: tuple[Tensor, ...], g: Tensor) -> Tensor:
    term, x = inputs[i], operands[i]
    used = {label for t in (*inputs, output) for label in t.letters}
    fresh = iter(c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                 if c not in used)
    sizes = _letter_sizes(term, x)
    terms = [str(output)] + [str(t) for j, t in enumerate(inputs) if j != i]
    args = [g] + [o for j, o in enumerate(operands) if j != i]
    available = set(output.letters).union(*(t.letters for j, t in enumerate(inputs) if j != i))
    target: list[str] = []
    for label, size in zip(term.letters, sizes):
        if label in target:  # a diagonal: a fresh subscript, tied to the first by a delta
            twin = next(fresh)
            terms.append(label + twin)
            args.append(_identity(size, x))
            available.update((label, twin))
            label = twin
        target.append(label)
    for label, size in zip(term.letters, sizes):
        if label not in available:  # summed away by the op: broadcast the gradient along it
            terms.append(label)
            args.append(ops.full((size,), 1.0, x.dtype))
            available.add(label)
    batch = any(t.has_ellipsis for t in (*inputs, output))
    equation = ",".join(terms) + "->" + (_ELLIPSIS if batch else "") + "".join(target)
    grad = ops.einsum(*args, equation=equation)
    own_batch = _ellipsis_shape(term, x)
    grad = ops.sum_to_shape(grad, own_batch + tuple(sizes))
    if not own_batch:
        return grad
    before = term.labels.index(_ELLIPSIS)
    nb = len(own_batch)
    perm = (tuple(nb + j for j in range(before)) + tuple(range(nb))
            + tuple(nb + j for j in range(before, len(sizes))))
    return ops.transpose(grad, perm=perm)


def _identity(n: int, like: Tensor) -> Tensor:
    """The ``n x n`` identity matrix in ``like``'s dtype."""
    rows = ops.iota((n, n), 0)
    cols = ops.iota((n, n), 1)
    return ops.mask(ops.equal(rows, cols), like)


@rules.vjp("einsum")
def _einsum_vjp(primals, outputs, cotangents, *, equation) -> Grads:
    inputs, output = _explicit(equation, len(primals))
    return tuple(_operand_vjp(i, inputs, output, primals, cotangents[0]) if x.dtype.is_inexact
                 else None for i, x in enumerate(primals))


@rules.jvp("einsum")
def _einsum_jvp(primals, tangents, outputs, *, equation) -> Grads:
    terms: list[Optional[Tensor]] = []
    for i, t in enumerate(tangents):
        if t is not None:
            operands = primals[:i] + (t,) + primals[i + 1:]
            terms.append(ops.einsum(*operands, equation=equation))
    return (ops.add_all(*terms),)


VJP = rules.vjps
JVP = rules.jvps
NONDIFFERENTIABLE: frozenset[str] = frozenset()
