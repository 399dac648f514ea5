"""The process-wide registries, for the entry points that let a caller leave them out.

The IR, the passes and the runtime take what they look up — op definitions
(:class:`~mskernel.ir.lookup.OpLookup`), pipelines, backends — as arguments; the plugin host
owns the process's registries and fills them.  The entry points users call directly default to
the host's: ``GraphBuilder``, ``verify``, ``parse_graph``, ``save_model``/``load_model`` and
``run_graph`` (ops), ``PassManager.from_pipeline``/``run`` (pipelines, ops) and
``compile_graph`` (backends, pipelines, ops).  This module is where each such default is
resolved, and the one place below the plugin host that reaches it: the host imports those
layers, so it is imported here on first call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, TypeVar

if TYPE_CHECKING:
    from .hooks.host import PluginHost
    from .ir.lookup import OpLookup
    from .ops.registry import OpRegistry, RuleRegistry
    from .passes.registry import PassRegistry
    from .runtime.registry import BackendRegistry

__all__ = ["backend_registry", "op_registry", "or_default_ops", "pass_registry",
           "rule_registry"]

Definition = TypeVar("Definition")


def _host() -> PluginHost:
    from .hooks.host import host

    return host()


def op_registry() -> OpRegistry:
    """The process-wide op registry: the core's ops and those of every loaded plugin (an
    unknown name loads the external plugins)."""
    return _host().ops


def rule_registry() -> RuleRegistry:
    """The process-wide rule registry (VJP/JVP, sharding … attached to op names), with
    every external plugin's rules loaded."""
    plugin_host = _host()
    plugin_host.load_external()
    return plugin_host.rules


def pass_registry() -> PassRegistry:
    """The process-wide passes and pipelines, with every external plugin's loaded."""
    plugin_host = _host()
    plugin_host.load_external()
    return plugin_host.passes


def backend_registry() -> BackendRegistry:
    """The process-wide backends, with every external plugin's loaded."""
    plugin_host = _host()
    plugin_host.load_external()
    return plugin_host.backends


def or_default_ops(registry: Optional[OpLookup[Definition]]) -> OpLookup[Definition]:
    """``registry``, or the process-wide op registry when it is ``None``."""
    return op_registry() if registry is None else registry  # type: ignore[return-value]
