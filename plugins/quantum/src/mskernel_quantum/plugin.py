"""The plugin module named by the ``mskernel.plugins`` entry point ``quantum``: registers the
quantum ops, their host kernels and derivative rules (used by mskernel-autodiff when
installed) and the ``mskernel.quantum`` namespace.  Importing it is cheap (no simulator, no
native code)."""

from __future__ import annotations

from mskernel_sdk import HOST_KERNEL_RULE, PluginInfo, hookimpl

from . import __version__
from .ops import HOST_KERNELS, OPS


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(name="quantum", version=__version__, kind="library",
                      provides=["namespace:quantum", "ops:quantum.*", "rules:quantum.*",
                                "host_kernels:quantum.*"],
                      description="quantum circuits, simulation with adjoint gradients, noise")


@hookimpl
def mskernel_register_ops(registry) -> None:
    registry.define_all(OPS)


@hookimpl
def mskernel_register_rules(rules) -> None:
    from .rules import RULES
    from .samples import SAMPLES

    for kind, op, rule in RULES:
        rules.register(kind, op, rule)
    for op, kernel in HOST_KERNELS.items():  # run beside any backend
        rules.register(HOST_KERNEL_RULE, op, kernel)
    for op, samples in SAMPLES.items():  # read by mskernel-sdk's conformance kit
        rules.register("samples", op, samples)


@hookimpl
def mskernel_register_namespaces(namespaces) -> None:
    namespaces.register("quantum", "mskernel_quantum.api")
