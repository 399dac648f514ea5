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
