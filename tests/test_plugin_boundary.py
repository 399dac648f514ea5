"""Plugins reach the core through ``mskernel_sdk`` only.

A plugin's source (``plugins/*/src``, ``sdk/examples/*/src``) may import ``mskernel_sdk``,
the top-level ``mskernel`` package's public names (``mskernel.jit``, ``mskernel.float32``),
the functional ops of ``mskernel.ops`` and other plugins' user namespaces (``mskernel.nn``,
``mskernel.dataset``).  Everything else in the ``mskernel`` package — ``ir``, ``frontend``,
``hooks``, ``runtime``, ``passes``, ``testing``, ``errors``, ``mskernel.ops``' submodules and
op-definition API, any underscore name — is private: the core may move it in any release.
Imports are read with ``ast`` (function-local ones included), as are the module names given
to ``importlib.import_module`` and ``__import__``.
"""

from __future__ import annotations

import ast
import importlib
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import mskernel
import mskernel.ops
import mskernel_sdk
from mskernel_sdk.template import new_plugin

REPO = Path(__file__).resolve().parents[1]
PLUGIN_SOURCES = ("plugins/*/src/**/*.py", "sdk/examples/*/src/**/*.py")
CORE = Path(mskernel.__file__).parent
USER_OPS = "ops"  # mskernel.ops: the functional ops, a user namespace

#: Top-level names of the core that are modules of its own (not users' names).
CORE_MODULES = frozenset(
    p.stem if p.suffix == ".py" else p.name for p in CORE.iterdir()
    if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
) - {USER_OPS}
#: Modules inside mskernel.ops (its op families and registry).
OPS_MODULES = frozenset(
    p.stem if p.suffix == ".py" else p.name for p in (CORE / USER_OPS).iterdir()
    if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file())


def facade_name(obj: object) -> str | None:
    """The name under which ``mskernel_sdk`` exports ``obj``, if it does."""
    return next((n for n in mskernel_sdk.__all__ if getattr(mskernel_sdk, n) is obj), None)


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    module: str
    remedy: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: imports {self.module}: {self.remedy}"


def imported(tree: ast.AST) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """(line, absolute module, names taken from it) of every import in ``tree``, including
    ``importlib.import_module("...")`` and ``__import__("...")`` with a literal name."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module, tuple(alias.name for alias in node.names)
        elif isinstance(node, ast.Call) and node.args and _is_import_call(node.func):
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield node.lineno, first.value, ()


def _is_import_call(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("import_module", "__import__")


def why_private(module: str, names: tuple[str, ...]) -> str | None:
    """Why importing ``names`` from ``module`` (or ``module`` itself) crosses the boundary."""
    parts = module.split(".")
    if parts[0] == "mskernel_sdk":
        return "import names from mskernel_sdk itself, not its submodules" if parts[1:] else None
    if parts[0] != "mskernel":
        return None
    if any(part.startswith("_") for part in parts):
        return "an underscore module is private"
    if len(parts) == 1:
        bad = [n for n in names if n.startswith("_") or n in CORE_MODULES]
        return f"{', '.join(bad)} of mskernel is private; use mskernel_sdk" if bad else None
    if parts[1] in CORE_MODULES:
        return "a private core module; use " + _facade_names(module, names)
    if parts[1] == USER_OPS and parts[2:]:
        return "a private core module; the functional ops are mskernel.ops.<name>"
    if parts[1] == USER_OPS:
        return _why_private_ops_names(names)
    return None  # another plugin's user namespace


def _facade_names(module: str, names: tuple[str, ...]) -> str:
    """``mskernel_sdk.X, ...`` for the imported names the facade exports."""
    try:
        found = vars(importlib.import_module(module))
    except ImportError:
        found = {}
    exported = [facade_name(found[n]) for n in names if n in found]
    listed = [f"mskernel_sdk.{n}" for n in exported if n]
    return ", ".join(listed) if listed and len(listed) == len(names) else "mskernel_sdk"


def _why_private_ops_names(names: tuple[str, ...]) -> str | None:
    remedies = []
    for name in names:
        exported = facade_name(getattr(mskernel.ops, name, None))
        if name.startswith("_") or name in OPS_MODULES or exported:
            remedies.append(f"mskernel.ops.{name} is not a functional op" +
                            (f"; use mskernel_sdk.{exported}" if exported else ""))
    return "; ".join(remedies) or None


def violations(path: Path, source: str) -> list[Violation]:
    where = path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else str(path)
    found = []
    for line, module, names in imported(ast.parse(source, str(path))):
        remedy = why_private(module, names)
        if remedy:
            found.append(Violation(where, line, module, remedy))
    return sorted(found, key=lambda v: (v.path, v.line))


def plugin_files() -> list[Path]:
    return sorted(p for pattern in PLUGIN_SOURCES for p in REPO.glob(pattern))


def project_of(source: Path) -> Path:
    """The distribution folder (holding pyproject.toml) of a file under its ``src/``."""
    return Path(*source.parts[:source.parts.index("src")])


def test_plugins_import_only_the_facade_and_public_names():
    files = plugin_files()
    assert {project_of(p).name for p in files} >= {
        "autodiff", "cpu", "data", "nn", "quantum", "mskernel-npfuse"}
    found = [v for p in files for v in violations(p, p.read_text(encoding="utf-8"))]
    assert not found, "plugins import private core modules:\n" + "\n".join(map(str, found))


def test_plugins_that_import_the_facade_require_the_sdk():
    """A plugin importing mskernel_sdk declares mskernel-sdk (pip installs it with the plugin,
    and the release series pins the plugin API it was built against)."""
    for project in sorted({project_of(p) for p in plugin_files()}):
        sources = [p for p in plugin_files() if project_of(p) == project]
        if not any("mskernel_sdk" in module for p in sources
                   for _, module, _ in imported(ast.parse(p.read_text(encoding="utf-8")))):
            continue
        metadata = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
        required = {canonicalize_name(Requirement(r).name)
                    for r in metadata["project"].get("dependencies", [])}
        assert "mskernel-sdk" in required, f"{project.relative_to(REPO)}/pyproject.toml"


@pytest.mark.parametrize("kind", ["backend", "library"])
def test_the_plugin_template_starts_inside_the_boundary(tmp_path, kind):
    folder, written = new_plugin("acme", kind, tmp_path)
    sources = [folder / p for p in written if p.suffix == ".py" and "src" in p.parts]
    assert sources
    found = [v for p in sources for v in violations(p, p.read_text(encoding="utf-8"))]
    assert not found, "\n".join(map(str, found))


@pytest.mark.parametrize("source, module", [
    ("from mskernel.ir.graph import Graph", "mskernel.ir.graph"),
    ("import mskernel.frontend.tensor as t", "mskernel.frontend.tensor"),
    ("def f():\n    from mskernel.hooks import hookimpl", "mskernel.hooks"),
    ("from mskernel import errors", "mskernel"),
    ("from mskernel import _importer", "mskernel"),
    ("from mskernel.ops.elementwise import OPS", "mskernel.ops.elementwise"),
    ("from mskernel.ops import registry", "mskernel.ops"),
    ("from mskernel.ops import OpDef, exp", "mskernel.ops"),
    ("from mskernel_sdk.kit import session", "mskernel_sdk.kit"),
    ("import importlib\nimportlib.import_module('mskernel.runtime.interpreter')",
     "mskernel.runtime.interpreter"),
    ("from importlib import import_module\nm = import_module('mskernel.passes')",
     "mskernel.passes"),
    ("__import__('mskernel.testing')", "mskernel.testing"),
])
def test_a_private_import_is_named_with_its_file_and_line(source, module):
    (found,) = violations(REPO / "plugins/acme/src/mskernel_acme/x.py", source)
    assert found.module == module
    line = source.count("\n") + 1
    assert str(found).startswith(f"plugins/acme/src/mskernel_acme/x.py:{line}: ")


def test_the_remedy_names_the_facade_export():
    (found,) = violations(REPO / "x.py", "from mskernel.ops import rule_registry")
    assert "use mskernel_sdk.rule_registry" in found.remedy
    (found,) = violations(REPO / "x.py", "from mskernel.frontend.tensor import Tensor")
    assert found.remedy.endswith("use mskernel_sdk.Tensor")


@pytest.mark.parametrize("source", [
    "import mskernel",
    "from mskernel import Tensor, jit, float32, random",
    "from mskernel import ops\nfrom mskernel.ops import exp, cond",
    "from mskernel.nn import Cell\nfrom mskernel.dataset import vision",
    "from mskernel_sdk import Graph, hookimpl",
    "from . import native\nfrom .rules import _ops",
    "import numpy as np\nnp.random.default_rng()",
    "import importlib\nimportlib.import_module('mskernel_acme.api')",
])
def test_public_names_pass(source):
    assert violations(REPO / "x.py", source) == []
