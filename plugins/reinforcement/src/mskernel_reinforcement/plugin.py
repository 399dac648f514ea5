"""The module named by the ``mskernel.plugins`` entry point ``reinforcement``: registers the
user namespace ``mskernel.rl`` (:mod:`mskernel_reinforcement.api`) and the ``mskernel rl``
command.  Importing it loads neither gymnasium nor any network code."""

from __future__ import annotations

from mskernel_sdk import PluginInfo, hookimpl

from . import __version__


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(
        name="reinforcement", version=__version__, kind="library",
        provides=["namespace:rl", "command:rl"],
        description="actors, learners, replay buffers; DQN, PPO, A2C, SAC on gymnasium")


@hookimpl
def mskernel_register_namespaces(namespaces) -> None:
    namespaces.register("rl", "mskernel_reinforcement.api")


@hookimpl
def mskernel_add_cli(commands) -> None:
    from .cli import configure, run

    commands.add("rl", "train an agent from a configuration file, or evaluate a checkpoint",
                 configure, run)
