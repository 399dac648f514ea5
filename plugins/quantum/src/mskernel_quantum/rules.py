"""The derivative rules of the quantum ops, registered through the core's
``mskernel_register_rules`` hook (read by mskernel-autodiff; this plugin never imports it).

``quantum.expectation(params)`` maps ``[..., P]`` to ``[...]`` and
``quantum.expectation_grad(params)`` is its Jacobian row ``[..., P]`` (same attributes), so

- VJP: ``params_cotangent = cotangent[..., None] * expectation_grad(params)``;
- JVP: ``tangent_out = sum(expectation_grad(params) * params_tangent, axis=-1)``.

Both compute with :func:`mskernel_sdk.apply` only, so they work eagerly and
under ``@jit``.  ``quantum.expectation_grad`` itself has no rule: second derivatives of an
expectation are not provided, and asking for one raises autodiff's missing-rule error naming
the op.
"""

from __future__ import annotations

from typing import Any

from mskernel_sdk import apply

from .ops import EXPECTATION, apply_expectation


def _jacobian(params: Any, circuit: str, hamiltonian: str) -> Any:
    return apply_expectation(params, circuit, hamiltonian, gradient=True)


def expectation_vjp(primals, outputs, cotangents, *, circuit: str, hamiltonian: str):
    (params,), (cotangent,) = primals, cotangents
    per_parameter = apply("expand_dims", cotangent, axes=(-1,))
    return (apply("mul", per_parameter, _jacobian(params, circuit, hamiltonian)),)


def expectation_jvp(primals, tangents, outputs, *, circuit: str, hamiltonian: str):
    (params,), (tangent,) = primals, tangents
    product = apply("mul", _jacobian(params, circuit, hamiltonian), tangent)
    return (apply("sum", product, axes=(-1,)),)


#: ``(kind, op, rule)`` as given to ``rules.register``.
RULES = (("vjp", EXPECTATION, expectation_vjp), ("jvp", EXPECTATION, expectation_jvp))
