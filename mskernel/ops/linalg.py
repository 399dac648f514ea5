"""Linear algebra: ``matmul`` and ``einsum``, with NumPy's semantics.

Both take numeric operands of one dtype and compute in it (integers wrap; the reference
accumulates float16 in float32).

``matmul(x, y)``: ``x[..., n, k] @ y[..., k, m]`` with the batch dimensions broadcast.  A 1-D
``x`` is a row ``[k]`` and a 1-D ``y`` a column ``[k]``; their dimension is dropped from the
result, so two vectors give a scalar.  Scalars are rejected.

``einsum(*operands, equation=...)``: NumPy's subscript language.  One input term per operand,
separated by ``,``; subscripts are ASCII letters, and ``...`` stands for the dimensions not
named, broadcast across operands.  Without ``->`` the output is the ellipsis followed by the
subscripts used exactly once, in ASCII order (capitals first); with ``->`` it is as written.
A subscript repeated inside a term takes that operand's diagonal; one missing from the output
is summed over.  Sizes of one subscript must agree across operands up to broadcasting (size
1 stretches), and the output needs ``...`` whenever the ellipsis stands for any dimension.
Spaces are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import numpy as np

from ..errors import InferError
from ..ir.types import Shape, TensorType
from .registry import Attr, OpDef
from .rules import broadcast_shapes, require_kind, same_dtype, tensor, widened
from .samples import (
    COMPLEX, FLOATS, OpSample, SampleFn, accumulation_tolerance, dtype_cases, random_array,
)

_ELLIPSIS = "..."


def _matmul_infer(x: TensorType, y: TensorType) -> TensorType:
    x, y = tensor(x, "x"), tensor(y, "y")
    dt = same_dtype([x, y])
    require_kind(x, "iufc")
    if x.rank == 0 or y.rank == 0:
        raise InferError(
            f"operands must have rank >= 1, got shapes {list(x.shape)} and {list(y.shape)}"
        )
    inner_x = x.shape[-1]
    inner_y = y.shape[0] if y.rank == 1 else y.shape[-2]
    if inner_x != inner_y:
        raise InferError(
            f"inner dimensions of shapes {list(x.shape)} and {list(y.shape)} differ "
            f"({inner_x} != {inner_y})"
        )
    try:
        batch = broadcast_shapes(x.shape[:-2], y.shape[:-2])
    except InferError:
        raise InferError(
            f"batch dimensions {list(x.shape[:-2])} and {list(y.shape[:-2])} of shapes "
            f"{list(x.shape)} and {list(y.shape)} cannot be broadcast together"
        ) from None
    rows = x.shape[-2:-1]
    cols = y.shape[-1:] if y.rank >= 2 else ()
    return TensorType(dt, batch + rows + cols)


def _matmul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.asarray(np.matmul(widened(x), widened(y))).astype(x.dtype, copy=False)


@dataclass(frozen=True)
class Term:
    """One term of an einsum equation: its subscripts in order, with ``"..."`` standing
    for the ellipsis (at most once)."""

    labels: tuple[str, ...]

    @property
    def has_ellipsis(self) -> bool:
        return _ELLIPSIS in self.labels

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(label for label in self.labels if label != _ELLIPSIS)

    def __str__(self) -> str:
        return "".join(self.labels)


def _parse_term(text: str, where: str) -> Term:
    labels: list[str] = []
    rest = text
    while rest:
        if rest.startswith(_ELLIPSIS):
            if _ELLIPSIS in labels:
                raise InferError(f"{where} '{text}' has more than one ellipsis '...'")
            labels.append(_ELLIPSIS)
            rest = rest[len(_ELLIPSIS):]
            continue
        char, rest = rest[0], rest[1:]
        if char == ".":
            raise InferError(f"{where} '{text}' has a '.' that is not part of an ellipsis '...'")
        if not (char.isascii() and char.isalpha()):
            raise InferError(
                f"{where} '{text}' has the invalid subscript {char!r}; subscripts are letters"
            )
        labels.append(char)
    return Term(tuple(labels))


def parse_equation(equation: str, num_operands: int) -> tuple[tuple[Term, ...], Optional[Term]]:
    """Split an einsum equation into its input terms and its output term (``None`` in
    implicit mode), checking the syntax and the number of terms."""
    text = "".join(equation.split())
    if text.count("->") > 1:
        raise InferError(f"equation {equation!r} has more than one '->'")
    lhs, arrow, rhs = text.partition("->")
    parts = lhs.split(",")
    if len(parts) != num_operands:
        raise InferError(
            f"equation {equation!r} has {len(parts)} input term(s) "
            f"but {num_operands} operand(s) were given"
        )
    inputs = tuple(_parse_term(part, f"input term {i}") for i, part in enumerate(parts))
    return inputs, (_parse_term(rhs, "output term") if arrow else None)


def _combine(label: str, sizes: dict[str, tuple[int, int]], size: int, operand: int) -> None:
    """Record that ``label`` has ``size`` in ``operand``; sizes broadcast as in NumPy."""
    if label not in sizes or sizes[label][0] in (1, size):
        sizes[label] = (size, operand)
    elif size != 1:
        known, first = sizes[label]
        raise InferError(
            f"subscript '{label}' has size {known} in operand {first} but {size} in "
            f"operand {operand}"
        )


def _bind_term(i: int, term: Term, x: TensorType, sizes: dict[str, tuple[int, int]]) -> Shape:
    """Record the sizes operand ``i`` gives its subscripts; return the dimensions under its
    ellipsis (``()`` when it has none)."""
    named = len(term.letters)
    if named > x.rank or (named < x.rank and not term.has_ellipsis):
        raise InferError(
            f"input term {i} '{term}' names {named} dimension(s) but operand {i} has "
            f"rank {x.rank} (shape {list(x.shape)})"
        )
    spread = x.rank - named
    dims = iter(x.shape)
    under_ellipsis: Shape = ()
    local: dict[str, int] = {}
    for label in term.labels:
        if label == _ELLIPSIS:
            under_ellipsis = tuple(next(dims) for _ in range(spread))
            continue
        size = next(dims)
        if local.setdefault(label, size) != size:
            raise InferError(
                f"subscript '{label}' repeats in input term {i} '{term}' with different "
                f"sizes {local[label]} and {size} (a diagonal needs equal sizes)"
            )
        _combine(label, sizes, size, i)
    return under_ellipsis


def _implicit_output(inputs: tuple[Term, ...]) -> Term:
    """NumPy's output when the equation has no ``->``: the ellipsis, then the subscripts used
    exactly once, in ASCII order."""
    counts: dict[str, int] = {}
    for term in inputs:
        for label in term.letters:
            counts[label] = counts.get(label, 0) + 1
    return Term((_ELLIPSIS, *sorted(label for label, n in counts.items() if n == 1)))


def _einsum_infer(*operands: TensorType, equation: str) -> TensorType:
    if not operands:
        raise InferError("einsum needs at least one operand")
    operands = tuple(tensor(t, f"operand {i}") for i, t in enumerate(operands))
    dt = same_dtype(operands)
    require_kind(operands[0], "iufc")
    inputs, output = parse_equation(equation, len(operands))
    sizes: dict[str, tuple[int, int]] = {}
    ellipsis_shapes = [_bind_term(i, term, x, sizes)
                       for i, (term, x) in enumerate(zip(inputs, operands))]
    try:
        batch = broadcast_shapes(*ellipsis_shapes)
    except InferError:
        listed = " and ".join(str(list(shape)) for shape, term in zip(ellipsis_shapes, inputs)
                              if term.has_ellipsis)
        raise InferError(f"the dimensions under '...' ({listed}) cannot be broadcast") from None
    if output is None:
        output = _implicit_output(inputs)
    return TensorType(dt, _output_shape(output, sizes, batch))


def _output_shape(output: Term, sizes: dict[str, tuple[int, int]], batch: Shape) -> Shape:
    letters = output.letters
    for label in letters:
        if label not in sizes:
            raise InferError(f"output subscript '{label}' does not appear in any input term")
        if letters.count(label) > 1:
            raise InferError(f"output subscript '{label}' appears more than once")
    if batch and not output.has_ellipsis:
        raise InferError(
            f"'...' stands for {len(batch)} dimension(s) {list(batch)}, so the output term "
            f"'{output}' must contain '...' too"
        )
    shape: list[int] = []
    for label in output.labels:
        shape.extend(batch if label == _ELLIPSIS else (sizes[label][0],))
    return tuple(shape)


def _einsum(*operands: np.ndarray, equation: str) -> np.ndarray:
    result = np.einsum(equation, *(widened(x) for x in operands))
    return np.asarray(result).astype(operands[0].dtype, copy=False)


OPS: list[OpDef] = [
    OpDef("matmul", ("x", "y"), _matmul_infer, _matmul,
          doc="matrix product with NumPy's rules for 1-D operands and batch broadcasting"),
    OpDef("einsum", ("*operands",), _einsum_infer, _einsum, attrs=(Attr("equation", "str"),),
          doc="Einstein summation over the operands as NumPy's einsum, ellipsis included"),
]


# --- samples (attached to the ops under the "samples" rule kind by mskernel.ops.core) --------
# Samples for ``matmul`` and ``einsum``: matrices, vectors (1-D on either side and both),
# broadcast batches, size-1 and size-0 dimensions, and einsum's ellipsis, diagonals, implicit
# output, broadcasting of size-1 subscripts and several operands.  ``float32`` runs every case;
# the other numeric dtypes run two (see :func:`.samples.dtype_cases`).


_DTYPES = FLOATS + ("int32", "int64") + COMPLEX

_MATMUL_SHAPES = (
    ((3, 4), (4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((4,), (4,)),
    ((6,), (3, 6, 2)),
    ((2, 3, 4), (4,)),
    ((1, 1), (1, 1)),
    ((0, 4), (4, 3)),
    ((3, 0), (0, 2)),
    ((2, 0, 3), (1, 3, 4)),
)

_EINSUM_CASES = (
    ("ij,jk->ik", ((3, 4), (4, 5))),
    ("...ij,...jk->...ik", ((2, 1, 3, 4), (5, 4, 2))),
    ("bij,bjk", ((2, 3, 4), (2, 4, 5))),
    ("i,i", ((5,), (5,))),
    ("i,j->ij", ((3,), (4,))),
    ("ij->ji", ((3, 4),)),
    ("ii->i", ((4, 4),)),
    ("ii", ((4, 4),)),
    ("ij->", ((3, 4),)),
    ("...i->...", ((2, 3, 4),)),
    ("i...j,j...->...", ((2, 3, 4), (4, 3))),
    ("ab,bc,cd->ad", ((2, 3), (3, 4), (4, 2))),
    ("ij,jk->ik", ((3, 1), (4, 5))),
    ("Ab,bA", ((3, 4), (4, 3))),
    ("ij,jk->ik", ((3, 0), (0, 2))),
    ("->", ((),)),
)


def _matmul_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, (sx, sy) in dtype_cases(_DTYPES, _MATMUL_SHAPES):
        x, y = random_array(rng, sx, dt), random_array(rng, sy, dt)
        yield OpSample("matmul", (x, y), dtypes=(dt, dt), **accumulation_tolerance(dt))


def _einsum_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, (equation, shapes) in dtype_cases(_DTYPES, _EINSUM_CASES):
        operands = tuple(random_array(rng, shape, dt) for shape in shapes)
        yield OpSample("einsum", operands, {"equation": equation}, dtypes=(dt,) * len(shapes),
                       **accumulation_tolerance(dt))


SAMPLES: dict[str, SampleFn] = {"matmul": _matmul_samples, "einsum": _einsum_samples}
