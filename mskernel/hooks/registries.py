"""Small registries the hooks fill: user namespaces, CLI sub-commands and model file readers,
and the scoping wrapper that stamps what a plugin registers with its distribution name."""

from __future__ import annotations

import argparse
import importlib.machinery
import os
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Union

from ..errors import FileFormatError, PluginError

#: Sub-commands of ``mskernel`` that the core itself defines (in :mod:`mskernel.cli`).
CORE_COMMANDS = frozenset({"plugins", "explain"})

#: Core namespaces a plugin may add members to (``mskernel.common.initializer``,
#: ``mskernel.ops.depend``); the core's own members come first.
EXTENSIBLE_NAMESPACES = frozenset({"common", "ops"})


@dataclass
class NamespaceRegistry:
    """``mskernel.<name>`` → the module that implements it (imported on first access).

    A name is a public Python identifier that the core does not use itself (``mskernel.ir``
    and ``mskernel.__version__`` cannot be taken over by a plugin), or a dotted path of them
    naming a member of another plugin's namespace (``"nn.probability"``), or one member of a
    core namespace open to plugins (:data:`EXTENSIBLE_NAMESPACES`: ``"common.initializer"``,
    ``"ops.depend"``).
    """

    modules: dict[str, tuple[str, str]] = field(default_factory=dict)  # name → (module, owner)

    def register(self, name: str, module: str, *, owner: str = "unknown") -> None:
        """Make ``mskernel.<name>`` resolve to ``module`` (a dotted module path) or to one
        attribute of it (``"mskernel_autodiff.api:grad"``)."""
        parts = name.split(".")
        if not all(part.isidentifier() and not part.startswith("_") for part in parts):
            raise PluginError(f"namespace name {name!r} is not a public Python identifier "
                              "(or a dotted path of them)")
        if _is_core_name(name):
            raise PluginError(f"namespace name {name!r} is taken by the core (mskernel.{name})")
        if len(parts) > 1 and _is_core_name(parts[0]):
            open_ones = ", ".join(f"'{n}.<member>'" for n in sorted(EXTENSIBLE_NAMESPACES))
            if parts[0] not in EXTENSIBLE_NAMESPACES or len(parts) > 2:
                raise PluginError(f"namespace name {name!r}: the core takes plugin members only "
                                  f"as {open_ones}")
        existing = self.modules.get(name)
        if existing is not None:
            raise PluginError(
                f"namespace 'mskernel.{name}' is already provided by {existing[1]}; "
                f"{owner} cannot provide it too"
            )
        self.modules[name] = (module, owner)

    def snapshot(self) -> Any:
        """The namespaces as they are now, for :meth:`restore`."""
        return dict(self.modules)

    def restore(self, state: Any) -> None:
        """Go back to a :meth:`snapshot`."""
        self.modules.clear()
        self.modules.update(state)


def _is_core_name(name: str) -> bool:
    """Whether ``mskernel.<name>`` is an attribute or submodule of the core (not imported)."""
    core = sys.modules["mskernel"]
    *package, leaf = name.split(".")
    if not package:
        value = vars(core).get(name)
        if isinstance(value, types.ModuleType) and not value.__name__.startswith("mskernel."):
            return False  # an imported plugin namespace (``import mskernel.nn``), not the core's
        if value is not None:
            return True
    # a real submodule file of the core (the namespace importer is not consulted)
    path = [os.path.join(core.__path__[0], *package)]
    return importlib.machinery.PathFinder.find_spec(f"mskernel.{name}", path) is not None


@dataclass
class Command:
    """A ``mskernel <name>`` sub-command added by a plugin's ``mskernel_add_cli``."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    owner: str


@dataclass
class CommandRegistry:
    commands: dict[str, Command] = field(default_factory=dict)

    def add(self, name: str, help: str, configure: Callable[[argparse.ArgumentParser], None],
            run: Callable[[argparse.Namespace], int], *, owner: str = "unknown") -> None:
        if name in CORE_COMMANDS:
            raise PluginError(f"command 'mskernel {name}' is defined by the core; choose another")
        if name in self.commands:
            raise PluginError(
                f"command 'mskernel {name}' is already added by {self.commands[name].owner}"
            )
        self.commands[name] = Command(name, help, configure, run, owner)

    def snapshot(self) -> Any:
        """The commands as they are now, for :meth:`restore`."""
        return dict(self.commands)

    def restore(self, state: Any) -> None:
        """Go back to a :meth:`snapshot`."""
        self.commands.clear()
        self.commands.update(state)


@dataclass(frozen=True)
class ModelReader:
    """One model file format: ``read(path)`` returns a :class:`mskernel.ir.Model`."""

    format: str
    read: Callable[[str], Any]
    suffixes: tuple[str, ...]
    magic: bytes
    owner: str


@dataclass
class ModelReaderRegistry:
    """Model file formats by name, found for a file by its first bytes or its suffix."""

    readers: dict[str, ModelReader] = field(default_factory=dict)

    def register(self, format: str, read: Callable[[str], Any], *,
                 suffixes: tuple[str, ...] = (), magic: bytes = b"",
                 owner: str = "unknown") -> None:
        """Read files of ``format`` with ``read(path)``: files starting with ``magic``, or
        else named with one of ``suffixes`` (``".onnx"``)."""
        if not format.isidentifier():
            raise PluginError(f"model format name {format!r} is not an identifier")
        if not (suffixes or magic):
            raise PluginError(f"model format '{format}' needs a magic prefix or a suffix")
        if any(not s.startswith(".") for s in suffixes):
            raise PluginError(f"model format '{format}': suffixes start with '.', got "
                              f"{list(suffixes)}")
        if format in self.readers:
            raise PluginError(f"model format '{format}' is already read by "
                              f"{self.readers[format].owner}; {owner} cannot read it too")
        for other in self.readers.values():
            clash = set(s.lower() for s in suffixes) & set(other.suffixes)
            if clash:
                raise PluginError(f"suffix {sorted(clash)[0]} is already read as "
                                  f"'{other.format}' by {other.owner}")
        self.readers[format] = ModelReader(format, read, tuple(s.lower() for s in suffixes),
                                           bytes(magic), owner)

    def reader_for(self, path: Union[str, "os.PathLike[str]"]) -> ModelReader:
        """The reader of the file at ``path``: by its first bytes, else by its suffix."""
        name = os.fspath(path)
        longest = max((len(r.magic) for r in self.readers.values()), default=0)
        with open(name, "rb") as f:
            head = f.read(longest)
        for reader in self.readers.values():
            if reader.magic and head.startswith(reader.magic):
                return reader
        suffix = os.path.splitext(name)[1].lower()
        for reader in self.readers.values():
            if suffix in reader.suffixes:
                return reader
        known = "; ".join(f"{r.format} ({', '.join(r.suffixes) or 'by content'}, "
                          f"{r.owner})" for r in self.readers.values())
        raise FileFormatError(f"{name}: not a model file of any installed format ({known})")

    def read(self, path: Union[str, "os.PathLike[str]"]) -> Any:
        """The :class:`mskernel.ir.Model` in the file at ``path``, whatever its format."""
        return self.reader_for(path).read(os.fspath(path))

    def snapshot(self) -> Any:
        """The readers as they are now, for :meth:`restore`."""
        return dict(self.readers)

    def restore(self, state: Any) -> None:
        """Go back to a :meth:`snapshot`."""
        self.readers = dict(state)


class Scoped:
    """A view of a registry for one plugin: calls to the methods named in ``stamped`` get
    ``owner=<distribution>`` filled in; everything else passes through."""

    def __init__(self, registry: Any, owner: str, stamped: tuple[str, ...]) -> None:
        self._registry = registry
        self._owner = owner
        self._stamped = stamped

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._registry, name)
        if name in self._stamped:
            owner = self._owner

            def stamped(*args: Any, **kwargs: Any) -> Any:
                kwargs.setdefault("owner", owner)
                return attr(*args, **kwargs)

            return stamped
        return attr

    def __contains__(self, item: object) -> bool:
        return item in self._registry

    def __iter__(self) -> Iterator[Any]:
        return iter(self._registry)

    def __len__(self) -> int:
        return len(self._registry)

    def __repr__(self) -> str:
        return f"<{type(self._registry).__name__} as seen by {self._owner}>"
