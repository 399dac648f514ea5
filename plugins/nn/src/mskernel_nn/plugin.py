"""The module named by the ``mskernel.plugins`` entry point ``nn``: registers the user
namespaces ``mskernel.nn`` (:mod:`mskernel_nn.api`), ``mskernel.train``
(:mod:`mskernel_nn.train_api`) and the checkpoint functions ``mskernel.save_checkpoint``,
``mskernel.load_checkpoint`` and ``mskernel.load_param_into_net``.  Importing it loads no
layer code."""

from __future__ import annotations

from mskernel_sdk import PluginInfo, hookimpl

from . import __version__

#: ``mskernel.<name>`` → ``mskernel_nn.checkpoint:<name>``.
CHECKPOINT_NAMES = ("save_checkpoint", "load_checkpoint", "load_param_into_net")


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(
        name="nn", version=__version__, kind="library",
        provides=["namespace:nn", "namespace:train",
                  *(f"namespace:{name}" for name in CHECKPOINT_NAMES)],
        description="layers, initialisers, losses, optimizers, Model and checkpoints")


@hookimpl
def mskernel_register_namespaces(namespaces) -> None:
    namespaces.register("nn", "mskernel_nn.api")
    namespaces.register("train", "mskernel_nn.train_api")
    for name in CHECKPOINT_NAMES:
        namespaces.register(name, f"mskernel_nn.checkpoint:{name}")
