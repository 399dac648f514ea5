"""The core's import graph has no cycle but the documented one: the converted-call recursion
of autograph (see :mod:`mskernel.frontend.autograph.conversion`).  A lower layer that leans on
a higher one through a function-local import shows up here as a new cycle."""

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("import_cycles", REPO / "tools" / "import_cycles.py")
import_cycles = sys.modules.setdefault("import_cycles", importlib.util.module_from_spec(SPEC))
SPEC.loader.exec_module(import_cycles)

#: Converted code calls the runtime helpers; the runtime converts the functions it calls.
DOCUMENTED = {frozenset({"mskernel.frontend.autograph.conversion",
                         "mskernel.frontend.autograph.runtime"})}


def core_graph():
    return import_cycles.import_graph(REPO / "mskernel")


def test_no_cycle_through_module_level_imports():
    assert core_graph().cycles([import_cycles.MODULE_LEVEL]) == []


def test_no_cycle_but_the_documented_ones():
    graph = core_graph()
    unexpected = [c for c in graph.cycles() if c not in DOCUMENTED]
    assert not unexpected, import_cycles.report(graph)


def test_the_tool_finds_a_cycle_closed_by_a_function_local_import(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("def f():\n    from .high import g\n    return g\n")
    (package / "high.py").write_text("from .low import f\n\ndef g():\n    return f\n")
    (package / "typed.py").write_text("from typing import TYPE_CHECKING\n"
                                      "if TYPE_CHECKING:\n    from .high import g\n")
    graph = import_cycles.import_graph(package)
    assert graph.cycles([import_cycles.MODULE_LEVEL]) == []
    assert graph.cycles() == [frozenset({"pkg.low", "pkg.high"})]
    assert graph.local_edges_within(frozenset({"pkg.low", "pkg.high"})) == [("pkg.low", "pkg.high")]
    assert ("pkg.typed", "pkg.high") not in graph.edges
