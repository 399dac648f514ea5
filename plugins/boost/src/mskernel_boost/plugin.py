"""The module named by the ``mskernel.plugins`` entry point ``boost``: registers the
mixed-precision passes and pipelines, the training transform ``amp`` behind
``Model(amp_level=...)`` and the Boost algorithms behind ``Model(boost_level=...)``, and
the user namespaces ``mskernel.amp`` and ``mskernel.boost`` (AutoBoost, THOR).  Importing
it loads no pass or layer code."""

from __future__ import annotations

from mskernel_sdk import TRAINING_TRANSFORM_RULE, PluginInfo, hookimpl

from . import __version__


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(
        name="boost", version=__version__, kind="transform",
        provides=["namespace:amp", "namespace:boost", "passes:amp_*",
                  "training_transform:amp", "training_transform:boost"],
        description="automatic mixed precision (O0-O3, float16/bfloat16) as IR passes, loss "
                    "scaling, Boost levels (LessBN, gradient freezing and accumulation), "
                    "the THOR second-order optimizer")


@hookimpl
def mskernel_register_passes(passes) -> None:
    from .amp.passes import CANCEL_CASTS, CLEANUP, registered_passes

    passes.register(CANCEL_CASTS)
    passes.register_pipeline("amp_cleanup", CLEANUP)
    for name, pass_ in registered_passes().items():
        passes.register(pass_)
        passes.register_pipeline(name, (name, *CLEANUP))


def _amp_transform(setup, level):
    from .amp.api import training_transform

    return training_transform(setup, level)


def _boost_transform(setup, level):
    from .levels.transform import training_transform

    return training_transform(setup, level)


@hookimpl
def mskernel_register_rules(rules) -> None:
    rules.register(TRAINING_TRANSFORM_RULE, "amp", _amp_transform)
    rules.register(TRAINING_TRANSFORM_RULE, "boost", _boost_transform)


@hookimpl
def mskernel_register_namespaces(namespaces) -> None:
    namespaces.register("amp", "mskernel_boost.amp.api")
    namespaces.register("boost", "mskernel_boost.api")
