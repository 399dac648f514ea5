"""The import graph of a Python package and its cycles.

    python tools/import_cycles.py [PACKAGE_DIR]    # default: the mskernel/ package

Each ``import`` statement of each module of the package that names another module of the
package is an edge, of one of two kinds:

- *module-level*: it runs when the module is imported (top-level statements, including those
  under a top-level ``if`` or ``try``, and class bodies);
- *function-local*: it runs when a function is called (an import written inside a ``def``).

Imports under ``if TYPE_CHECKING:`` run only for type checkers and are left out.  ``from X
import name`` is an edge to the module ``X.name`` when that is a module of the package, else
to ``X``; a package's ``__init__`` is the package's own node.

A strongly connected component of more than one module is an import cycle.  The report lists
the components of the module-level graph (Python resolves those only through the order of
its statements) and of the whole graph (those closed through function-local imports, which
hide a layer that leans on the one above it), each with the function-local edges inside it.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import networkx as nx

MODULE_LEVEL = "module-level"
FUNCTION_LOCAL = "function-local"


@dataclass(frozen=True)
class ImportGraph:
    """The modules of a package and the imports between them."""

    modules: frozenset[str]
    #: (importer, imported) → the kind of the first import found (module-level wins)
    edges: dict[tuple[str, str], str]

    def graph(self, kinds: Iterable[str] = (MODULE_LEVEL, FUNCTION_LOCAL)) -> "nx.DiGraph[str]":
        wanted = set(kinds)
        g: nx.DiGraph[str] = nx.DiGraph()
        g.add_nodes_from(self.modules)
        g.add_edges_from(edge for edge, kind in self.edges.items() if kind in wanted)
        return g

    def cycles(self, kinds: Iterable[str] = (MODULE_LEVEL, FUNCTION_LOCAL)) -> list[frozenset[str]]:
        """The strongly connected components of more than one module (or with a self-import),
        largest first."""
        g = self.graph(kinds)
        found = [frozenset(c) for c in nx.strongly_connected_components(g)
                 if len(c) > 1 or any(g.has_edge(m, m) for m in c)]
        return sorted(found, key=lambda c: (-len(c), sorted(c)))

    def local_edges_within(self, component: frozenset[str]) -> list[tuple[str, str]]:
        """The function-local imports between modules of ``component``."""
        return sorted(edge for edge, kind in self.edges.items()
                      if kind == FUNCTION_LOCAL and edge[0] in component and edge[1] in component)


def import_graph(package_dir: Path) -> ImportGraph:
    """Read every module under ``package_dir`` (a package folder, its name the package's)."""
    package_dir = package_dir.resolve()
    files = {_module_name(package_dir, path): path for path in sorted(package_dir.rglob("*.py"))}
    modules = frozenset(files)
    edges: dict[tuple[str, str], str] = {}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for target, kind in _imports(tree, name, is_package, modules):
            if target != name and edges.get((name, target)) != MODULE_LEVEL:
                edges[(name, target)] = kind
    return ImportGraph(modules, edges)


def _module_name(package_dir: Path, path: Path) -> str:
    parts = [package_dir.name, *path.relative_to(package_dir).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.Module, module: str, is_package: bool,
             modules: frozenset[str]) -> Iterator[tuple[str, str]]:
    for node, kind in _import_statements(tree.body, MODULE_LEVEL):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _known(alias.name, modules)
                if target:
                    yield target, kind
            continue
        base = _absolute(node, module, is_package)
        for alias in node.names:
            target = _known(f"{base}.{alias.name}", modules, exact=True) or _known(base, modules)
            if target:
                yield target, kind


def _import_statements(body: list[ast.stmt], kind: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    for stmt in body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            yield stmt, kind
        elif isinstance(stmt, ast.If) and _is_type_checking(stmt.test):
            yield from _import_statements(stmt.orelse, kind)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _import_statements(stmt.body, FUNCTION_LOCAL)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                block = getattr(stmt, field, None)
                if isinstance(block, list):
                    yield from _import_statements(
                        [s for item in block for s in (item.body if isinstance(item, ast.ExceptHandler)
                                                       else [item])], kind)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[:len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def _known(name: str, modules: frozenset[str], exact: bool = False) -> str | None:
    """``name`` if it is a module of the package; else (unless ``exact``) its longest prefix
    that is one (``import a.b.c`` of a name inside a module)."""
    if name in modules or exact:
        return name if name in modules else None
    parts = name.split(".")
    for k in range(len(parts) - 1, 0, -1):
        prefix = ".".join(parts[:k])
        if prefix in modules:
            return prefix
    return None


def report(graph: ImportGraph) -> str:
    """The cycles of the module-level graph and of the whole graph, as text."""
    lines = [f"{len(graph.modules)} modules, {len(graph.edges)} imports "
             f"({sum(k == FUNCTION_LOCAL for k in graph.edges.values())} function-local)"]
    for title, kinds in (("module-level imports", (MODULE_LEVEL,)),
                         ("all imports", (MODULE_LEVEL, FUNCTION_LOCAL))):
        found = graph.cycles(kinds)
        lines.append(f"\ncycles through {title}: {len(found)}")
        for component in found:
            lines.append(f"- {len(component)} modules: {', '.join(sorted(component))}")
            if FUNCTION_LOCAL in kinds:
                closing = graph.local_edges_within(component)
                if closing:
                    lines.append("  function-local imports inside: "
                                 + "; ".join(f"{a} -> {b}" for a, b in closing))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1] / "mskernel"
    print(report(import_graph(root)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
