"""Test helpers for plugin authors (exported by :mod:`mskernel_sdk`)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from mskernel.errors import PluginError
from mskernel.hooks import plugin_host
from mskernel.ir import Graph, OpLookup
from mskernel.ops import OpDef
from mskernel.runtime.interpreter import run_graph


def register_plugin(plugin: Any, name: str, *, distribution: Optional[str] = None,
                    version: str = "0.0.0") -> None:
    """Register a plugin object (a module, or any object with hook functions) in this
    process as if it were installed, and run its registration hooks — for tests and
    notebooks.  Raises :class:`PluginError` with the reason and traceback when a hook fails."""
    record = plugin_host().register(plugin, name=name, version=version,
                                    distribution=distribution or f"mskernel-{name}")
    if record.status != "ok":
        raise PluginError(f"plugin '{name}' is {record.status}: {record.reason}\n"
                          f"{record.detail or ''}".rstrip())


def run_reference(graph: Graph, args: Sequence[Any],
                  registry: Optional[OpLookup[OpDef]] = None) -> list[Any]:
    """Evaluate ``graph`` on host arrays with the ops' reference semantics — the
    specification the conformance kit compares backends with.  ``registry`` looks the ops
    up (default: the process's), so a plugin may substitute some ops' semantics (a
    simulation of several ranks gives the collectives its own)."""
    return run_graph(graph, args, registry)
