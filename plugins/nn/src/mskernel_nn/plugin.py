"""The module named by the ``mskernel.plugins`` entry point ``nn``: registers the user
namespaces ``mskernel.nn`` (:mod:`mskernel_nn.api`), ``mskernel.train``
(:mod:`mskernel_nn.train_api`), the initialisers as ``mskernel.common.initializer``, and the
top-level names MindSpore scripts use — the checkpoint functions
(``mskernel.save_checkpoint`` …), ``mskernel.Model`` and the callbacks — and the members of
``mskernel.ops`` it defines (:mod:`mskernel_nn.functional`: ``ops.cross_entropy``,
``ops.interpolate``, ``ops.ReduceMean`` …).  Importing it loads no layer code."""

from __future__ import annotations

from mskernel_sdk import PluginInfo, hookimpl

from . import __version__

#: ``mskernel.<name>`` → the module of this plugin that defines it.
TOP_LEVEL_NAMES = {
    **dict.fromkeys(("save_checkpoint", "load_checkpoint", "load_param_into_net"),
                    "mskernel_nn.checkpoint"),
    "Model": "mskernel_nn.model",
    **dict.fromkeys(("Callback", "RunContext", "LossMonitor", "TimeMonitor", "ModelCheckpoint",
                     "CheckpointConfig"), "mskernel_nn.callbacks"),
}


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(
        name="nn", version=__version__, kind="library",
        provides=["namespace:nn", "namespace:train", "namespace:common.initializer",
                  *(f"namespace:{name}" for name in TOP_LEVEL_NAMES)],
        description="layers, initialisers, losses, optimizers, Model and checkpoints")


@hookimpl
def mskernel_register_namespaces(namespaces) -> None:
    namespaces.register("nn", "mskernel_nn.api")
    namespaces.register("train", "mskernel_nn.train_api")
    namespaces.register("common.initializer", "mskernel_nn.initializer")
    for name, module in TOP_LEVEL_NAMES.items():
        namespaces.register(name, f"{module}:{name}")
    from .functional import ops_members

    for name, target in ops_members().items():
        namespaces.register(f"ops.{name}", target)
