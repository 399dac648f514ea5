"""Op definitions: the registry, the definition type, and the core op set.

``mskernel.ops.registry()`` is the process-wide :class:`OpRegistry` (core ops plus those of
loaded plugins).  Functional user-facing ops (``mskernel.ops.exp(x)``) are added by the
frontend.
"""

from __future__ import annotations

from .registry import Attr, OpDef, OpRegistry, RuleRegistry


def registry() -> OpRegistry:
    """The process-wide op registry."""
    from ..hooks.host import host

    return host().ops


def rule_registry() -> RuleRegistry:
    """The process-wide rule registry (VJP/JVP, sharding, … attached to op names)."""
    from ..hooks.host import host

    host().load_external()
    return host().rules


__all__ = ["Attr", "OpDef", "OpRegistry", "RuleRegistry", "registry", "rule_registry"]


def __getattr__(name: str):
    """``mskernel.ops.exp(x)`` and the other functional ops (and ``cond``, ``while_loop``,
    ``fori_loop``, ``scan``, ``switch``) come from the frontend, loaded on first access and
    then kept here, so ``ops.exp`` in a layer's hot path is a plain attribute lookup."""
    from importlib import import_module

    for module in ("mskernel.frontend.functional", "mskernel.frontend.control"):
        mod = import_module(module)
        if name in getattr(mod, "__all__", ()):
            value = globals()[name] = getattr(mod, name)
            return value
    raise AttributeError(f"module 'mskernel.ops' has no attribute {name!r}")
