"""The module named by the ``mskernel.plugins`` entry point ``linalg``: registers the
``linalg.*`` ops, their host kernels (LAPACK through ``numpy.linalg``), their derivative rules
(read by mskernel-autodiff) and the functions as members of ``mskernel.ops``.  Importing it
loads no op code."""

from __future__ import annotations

from mskernel_sdk import HOST_KERNEL_RULE, PluginInfo, hookimpl

from . import __version__

#: ``mskernel.ops.<name>`` → ``mskernel_linalg.api:<name>``.
OPS_NAMES = ("inverse", "solve", "det", "slogdet", "cholesky", "eigh", "lstsq", "qr", "svd")


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(name="linalg", version=__version__, kind="library",
                      provides=[*(f"namespace:ops.{n}" for n in OPS_NAMES), "ops:linalg.*",
                                "rules:linalg.*", "host_kernels:linalg.*"],
                      description="matrix inverse, solve, determinant, Cholesky, symmetric "
                                  "eigendecomposition, QR and SVD with derivatives")


@hookimpl
def mskernel_register_ops(registry) -> None:
    from .ops import OPS

    registry.define_all(OPS)


@hookimpl
def mskernel_register_rules(rules) -> None:
    from .ops import HOST_KERNELS
    from .rules import RULES

    for kind, op, rule in RULES:
        rules.register(kind, op, rule)
    for op, kernel in HOST_KERNELS.items():
        rules.register(HOST_KERNEL_RULE, op, kernel)


@hookimpl
def mskernel_register_namespaces(namespaces) -> None:
    for name in OPS_NAMES:
        namespaces.register(f"ops.{name}", f"mskernel_linalg.api:{name}")
