"""``mskernel.ops``: the ops.

Users call them: ``mskernel.ops.exp(x)``, ``ops.matmul(a, b)``, ``ops.cond(p, f, g, x)`` —
the functional ops of MindSpore's ``mindspore.ops``, which the frontend defines
(:mod:`mskernel.frontend.functional`, :mod:`mskernel.frontend.control`) and this package
resolves on first access, so importing the op definitions never imports the frontend.

Plugin authors define them: :class:`OpDef` and :class:`Attr` (in the module
:mod:`mskernel.ops.registry`, with :class:`OpRegistry` and :class:`RuleRegistry`), the core
op set one module per family (:mod:`.elementwise`, :mod:`.shape`, …), and the process-wide
registries the plugin host fills, :func:`op_registry` and :func:`rule_registry`.
"""

from __future__ import annotations

from .._importer import namespace_member
from ..defaults import op_registry, rule_registry
from .registry import Attr, OpDef, OpRegistry, RuleRegistry

__all__ = ["Attr", "OpDef", "OpRegistry", "RuleRegistry", "op_registry", "rule_registry"]

#: The frontend modules whose ``__all__`` are the user's functional ops.
_FUNCTIONAL = ("mskernel.frontend.functional", "mskernel.frontend.control")


def __getattr__(name: str):
    """``mskernel.ops.exp(x)`` and the other functional ops (and ``cond``, ``while_loop``,
    ``fori_loop``, ``scan``, ``switch``) come from the frontend, loaded on first access and
    then kept here, so ``ops.exp`` in a layer's hot path is a plain attribute lookup.  Then
    come the members plugins add under the namespace name ``"ops.<name>"``
    (``ops.stop_gradient`` from mskernel-autodiff), looked up in the plugin host each time;
    a name nobody provides is a :class:`~mskernel.errors.MissingPluginError` (an
    ``AttributeError``)."""
    from importlib import import_module

    for module in _FUNCTIONAL:
        mod = import_module(module)
        if name in getattr(mod, "__all__", ()):
            value = globals()[name] = getattr(mod, name)
            return value
    return namespace_member(__name__, name, {})
