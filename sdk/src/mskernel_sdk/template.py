"""``mskernel sdk new-plugin``: a complete plugin distribution from the templates shipped in
this package (``templates/common`` plus ``templates/<kind>``).

Templates are :class:`string.Template` files (``$name``, ``$package``, ...; Python code has
no ``$`` of its own) read with :mod:`importlib.resources`; a path segment ``PACKAGE`` becomes
the import package and the ``.tmpl`` suffix is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from string import Template
from typing import Iterator

from mskernel import PLUGIN_API_VERSION
from mskernel.errors import PluginError
from mskernel.hooks import plugin_host
from mskernel.hooks.registries import NamespaceRegistry

from . import __version__
from .versioning import core_requirement, series_requirement

KINDS = ("backend", "library")
NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
PACKAGE_SEGMENT = "PACKAGE"
SUFFIX = ".tmpl"
#: The pytest option of a backend's project: the kit reads its expectations file.
PYTEST_EXPECTATIONS = ("# known deviations from the reference semantics, read by "
                       "`pytest --mskernel-backend {name}`\n"
                       'mskernel_expectations = ["conformance.toml"]\n')


class TemplateError(Exception):
    """A plugin cannot be generated as asked; the message says why and what to do."""


@dataclass(frozen=True)
class PluginNames:
    """The names of one plugin, all derived from its entry-point name (``acme_gpu``):
    distribution ``mskernel-acme-gpu``, package ``mskernel_acme_gpu``, classes ``AcmeGpu*``."""

    name: str

    @property
    def distribution(self) -> str:
        return f"mskernel-{self.name.replace('_', '-')}"

    @property
    def package(self) -> str:
        return f"mskernel_{self.name}"

    @property
    def class_prefix(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_"))


def check_name(name: str, kind: str) -> PluginNames:
    """``name`` as a plugin of ``kind``, or :class:`TemplateError` when it is malformed or
    taken: a backend name already registered, a namespace the core reserves."""
    if kind not in KINDS:
        raise TemplateError(f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
    if not NAME.fullmatch(name):
        raise TemplateError(f"plugin name {name!r} must be lower case letters and digits, "
                            f"words joined by '_', starting with a letter (e.g. 'acme_gpu')")
    host = plugin_host()
    host.load_external()
    if kind == "backend" and name in host.backends.entries:
        owner = host.backends.entries[name].owner
        raise TemplateError(f"a backend named '{name}' is already registered by {owner}; "
                            f"choose another name")
    if kind == "library":
        try:  # the core's own rule for namespace names (mskernel.<name>)
            NamespaceRegistry().register(name, "-")
        except PluginError as exc:
            raise TemplateError(f"{exc}; choose another name") from None
        if name in host.namespaces.modules:
            raise TemplateError(f"namespace 'mskernel.{name}' is already provided by "
                                f"{host.namespaces.modules[name][1]}; choose another name")
    return PluginNames(name)


def new_plugin(name: str, kind: str, parent: Path) -> tuple[Path, list[Path]]:
    """Write the distribution of plugin ``name`` of ``kind`` into ``parent``; return its
    folder and the files written (relative to it).  Never overwrites anything."""
    names = check_name(name, kind)
    root = parent / names.distribution
    if root.exists():
        raise TemplateError(f"{root} already exists; remove it or choose another directory")
    values = _values(names, kind)
    rendered = dict(_render(files(__package__) / "templates" / "common", values))
    rendered.update(_render(files(__package__) / "templates" / kind, values))
    for relative, text in sorted(rendered.items()):
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root, sorted(rendered)


def _values(names: PluginNames, kind: str) -> dict[str, str]:
    description = {"backend": f"the {names.name} backend for mskernel",
                   "library": f"the {names.name} ops and namespace for mskernel"}[kind]
    pytest_options = {"backend": PYTEST_EXPECTATIONS.format(name=names.name), "library": ""}[kind]
    return {
        "name": names.name, "package": names.package, "distribution": names.distribution,
        "class_prefix": names.class_prefix, "kind": kind, "description": description,
        "core_requirement": core_requirement(), "plugin_api": PLUGIN_API_VERSION,
        "sdk_requirement": series_requirement("mskernel-sdk", __version__),
        "pytest_options": pytest_options,
    }


def _render(folder: Traversable, values: dict[str, str],
            prefix: Path = Path()) -> Iterator[tuple[Path, str]]:
    for entry in folder.iterdir():
        segment = values["package"] if entry.name == PACKAGE_SEGMENT else entry.name
        if entry.is_dir():
            yield from _render(entry, values, prefix / segment)
        elif entry.name.endswith(SUFFIX):
            text = Template(entry.read_text(encoding="utf-8")).substitute(values)
            yield prefix / segment.removesuffix(SUFFIX), text
