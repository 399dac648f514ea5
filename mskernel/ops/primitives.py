"""The primitive set: which core ops a backend must implement, and which it may claim for speed.

A *primitive* is an op without a :attr:`~mskernel.ops.OpDef.decomposition`: a backend that
does not run it sends the node to another backend (a fallback).  A *composite* decomposes into
other core ops, and a backend that does not claim it runs the decomposition instead
(:mod:`mskernel.runtime.expand`).  So the primitives are all a new backend must implement to
run every core op itself; the composites are what it may claim to run a fused kernel.
``docs/ops.md`` lists both (``python -m mskernel.ops.primitives docs/ops.md`` renders it).

Where the line is drawn.  An op is a composite when a composition of other core ops computes
what its reference computes — exactly, or within the dtype's tolerance — on every input (NaN,
infinities, signed zeros and empty tensors included), without an overflow or a loss of
accuracy the op exists to avoid.  Every other op is a primitive.  By family:

- math functions with their own accuracy contract: ``exp``, ``expm1``, ``log``, ``log1p``,
  ``log2``, ``log10``, ``sqrt``, the trigonometric and hyperbolic functions and their
  inverses, ``tanh``, ``erf``, ``erfc``, ``lgamma`` (``sinh`` from ``exp`` cancels near 0,
  ``tan`` as ``sin / cos`` loses accuracy near pi/2, ``log2`` through ``log`` misses exact
  powers of two), and ``reciprocal`` (NumPy's complex reciprocal is not ``1 / z`` at zeros
  and infinities);
- the arithmetic the composites are written in: ``neg`` (``0 - x`` is +0 at +0), ``abs``,
  ``add``, ``mul``, ``div``, ``pow``, ``maximum``, ``minimum``, ``atan2``, ``floor_divide``,
  ``remainder``, ``floor``, ``round``, ``real``, ``imag``, ``conj``, ``cast``, ``where``;
  ``equal`` and ``less``, from which the other comparisons follow; the bitwise ops and
  shifts, of which the logical ops are the bool case;
- reductions: ``sum``, ``prod``, ``max``, ``min`` (not ``-max(-x)`` for unsigned integers or
  the most negative one), ``any``, ``argmax``, ``argmin``;
- creation and data movement: ``constant``, ``iota``, ``reshape``, ``transpose``,
  ``broadcast_to``, ``slice``, ``concat``, ``pad``, and indexing by tensors of index tuples,
  ``gather_nd`` and ``scatter_nd`` (``gather``, ``take_along_axis`` and ``scatter`` build
  their tuples from ``iota``);
- structured compute: ``matmul``; ``einsum``, whose good decomposition is a plan of pairwise
  contractions, not a local rewrite; ``conv`` and ``conv_transpose`` (the pools are
  composites: strided slices combined per kernel position); the scans ``cumsum``,
  ``cumprod``, ``cummax``, ``cummin``; ``argsort``;
- random ops, each a bit-exact specification (Threefry-2x32 words turned into numbers; float64
  draws use 64-bit words that ``random_bits`` does not give);
- control flow and state: ``If``, ``While``, ``ref_load``, ``ref_store``.

The budget.  :data:`PRIMITIVE_BUDGET` is the most primitives the core may have, and the
core's tests fail above it: a new primitive is work for every backend, so adding one is a
decision taken here, with its reason, not a side effect of adding an op.
"""

from __future__ import annotations

import sys
from importlib import import_module
from pathlib import Path
from typing import Iterator

from .core import FAMILIES
from .registry import OpDef, OpRegistry

#: The most primitive core ops.  90: the math functions, arithmetic, reductions, data movement,
#: structured compute, random, control-flow and state ops listed in the module doc — the set a
#: backend implements to run every core op without falling back.
PRIMITIVE_BUDGET = 90


def core_ops(registry: OpRegistry) -> Iterator[tuple[str, OpDef]]:
    """Each core op with its family, family by family in :data:`~.core.FAMILIES` order."""
    for family in FAMILIES:
        for op in import_module(f"{__package__}.{family}").OPS:
            yield family, registry.get(op.name)


def primitives(registry: OpRegistry) -> list[str]:
    """The core ops a backend must implement, by name."""
    return sorted(op.name for _, op in core_ops(registry) if op.primitive)


def composites(registry: OpRegistry) -> list[str]:
    """The core ops with a decomposition, by name."""
    return sorted(op.name for _, op in core_ops(registry) if not op.primitive)


PAGE_HEADER = """\
# Core ops: primitives and composites

<!-- rendered from mskernel/ops by `python -m mskernel.ops.primitives docs/ops.md`; the core's
tests fail while this page and the op definitions differ -->

A backend runs the ops it claims (`Backend.capabilities()`, see
[plugins.md](plugins.md#capabilities-and-fallback)); the partitioner sends every other node to
the next capable backend.  Composite ops are the exception: a composite the preferred backend
does not claim is replaced by its decomposition when the backend runs all the ops it emits, so
it runs there.  A new backend therefore implements the **{primitives} primitives** to run every
core op itself, and may claim any of the **{composites} composites** to run a fused kernel in
place of the decomposition.  Why each op falls on its side of the line, and the budget of
{budget} primitives, are in the docstring of `mskernel/ops/primitives.py`.
"""


def render(registry: OpRegistry) -> str:
    """``docs/ops.md``: the primitives and the composites (with what each decomposes into,
    for its first sample) family by family."""
    from ..runtime.expand import decompose
    from ..testing import sample_graph, samples_for

    prims = [(f, op) for f, op in core_ops(registry) if op.primitive]
    comps = [(f, op) for f, op in core_ops(registry) if not op.primitive]
    lines = [PAGE_HEADER.format(primitives=len(prims), composites=len(comps),
                                budget=PRIMITIVE_BUDGET),
             "## The primitives: what a backend must implement", "",
             "| family | op | computes |", "| --- | --- | --- |"]
    lines += [f"| {family} | `{op.name}` | {_cell(op.doc)} |" for family, op in prims]
    lines += ["", "## The composites: what a backend may claim for speed", "",
              "| family | op | decomposes into (for the inputs of its first sample) | computes |",
              "| --- | --- | --- | --- |"]
    for family, op in comps:
        sample = samples_for(op.name)[0]
        parts = decompose(sample_graph(sample, registry).nodes[0], registry)
        assert parts is not None  # a composite
        emitted = ", ".join(f"`{name}`" for name in dict.fromkeys(n.op for n in parts.nodes))
        inputs = ", ".join(str(t) for t in sample.arg_types())
        lines.append(f"| {family} | `{op.name}` | {emitted}{f' ({inputs})' if inputs else ''} "
                     f"| {_cell(op.doc)} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m mskernel.ops.primitives docs/ops.md", file=sys.stderr)
        return 2
    from ..defaults import op_registry

    path = Path(argv[0])
    page = render(op_registry())
    if not path.exists() or path.read_text(encoding="utf-8") != page:
        path.write_text(page, encoding="utf-8")
        print(f"rendered {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
