"""The plugin module named by the ``mskernel.plugins`` entry point ``federated``: the
``mskernel.federated`` namespace and the ``mskernel federated`` command.  Importing it is
cheap (Flower is imported when a command runs)."""

from __future__ import annotations

from mskernel_sdk import PluginInfo, hookimpl

from . import __version__


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(name="federated", version=__version__, kind="library",
                      provides=["namespace:federated", "cli:federated"],
                      description="federated learning on Flower: SecAgg+, differential "
                                  "privacy, top-k compression, vertical FL with PSI")


@hookimpl
def mskernel_register_namespaces(namespaces) -> None:  # type: ignore[no-untyped-def]
    namespaces.register("federated", "mskernel_federated.api")


@hookimpl
def mskernel_add_cli(commands) -> None:  # type: ignore[no-untyped-def]
    from .cli import configure, run

    commands.add("federated", "federated learning on Flower (server, client, simulate)",
                 configure, run)
