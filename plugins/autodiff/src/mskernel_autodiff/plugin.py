"""The module named by the ``mskernel.plugins`` entry point ``autodiff``: registers the
derivative and batching rules of the core ops and of ``If``/``While``, the
``autodiff.stop_gradient`` and ``autodiff.depend`` ops and the user namespaces
(``mskernel.grad``, …, ``mskernel.vmap``, ``mskernel.autodiff``, ``mskernel.ops.depend``,
…).  Importing it loads no rule code; the hooks do, when the core first needs them."""

from __future__ import annotations

from mskernel_sdk import PluginInfo, hookimpl

from . import __version__

#: ``mskernel.<name>`` → ``mskernel_autodiff.api:<name>``.
API_NAMES = ("grad", "value_and_grad", "get_grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
             "vmap", "stop_gradient", "custom_vjp", "custom_jvp", "GradOperation")
#: ``mskernel.ops.<name>`` → ``mskernel_autodiff.api:<name>`` (MindSpore's ``ops`` has them).
OPS_NAMES = ("stop_gradient", "depend", "GradOperation")


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(
        name="autodiff", version=__version__, kind="transform",
        provides=["namespace:autodiff", *(f"namespace:{n}" for n in API_NAMES),
                  *(f"namespace:ops.{n}" for n in OPS_NAMES),
                  "rules:vjp", "rules:jvp", "rules:batch", "ops:autodiff.*"],
        description="automatic differentiation: grad, vjp, jvp, Jacobians, Hessians, "
                    "through cond and while loops, eager and under @jit; vmap")


@hookimpl
def mskernel_register_ops(registry) -> None:
    from .ops import OPS

    registry.define_all(OPS)


@hookimpl
def mskernel_register_rules(rules) -> None:
    from . import control
    from .lookup import JVP, NONDIFFERENTIABLE, VJP
    from .ops import DEPEND, STOP_GRADIENT, depend_jvp, depend_vjp
    from .batching import BATCH, NOT_BATCHABLE
    from .rules import (
        BATCH as BATCH_RULES, JVP as JVP_RULES, NONDIFFERENTIABLE as NO_DERIVATIVE,
        NOT_BATCHABLE as UNBATCHABLE, VJP as VJP_RULES,
    )

    for kind, table in ((VJP, VJP_RULES), (JVP, JVP_RULES), (BATCH, BATCH_RULES),
                        (NOT_BATCHABLE, UNBATCHABLE)):
        for op, rule in table.items():
            rules.register(kind, op, rule)
    for kind, op, rule in ((VJP, "If", control.if_vjp), (JVP, "If", control.if_jvp),
                           (VJP, "While", control.while_vjp), (JVP, "While", control.while_jvp),
                           (VJP, DEPEND, depend_vjp), (JVP, DEPEND, depend_jvp)):
        rules.register(kind, op, rule)
    for op in sorted(NO_DERIVATIVE | {STOP_GRADIENT}):
        rules.register(NONDIFFERENTIABLE, op, True)


@hookimpl
def mskernel_register_namespaces(namespaces) -> None:
    for name in API_NAMES:
        namespaces.register(name, f"mskernel_autodiff.api:{name}")
    for name in OPS_NAMES:
        namespaces.register(f"ops.{name}", f"mskernel_autodiff.api:{name}")
    namespaces.register("autodiff", "mskernel_autodiff.api")
