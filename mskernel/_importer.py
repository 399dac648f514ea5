"""Making plugin namespaces importable: ``from mskernel.nn import Dense``,
``import mskernel.dataset as ds`` and ``import mskernel.dataset.vision as vision`` work like
``mskernel.nn.Dense`` and ``mskernel.dataset.vision``.

Two finders on ``sys.meta_path``:

- at the end, :class:`NamespaceFinder` answers only for ``mskernel.<name>`` that no real
  submodule matched; it asks the plugin host (loading plugins on this first use) for the
  module registered as namespace ``<name>`` and makes ``mskernel.<name>`` an alias of it.
  ``<name>`` may be dotted: a plugin's sub-module of another namespace
  (``mskernel.nn.probability``) or of a core package open to plugins
  (``mskernel.common.initializer``, whose attribute access goes through
  :func:`namespace_member`);
- at the front, :class:`NamespaceMemberFinder` answers for ``mskernel.<name>.<member>...``
  once ``mskernel.<name>`` is such an alias: the member is the alias of the module the
  namespace holds under that name (``mskernel_data.api.vision`` is ``mskernel_data.vision``)
  or of the real submodule of an aliased package.  It runs first so that a plugin module is
  never imported a second time under its ``mskernel.`` name.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from importlib import import_module
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any, Mapping, Optional, Sequence


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        return import_module(self.target)  # its own __name__ and __spec__ are kept

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the target module was imported by create_module."""


def _alias_spec(fullname: str, target: str) -> Optional[ModuleSpec]:
    # a package spec, so that the import system gives a plain module an empty __path__ and
    # goes on to look its members up (through NamespaceMemberFinder)
    return importlib.util.spec_from_loader(fullname, _Alias(target), is_package=True)


class NamespaceFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Optional[Sequence[str]],
                  target: Any = None) -> Optional[ModuleSpec]:
        package, _, name = fullname.partition(".")
        if package != "mskernel" or not name:
            return None
        from .hooks.host import host

        entry = host().namespace_target(name)
        if entry is None or ":" in entry:
            return None
        return _alias_spec(fullname, entry)


class NamespaceMemberFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Optional[Sequence[str]],
                  target: Any = None) -> Optional[ModuleSpec]:
        parts = fullname.split(".")
        if parts[0] != "mskernel" or len(parts) < 3:
            return None
        namespace = sys.modules.get(f"mskernel.{parts[1]}")
        if namespace is None or namespace.__name__ == f"mskernel.{parts[1]}":
            return None  # not a plugin namespace: a core package imports as usual
        parent = sys.modules.get(fullname.rpartition(".")[0])
        member = getattr(parent, parts[-1], None)
        if isinstance(member, ModuleType):
            return _alias_spec(fullname, member.__name__)
        real = f"{parent.__name__}.{parts[-1]}" if parent is not None else None
        if real is not None and getattr(parent, "__path__", None) and \
                importlib.util.find_spec(real) is not None:
            return _alias_spec(fullname, real)
        return None


def namespace_member(package: str, name: str, lazy: Mapping[str, str]) -> Any:
    """Attribute ``name`` of the core package ``package`` (its module ``__getattr__``): the
    attribute of that name of the module ``lazy`` maps it to, imported now, or else the
    plugin namespace ``<package>.<name>`` (``mskernel.common.initializer``)."""
    if name in lazy:
        return getattr(import_module(lazy[name]), name)
    if name.startswith("_"):
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    from .hooks.host import host

    return host().namespace(f"{package.partition('.')[2]}.{name}")


def install() -> None:
    if not any(isinstance(f, NamespaceFinder) for f in sys.meta_path):
        sys.meta_path.append(NamespaceFinder())
    if not any(isinstance(f, NamespaceMemberFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, NamespaceMemberFinder())
