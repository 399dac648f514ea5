"""Batching rules of ``matmul`` and ``einsum``.

``matmul`` already broadcasts leading (batch) dimensions, aligned from the end: batched rows
times one matrix are a matrix product as they are; otherwise a batched vector operand becomes
a one-row (one-column) matrix, batched operands get size-1 axes after
the batch until their examples have the rank of the larger operand, and the result is
reshaped to the example's result with the batch in front.  ``einsum`` gets a fresh subscript
for the batch on every batched operand and in front of the output.
"""

from __future__ import annotations

from string import ascii_letters

from mskernel_sdk import Tensor, apply, parse_einsum

from ._batch import Flags, aligned, example_rank, example_types
from ._ops import RuleTable, reshape

rules = RuleTable()


@rules.batch("matmul")
def _matmul(args: tuple[Tensor, ...], batched: Flags) -> tuple[Tensor]:
    x, y = args
    bx, by = batched
    if bx and not by and example_rank(x) == 1 and y.ndim == 2:  # rows times one matrix
        return (apply("matmul", x, y),)
    if bx and example_rank(x) == 1:  # a row [k] → [1, k]
        x = reshape(x, shape=(x.shape[0], 1, x.shape[1]))
    if by and example_rank(y) == 1:  # a column [k] → [k, 1]
        y = reshape(y, shape=(y.shape[0], y.shape[1], 1))
    ranks = [example_rank(t, b) for t, b in ((x, bx), (y, by)) if b or t.ndim >= 2]
    target = max(ranks)
    x, y = (aligned(x, target) if bx else x), (aligned(y, target) if by else y)
    (example,) = example_types("matmul", args, batched, {})
    out = apply("matmul", x, y)
    return (reshape(out, shape=(out.shape[0], *example.shape)),)


@rules.batch("einsum")
def _einsum(args: tuple[Tensor, ...], batched: Flags, *, equation: str) -> tuple[Tensor]:
    inputs, output = parse_einsum(equation, len(args))
    labels = [term.letters for term in inputs]
    if output is None:  # NumPy's implicit output: the ellipsis, then the letters used once
        used = [letter for letters in labels for letter in letters]
        once = sorted(letter for letter in set(used) if used.count(letter) == 1)
        ellipsis = "..." if any(term.has_ellipsis for term in inputs) else ""
        out_text = ellipsis + "".join(once)
    else:
        out_text = str(output)
    taken = {letter for letters in labels for letter in letters}
    batch = next(letter for letter in ascii_letters if letter not in taken)
    terms = [batch + str(term) if b else str(term) for term, b in zip(inputs, batched)]
    return (apply("einsum", *args, equation=f"{','.join(terms)}->{batch}{out_text}"),)


BATCH = rules.batches
NOT_BATCHABLE: dict[str, str] = {}
