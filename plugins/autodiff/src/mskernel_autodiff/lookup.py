"""The derivative rules of an op, read from the core's rule registry by op name.

Any plugin makes its ops differentiable in ``mskernel_register_rules``, without importing
this package::

    @hookimpl
    def mskernel_register_rules(rules):
        rules.register("vjp", "demo.cube", cube_vjp)
        rules.register("jvp", "demo.cube", cube_jvp)
        rules.register("nondifferentiable", "demo.bucketize", True)

Rule kinds read here:

``"vjp"``: ``rule(primals, outputs, cotangents, **attrs) -> tuple[Tensor | None, ...]``
    One cotangent per input, of that input's type (``None``: zero or no gradient, always the
    case for integer and bool inputs).  ``cotangents`` has one entry per output, ``None``
    meaning zero.
``"jvp"``: ``rule(primals, tangents, outputs, **attrs) -> tuple[Tensor | None, ...]``
    One tangent per output, of that output's type (``None``: zero).  ``tangents`` has one
    entry per input, ``None`` meaning zero.
``"nondifferentiable"``: ``True``
    The op's outputs are piecewise constant in its inputs (comparisons, rounding, random
    draws, index computations): no derivative flows through it, in either mode.

A rule is called only when some cotangent (tangent) is not zero.  It receives the op's
attributes bound — every attribute of its schema, defaults filled in — and ops with regions
(``If``, ``While``) also get ``regions=``.  Results for integer and bool values are ignored;
every other result must have exactly its primal's type, which is checked.  A rule computes with
:func:`mskernel_sdk.apply` (never reading tensor values), so it works eagerly
and under tracing, and the ops it applies are recorded by enclosing transforms: that is how
higher derivatives come about.
"""

from __future__ import annotations

from typing import Any, Sequence

from mskernel_sdk import Graph, MskernelError, Tensor, op_registry, rule_registry

from .transform import differentiable

VJP = "vjp"
JVP = "jvp"
NONDIFFERENTIABLE = "nondifferentiable"


class MissingRuleError(MskernelError, NotImplementedError):
    """An op on the differentiated path has no derivative rule of the kind needed."""


class RuleResultError(MskernelError, TypeError):
    """A derivative rule returned the wrong number or types of results."""


def is_nondifferentiable(op: str) -> bool:
    return rule_registry().has(NONDIFFERENTIABLE, op)


def call_rule(kind: str, op: str, first: tuple[Any, ...], second: tuple[Any, ...],
              third: tuple[Any, ...], attrs: dict[str, Any], regions: Sequence[Graph],
              expected: Sequence[Tensor]) -> tuple[Any, ...]:
    """Run the ``kind`` rule of ``op`` on its three positional arguments and the op's bound
    attributes; check it returns one result of the right type per ``expected`` tensor
    (results for non-differentiable tensors are dropped)."""
    rule = rule_registry().get(kind, op)
    if rule is None:
        raise MissingRuleError(missing_rule_message(kind, op))
    opdef = op_registry().get(op)
    bound = opdef.bind_attrs(attrs)
    extra = {"regions": tuple(regions)} if opdef.num_regions else {}
    results = tuple(rule(first, second, third, **bound, **extra))
    return check_results(f"the '{kind}' rule of op '{op}'", results, expected,
                         "cotangent" if kind == VJP else "tangent")


def check_results(who: str, results: tuple[Any, ...], expected: Sequence[Tensor],
                  what: str) -> tuple[Any, ...]:
    """``results`` with one entry per ``expected`` tensor, each ``None`` or of its type;
    entries for tensors that carry no derivative become ``None``."""
    if len(results) != len(expected):
        per = "input" if what == "cotangent" else "output"
        raise RuleResultError(f"{who} returned {len(results)} {what}(s), expected "
                              f"{len(expected)} (one per {per})")
    checked = []
    for i, (r, e) in enumerate(zip(results, expected)):
        if r is None or not differentiable(e):
            checked.append(None)
            continue
        if not isinstance(r, Tensor) or r.type != e.type:
            hint = (" (reduce a broadcast cotangent with sum_to_shape)"
                    if what == "cotangent" and isinstance(r, Tensor) and r.dtype is e.dtype
                    else "")
            raise RuleResultError(
                f"{who} returned a {what} of type {_type_of(r)} for position {i}, which has "
                f"type {e.type}; a {what} has exactly its primal's shape and dtype{hint}")
        checked.append(r)
    return tuple(checked)


def _type_of(r: Any) -> str:
    return str(r.type) if isinstance(r, Tensor) else type(r).__name__


def missing_rule_message(kind: str, op: str) -> str:
    owner = op_registry().get(op).owner
    mode = "reverse-mode (grad, vjp, jacrev)" if kind == VJP else "forward-mode (jvp, jacfwd)"
    if owner == "mskernel":
        source = (f"'{op}' is a core op, whose rules come with mskernel-autodiff: upgrade "
                  "mskernel-autodiff, or register one")
    else:
        source = f"'{op}' is defined by {owner}: that plugin (or another) must register one"
    return (f"op '{op}' has no '{kind}' rule, so {mode} differentiation cannot pass through "
            f"it. {source} with rules.register('{kind}', '{op}', rule) in its "
            f"mskernel_register_rules hook, or rules.register('{NONDIFFERENTIABLE}', '{op}', "
            "True) if it has no derivative; wrap its inputs in mskernel.stop_gradient to treat "
            "them as constants")
