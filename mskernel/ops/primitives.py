"""The primitive set: which core ops a backend must implement, and which it may claim for speed.

A *primitive* is an op without a :attr:`~mskernel.ops.OpDef.decomposition`: a backend that
does not run it sends the node to another backend (a fallback).  A *composite* decomposes into
other core ops, and a backend that does not claim it runs the decomposition instead
(:mod:`mskernel.runtime.expand`).  So the primitives are all a new backend must implement to
run every core op itself; the composites are what it may claim to run a fused kernel.
``docs/ops.md`` lists both (``python tools/ops_page.py docs/ops.md`` renders it).

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

from importlib import import_module
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
