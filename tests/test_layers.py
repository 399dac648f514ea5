"""The core's layers (docs/architecture.md): a module imports only its own layer and those
below it.  Import cycles are tests/test_import_graph.py's; this holds the order."""

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("import_cycles", REPO / "tools" / "import_cycles.py")
import_cycles = sys.modules.setdefault("import_cycles", importlib.util.module_from_spec(SPEC))
SPEC.loader.exec_module(import_cycles)

#: Bottom up; the top-level package's subpackages and modules.
LAYERS = ("errors", "ir", "ops", "passes", "runtime", "testing", "hooks", "frontend", "common",
          "context", "cli")
#: Modules that sit below their package: leaves the lower layers share.
LOWERED = {
    "mskernel.hooks.markers": "errors",      # the hookimpl marker of the built-in plugins
    "mskernel.hooks.containment": "errors",  # running plugin code that may raise anything
    "mskernel.runtime.state": "ir",          # the values stateful ops read and write
    "mskernel.runtime.interpreter": "ops",   # a node run by its reference semantics (folding)
}
#: Below every layer and used by all of them.
FOUNDATION = {"mskernel", "mskernel._version", "mskernel._importer"}
#: Resolves the process-wide registries for entry points called without them: every layer
#: may import it, and it reaches the plugin host on first call (the one upward reach).
DEFAULTS = "mskernel.defaults"


def layer(module: str) -> int:
    if module in LOWERED:
        return LAYERS.index(LOWERED[module])
    return LAYERS.index(module.split(".")[1])


def upward_imports(graph) -> list[str]:
    found = []
    for (importer, imported), kind in sorted(graph.edges.items()):
        if importer in FOUNDATION | {DEFAULTS} or imported in FOUNDATION | {DEFAULTS}:
            continue
        if layer(imported) > layer(importer):
            found.append(f"{importer} imports {imported} ({kind})")
    return found


def test_every_core_module_has_a_layer():
    graph = import_cycles.import_graph(REPO / "mskernel")
    for module in graph.modules - FOUNDATION - {DEFAULTS}:
        layer(module)  # raises ValueError naming an unknown layer


def test_no_layer_imports_one_above_it():
    found = upward_imports(import_cycles.import_graph(REPO / "mskernel"))
    assert not found, ("imports against the layer order of docs/architecture.md:\n"
                       + "\n".join(found))


def test_an_upward_import_is_found(tmp_path):
    core = tmp_path / "mskernel"
    for folder in ("ir", "frontend"):
        (core / folder).mkdir(parents=True)
        (core / folder / "__init__.py").write_text("")
    (core / "__init__.py").write_text("")
    (core / "ir" / "graph.py").write_text("def f():\n    from ..frontend import tensor\n")
    (core / "frontend" / "tensor.py").write_text("from ..ir import graph\n")
    found = upward_imports(import_cycles.import_graph(core))
    assert found == ["mskernel.ir.graph imports mskernel.frontend.tensor (function-local)"]
