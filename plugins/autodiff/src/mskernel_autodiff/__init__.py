"""mskernel-autodiff: automatic differentiation for mskernel as a plugin.

Users reach it through the core's namespaces — ``mskernel.grad``, ``mskernel.value_and_grad``,
``mskernel.vjp``, ``mskernel.jvp``, ``mskernel.jacrev``, ``mskernel.jacfwd``,
``mskernel.hessian``, ``mskernel.stop_gradient``, ``mskernel.custom_vjp``,
``mskernel.custom_jvp``, ``mskernel.GradOperation`` and the module ``mskernel.autodiff`` — all
defined in :mod:`mskernel_autodiff.api`.

Plugin authors make their ops differentiable without importing this package: they attach
``"vjp"`` and ``"jvp"`` rules to op names in ``mskernel_register_rules`` (see the README and
:mod:`mskernel_autodiff.lookup`).
"""

__version__ = "0.1.0"
