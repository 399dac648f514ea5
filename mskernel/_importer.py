"""Making plugin namespaces importable: ``from mskernel.nn import Dense`` and
``import mskernel.dataset as ds`` work like ``mskernel.nn.Dense``.

A finder at the end of ``sys.meta_path`` answers only for ``mskernel.<name>`` that no real
submodule matched; it asks the plugin host (loading plugins on this first use) for the module
registered as namespace ``<name>`` and makes ``mskernel.<name>`` an alias of it.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from importlib import import_module
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any, Optional, Sequence


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        return import_module(self.target)  # its own __name__ and __spec__ are kept

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the target module was imported by create_module."""


class NamespaceFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Optional[Sequence[str]],
                  target: Any = None) -> Optional[ModuleSpec]:
        package, _, name = fullname.partition(".")
        if package != "mskernel" or not name or "." in name:
            return None
        from .hooks.host import host

        entry = host().namespace_target(name)
        if entry is None or ":" in entry:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(entry))


def install() -> None:
    if not any(isinstance(f, NamespaceFinder) for f in sys.meta_path):
        sys.meta_path.append(NamespaceFinder())
