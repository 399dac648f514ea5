"""The ``grad`` stage: gradients of the claimed ops through the installed autodiff plugin.

The kit does not differentiate anything itself.  An autodiff plugin attaches ``"vjp"`` rules
to ops (``mskernel_register_rules``); the kit gets one :class:`VJPBuilder` from the pytest
hook ``pytest_mskernel_vjp_builder`` or, when no plugin implements it, builds VJP graphs with
the user function ``mskernel.vjp`` the autodiff plugin provides (:mod:`.autodiff`).  For every
claimed op with a ``"vjp"`` rule, the kit builds the VJP graph of the op's samples (real
float32/float64 operands), runs it with the backend under test preferred, and compares
``<vjp(u), v>`` with the directional derivative ``<u, (f(x + h v) - f(x - h v)) / 2h>``
evaluated by the reference interpreter in float64.  Without an autodiff plugin the stage is
reported as not run, never as passed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional, Protocol, Sequence

import numpy as np
from mskernel.ir import Graph, Type
from mskernel.ir.types import TensorType
from mskernel.ops import rule_registry
from mskernel.runtime import CompileOptions, compile_graph
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import OpSample, sample_graph

from ..samples import sample_rng, samples_for
from .compare import CheckFailure, NotRun
from .subject import Subject

RULE = "vjp"
#: Samples of each op whose gradient is checked.
MAX_SAMPLES = 3
#: Central-difference step, in float64.
STEP = 1e-6
#: Relative size of the noise added to samples: many samples sit on purpose where an op is
#: not differentiable (ties for sort, topk and cumulative min/max), gradients are checked at
#: points near them.
JITTER = 1e-2
#: (rtol, atol) of the gradient by the dtype it was computed in.
TOLERANCE = {"float32": (1e-3, 1e-5), "float64": (1e-6, 1e-9)}


class VJPBuilder(Protocol):
    """What an autodiff plugin gives the kit: ``graph`` mapping inputs ``xs`` to outputs
    ``ys`` becomes a graph taking ``(*xs, *cts)`` — one cotangent for each real floating
    output, of that output's type — and returning one gradient for each real floating input,
    of that input's type, in input order."""

    def __call__(self, graph: Graph) -> Graph: ...


def not_run_reason(subject: Subject, builder: Optional[VJPBuilder]) -> Optional[str]:
    """Why the stage cannot run for ``subject`` (``None`` when it can)."""
    rules = rule_registry()
    if not rules.ops_with(RULE):
        return "no autodiff plugin installed (no op has a 'vjp' rule)"
    if builder is None:
        return ("'vjp' rules are registered, but no plugin provides mskernel.vjp or "
                "implements the pytest hook pytest_mskernel_vjp_builder")
    if not gradient_ops(subject):
        return "none of the claimed ops has a 'vjp' rule"
    return None


def gradient_ops(subject: Subject) -> list[str]:
    """The claimed ops with a ``"vjp"`` rule."""
    with_rules = rule_registry().ops_with(RULE)
    return sorted(op for op in subject.capabilities.ops if op in with_rules)


def check_gradient(subject: Subject, op: str, seed: int, builder: VJPBuilder) -> str:
    """Compare the VJP of ``op``'s samples, run on the backend, with finite differences."""
    usable = [(s, g) for s in samples_for(op, seed) if _differentiable(s)
              for g in [sample_graph(s)] if subject.capabilities.supports(g.nodes[0])]
    if not usable:
        raise NotRun(f"no claimed sample of '{op}' can be differentiated here (real "
                     f"float32/float64 tensors and no regions)")
    rng = sample_rng(seed, f"{op}/grad")
    failures = []
    for sample, graph in usable[:MAX_SAMPLES]:
        problem = _vjp_problem(subject, _jittered(sample, graph, rng), graph, builder, rng)
        if problem:
            failures.append(f"{sample}: {problem}")
    if failures:
        raise CheckFailure(f"the VJP of '{op}' disagrees with finite differences (seed {seed}):"
                           "\n  " + "\n  ".join(failures))
    return f"{min(len(usable), MAX_SAMPLES)} samples"


def real_float(type_: Type) -> bool:
    """Whether values of ``type_`` are differentiated: float32 and float64 tensors."""
    return isinstance(type_, TensorType) and type_.dtype.name in TOLERANCE


def _differentiable(sample: OpSample) -> bool:
    """Tensors only, one of them real floating, and no regions (finite differences are taken
    in float64, and a region's types are fixed)."""
    return (not sample.regions and all(isinstance(a, np.ndarray) for a in sample.args)
            and any(real_float(t) for t in sample.arg_types()))


def _jittered(sample: OpSample, graph: Graph, rng: np.random.Generator) -> OpSample:
    """``sample`` with its real floating operands moved by a relative :data:`JITTER`, away
    from ties and kinks (central differences across a kink measure neither side)."""
    args = tuple(
        (a + JITTER * (1 + np.abs(a)) * rng.uniform(-1, 1, a.shape)).astype(a.dtype)
        if real_float(v.type) else a for a, v in zip(sample.args, graph.inputs))
    return replace(sample, args=args)


def _vjp_problem(subject: Subject, sample: OpSample, graph: Graph, builder: VJPBuilder,
                 rng: np.random.Generator) -> Optional[str]:
    """Why the VJP of ``graph`` at ``sample`` is wrong, ``None`` when it is right (or when the
    op has no real floating output, or is not differentiable at this point)."""
    wrt = [i for i, v in enumerate(graph.inputs) if real_float(v.type)]
    outs = [j for j, v in enumerate(graph.outputs) if real_float(v.type)]
    if not outs:
        return None
    cotangents = [_normal(rng, graph.outputs[j].type) for j in outs]
    directions = [_normal(rng, graph.inputs[i].type) for i in wrt]
    try:
        vjp = builder(graph)
        grads = compile_graph(vjp, backends=[subject.name],
                              options=CompileOptions(fallback="allow"))(*sample.args, *cotangents)
    except Exception as exc:
        return f"building or running its VJP raised {type(exc).__name__}: {exc}"
    if [np.shape(g) for g in grads] != [_tensor(graph.inputs[i].type).shape for i in wrt]:
        return (f"the VJP graph returned shapes {[np.shape(g) for g in grads]}, expected one "
                f"gradient per real floating input: {[graph.inputs[i].type for i in wrt]}")
    terms = [np.vdot(np.asarray(g, np.float64), d) for g, d in zip(grads, directions)]
    analytic = float(np.real(sum(terms)))
    numeric = _directional_derivative(sample, wrt, outs, directions, cotangents)
    if not np.isfinite(numeric):
        return None  # not differentiable at this point
    worst = "float32" if any(_tensor(graph.inputs[i].type).dtype.name == "float32" for i in wrt) \
        else "float64"
    rtol, atol = TOLERANCE[worst]
    scale = sum(float(np.abs(np.asarray(g, np.float64)).ravel() @ np.abs(d).ravel())
                for g, d in zip(grads, directions))
    if abs(analytic - numeric) <= atol + rtol * (abs(numeric) + scale):
        return None
    return (f"<vjp(u), v> = {analytic:.8g}, but finite differences give {numeric:.8g} "
            f"(rtol {rtol:g}, atol {atol:g})")


def _tensor(type_: Type) -> TensorType:
    assert isinstance(type_, TensorType), f"{type_} is not differentiated"  # see real_float
    return type_


def _normal(rng: np.random.Generator, type_: Type) -> np.ndarray:
    tensor = _tensor(type_)
    return rng.standard_normal(tensor.shape).astype(tensor.dtype.storage)


def _directional_derivative(sample: OpSample, wrt: Sequence[int], outs: Sequence[int],
                            directions: Sequence[np.ndarray],
                            cotangents: Sequence[np.ndarray]) -> float:
    """``<u, J v>`` by central differences of the op evaluated in float64."""
    wide = replace(sample, dtypes=None, args=tuple(
        a.astype(np.float64) if i in wrt else a for i, a in enumerate(sample.args)))
    graph = sample_graph(wide)

    def f(step: float) -> float:
        args: list[Any] = list(wide.args)
        for i, d in zip(wrt, directions):
            args[i] = args[i] + step * d.astype(np.float64)
        results = run_graph(graph, args)
        return float(sum(np.real(np.vdot(u.astype(np.float64), np.asarray(results[j])))
                         for j, u in zip(outs, cotangents)))

    return (f(STEP) - f(-STEP)) / (2 * STEP)
