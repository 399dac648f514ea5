"""The plugin module of mskernel-npfuse: the entry point ``npfuse`` of the group
``mskernel.plugins`` names it.  mskernel imports it on first use (never at ``import
mskernel``) and calls each hook below once."""

from mskernel_sdk import SAMPLES_RULE, PluginInfo, hookimpl

from . import __version__
from .backend import NpfuseBackend
from .fusion import DENSE, DENSE_OP, FUSE_DENSE, PIPELINE, dense_samples

#: Preferred over the reference backend (priority -1000) but below production backends: an
#: example should not take over a user's graphs.  ``MSKERNEL_BACKENDS=npfuse`` puts it first.
PRIORITY = -100


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(name="npfuse", version=__version__, kind="backend",
                      provides=["backend:npfuse", f"ops:{DENSE}", f"pipeline:{PIPELINE}"],
                      description="NumPy kernels with a fused dense op (an SDK example)")


@hookimpl
def mskernel_register_ops(registry) -> None:
    registry.define(DENSE_OP)


@hookimpl
def mskernel_register_rules(rules) -> None:
    rules.register(SAMPLES_RULE, DENSE, dense_samples)


@hookimpl
def mskernel_register_backends(backends) -> None:
    # the factory is called when the backend is first needed; it must not raise when the
    # hardware is missing (availability() says so instead)
    backends.register("npfuse", NpfuseBackend, priority=PRIORITY)


@hookimpl
def mskernel_register_passes(passes) -> None:
    passes.register(FUSE_DENSE)
    passes.register_pipeline(PIPELINE, [FUSE_DENSE.name, "dce"])
