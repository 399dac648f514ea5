"""mskernel-sdk as an mskernel plugin (entry point ``sdk``): it adds ``mskernel sdk``."""

from __future__ import annotations

from mskernel.hooks import PluginInfo, hookimpl
from mskernel.hooks.registries import CommandRegistry

from . import __version__
from .cli import configure, run


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(name="sdk", version=__version__, kind="library",
                      provides=["command:sdk", "pytest:--mskernel-backend"],
                      description="Plugin SDK: plugin template and backend conformance kit.")


@hookimpl
def mskernel_add_cli(commands: CommandRegistry) -> None:
    commands.add("sdk", "plugin author tools (new-plugin)", configure, run)
