"""The hookspecs as a :class:`typing.Protocol`, so a type checker can hold a plugin's hook
implementations to the contract of :mod:`.hookspecs` (a test keeps the two in step).

A plugin written as a class subclasses it; mypy then checks the signature of every hook the
class overrides, and the hooks it does not override stay inert (they carry no ``hookimpl``
mark, so pluggy never calls them)::

    class AcmePlugin(PluginHooks):
        @hookimpl
        def mskernel_register_backends(self, backends: BackendRegistry) -> None:
            backends.register("acme", AcmeBackend)

An entry point may name an instance of such a class (``acme = "mskernel_acme.plugin:plugin"``)
as well as a module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..ops.registry import OpRegistry, RuleRegistry
    from ..passes.registry import PassRegistry
    from ..runtime.registry import BackendRegistry
    from .info import PluginInfo
    from .registries import CommandRegistry, ModelReaderRegistry, NamespaceRegistry


class PluginHooks(Protocol):
    """Every hook of :mod:`mskernel.hooks.hookspecs`, with its parameters and return type;
    the docstrings there say what each must do."""

    def mskernel_plugin_info(self) -> PluginInfo:
        raise NotImplementedError("not a hook implementation until a subclass marks it")

    def mskernel_register_ops(self, registry: OpRegistry) -> None:
        return None

    def mskernel_register_rules(self, rules: RuleRegistry) -> None:
        return None

    def mskernel_register_backends(self, backends: BackendRegistry) -> None:
        return None

    def mskernel_register_passes(self, passes: PassRegistry) -> None:
        return None

    def mskernel_register_namespaces(self, namespaces: NamespaceRegistry) -> None:
        return None

    def mskernel_register_model_readers(self, readers: ModelReaderRegistry) -> None:
        return None

    def mskernel_add_cli(self, commands: CommandRegistry) -> None:
        return None
