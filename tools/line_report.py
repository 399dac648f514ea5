"""Lines per package of this checkout, and the core's line budget.

    python tools/line_report.py          # a table; exit status 1 when the core is over budget

The core (``mskernel/``) is the part every user installs and every plugin builds on, so its
size is a decision, not a drift: :data:`CORE_BUDGET` caps its Python lines, and raising it is
a one-line change made in the commit that needs the room, with the reason in its message.
The budget, 20,000 lines, was set when the core held 17.1k, with about 2k more under way:
decompositions of the composite ops, the generic batch-norm fold and pipeline helpers, the
kernel-tolerance helpers; it rose to 20,100 for MindSpore's functional op names and the ops
composed of core ones (``mskernel.ops``, which every user has, is where they belong), then to
20,600 for the fft primitive, the accumulation bounds every backend's conformance run uses and
effect tokens for eager collectives and host kernels, then to 20,620 for MindSpore's
``(values, indices)`` contract of ``ops.max``/``ops.min``/``ops.sort``, to 20,650 for
runtime errors of the reference backend that name the failing node, and to 20,685 for the
partitioner's ``schedule_early`` trait (an asynchronous start runs as soon as it is ready) and
host kernels taking and giving a host-memory backend's arrays without copies, then to
20,810 for the composite op ``max_pool_grad`` (reference, decomposition, samples with ties
and NaNs), which lets a backend run max-pool's backward pass as one kernel.  Past that, a
new subsystem belongs in a plugin, or the budget rises by a stated decision.  Plugins and the SDK are reported but not capped — they are the place
to grow.

Lines are physical lines (blank and comment lines included, like ``wc -l``), counted in each
package's source (``.py``; ``.cpp``/``.hpp``/``.h`` as native) and, separately, its tests.
The script lives outside the ``mskernel`` package so that measuring the core does not grow it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

ROOT = Path(__file__).resolve().parents[1]
#: The most lines of Python the core package may hold (see the module docstring).  20,600:
#: the primitive op fft (schema, reference, samples; its functional ops live in a plugin),
#: the order-independent accumulation bounds every backend's conformance run compares with
#: (``mskernel/testing/accumulation.py``, ~330 lines), and effect tokens for eager collectives
#: and host kernels (~40 lines).  20,620: ``ops.max``/``min``/``sort`` return
#: ``(values, indices)`` as MindSpore's do, beside the values-only ``amax``/``amin``.  20,650:
#: the reference backend's generated code names the node (and user line) an error came from.
#: 20,685: the partitioner's ``schedule_early`` trait, which starts a collective as soon as its
#: operand exists so the backend overlaps it (16 lines); host kernels reading a host-memory
#: backend's arrays in place and handing results over through ``Backend.share`` (16 lines);
#: the parallel plugin's ``ops.*`` names in the distributions table (3 lines).
#: 20,810: max_pool_grad (~110 lines: max-pool's backward pass as one op that backends claim,
#: instead of four generic ones) and the simplification of transposes of size-1 axes (9).
CORE_BUDGET = 20_810
NATIVE_SUFFIXES = (".cpp", ".hpp", ".h", ".cc")


@dataclass(frozen=True)
class Package:
    name: str
    python: int
    native: int
    tests: int


def count_lines(files: Iterable[Path]) -> int:
    return sum(len(path.read_bytes().splitlines()) for path in files)


def sources(folder: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """Files under ``folder`` with one of ``suffixes``, outside caches and build folders."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.suffix in suffixes and p.is_file()
                  and not {"__pycache__", "build"} & set(p.relative_to(folder).parts))


def package(name: str, source: Path, tests: Path, native: Optional[Path] = None) -> Package:
    return Package(name, count_lines(sources(source, (".py",))),
                   count_lines(sources(native, NATIVE_SUFFIXES)) if native else 0,
                   count_lines(sources(tests, (".py",))))


def packages(root: Path = ROOT) -> list[Package]:
    """The core, the SDK and every plugin under ``plugins/``, in that order."""
    found = [package("mskernel (core)", root / "mskernel", root / "tests"),
             package("mskernel-sdk", root / "sdk" / "src", root / "sdk" / "tests")]
    for plugin in sorted(p for p in (root / "plugins").iterdir() if (p / "src").is_dir()):
        found.append(package(f"mskernel-{plugin.name}", plugin / "src", plugin / "tests",
                             plugin / "csrc"))
    return found


def over_budget(core: Package, budget: int = CORE_BUDGET) -> Optional[str]:
    """Why the core breaks its budget, or ``None``."""
    if core.python <= budget:
        return None
    return (f"the core holds {core.python} lines of Python, over its budget of {budget}: move "
            f"the new code into a plugin, or raise CORE_BUDGET in tools/line_report.py in the "
            f"same commit and say why")


def render(found: list[Package], budget: int = CORE_BUDGET) -> str:
    rows = [("package", "python", "native", "tests")]
    rows += [(p.name, str(p.python), str(p.native or "-"), str(p.tests)) for p in found]
    width = max(len(r[0]) for r in rows)
    lines = [f"{r[0]:<{width}}  {r[1]:>7}  {r[2]:>7}  {r[3]:>7}" for r in rows]
    core = found[0]
    lines.append(f"core budget: {core.python} of {budget} lines ({budget - core.python} left)")
    return "\n".join(lines)


def main() -> int:
    found = packages()
    print(render(found))
    problem = over_budget(found[0])
    if problem:
        print(problem, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
