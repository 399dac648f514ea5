"""``docs/ops.md``: the core's primitive ops (what a backend must implement) and composite ops
(what it may claim for speed, with what each decomposes into), rendered from the op
definitions so that page and code cannot drift apart.

    python tools/ops_page.py docs/ops.md     # rewrites the page; tests/ops/test_primitives.py
                                             # fails while it is stale

The line between the two, and the budget of primitives, are in ``mskernel/ops/primitives.py``.
The script lives outside the ``mskernel`` package: rendering documentation is not the core's
job, and it uses layers (samples, the expansion) the op definitions sit below.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mskernel.ops import OpRegistry, op_registry
from mskernel.ops.primitives import PRIMITIVE_BUDGET, core_ops
from mskernel.runtime.expand import decompose
from mskernel.testing import sample_graph, samples_for

HEADER = """\
# Core ops: primitives and composites

<!-- rendered from mskernel/ops by `python tools/ops_page.py docs/ops.md`; the core's tests
fail while this page and the op definitions differ -->

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
    """The page: the primitives, then the composites with what each decomposes into for the
    inputs of its first sample, family by family."""
    prims = [(f, op) for f, op in core_ops(registry) if op.primitive]
    comps = [(f, op) for f, op in core_ops(registry) if not op.primitive]
    lines = [HEADER.format(primitives=len(prims), composites=len(comps),
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
        print("usage: python tools/ops_page.py docs/ops.md", file=sys.stderr)
        return 2
    path = Path(argv[0])
    page = render(op_registry())
    if not path.exists() or path.read_text(encoding="utf-8") != page:
        path.write_text(page, encoding="utf-8")
        print(f"rendered {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
