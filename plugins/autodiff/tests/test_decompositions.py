"""Differentiating a composite op's decomposition gives the op's own derivative: for every
differentiable composite core op, the VJP of the graph expanded into primitives (the
primitives' rules, chained) equals the VJP of the op's node (its own rule), in float64, on the
op's samples (tie-free for the ops that pick elements) — what a backend that does not claim
the op computes under ``grad``."""

from __future__ import annotations

import numpy as np
import pytest

from mskernel.frontend.tensor import Tensor
from mskernel.ops import op_registry, rule_registry
from mskernel.runtime import Capabilities
from mskernel.runtime.expand import expand_composites
from mskernel.testing import OpSample, assert_close, sample_graph, samples_for
from mskernel_autodiff.control import region_vjp

SAMPLES_PER_OP = 4
PRIMITIVES = Capabilities.uniform(op.name for op in op_registry() if op.primitive)
DIFFERENTIABLE = sorted(op.name for op in op_registry() if op.owner == "mskernel"
                        and not op.primitive and rule_registry().has("vjp", op.name))


def widened(sample: OpSample) -> OpSample | None:
    """The sample in float64 (complex128), or ``None`` when it holds non-finite values or no
    floating argument."""
    args = []
    for a in sample.args:
        a = np.asarray(a)
        if a.dtype.kind in "fc":
            if not np.all(np.isfinite(a)):
                return None
            a = a.astype(np.float64 if a.dtype.kind == "f" else np.complex128)
        args.append(a)
    if not any(a.dtype.kind in "fc" for a in args):
        return None
    return OpSample(sample.op, tuple(args), sample.attrs)


#: Ops that pick elements: at ties their derivative is a convention (the first of equal
#: maxima, say) that a chain of maximum/minimum nodes need not share, so their samples get
#: pairwise distinct finite values (sort's samples all hold ties and NaNs).
PICKING = {"max_pool", "adaptive_max_pool", "topk", "sort"}


def tie_free(sample: OpSample) -> OpSample:
    rng = np.random.default_rng(2)
    args = tuple(rng.permutation(np.linspace(-2, 2, a.size)).reshape(a.shape)
                 if a.dtype.kind == "f" else a for a in map(np.asarray, sample.args))
    return OpSample(sample.op, args, sample.attrs)


def cases(op: str) -> list[OpSample]:
    samples = [tie_free(s) if op in PICKING else s for s in samples_for(op)]
    usable = [s for s in map(widened, samples) if s is not None]
    distinct = {str(s) + repr(sorted(s.attrs.items(), key=str)): s for s in usable}
    return list(distinct.values())[:SAMPLES_PER_OP]


def cotangent(rng: np.random.Generator, value) -> np.ndarray | None:
    t = value.type
    if not t.dtype.is_inexact:
        return None
    ct = rng.standard_normal(t.shape)
    if t.dtype.is_complex:
        ct = ct + 1j * rng.standard_normal(t.shape)
    return ct.astype(t.dtype.storage)


def vjp(graph, args, cotangents) -> dict[int, np.ndarray]:
    """The cotangent of each floating argument, given those of the outputs."""
    wrt = [i for i, a in enumerate(args) if a.dtype.kind in "fc"]
    seeds = [(k, Tensor(ct)) for k, ct in enumerate(cotangents) if ct is not None]
    grads = region_vjp(graph, [Tensor(a) for a in args], wrt, seeds)
    return {i: g.numpy() for i, g in zip(wrt, grads)}


@pytest.mark.parametrize("op", DIFFERENTIABLE)
def test_the_derivative_of_the_decomposition_is_the_ops(op):
    samples = cases(op)
    assert samples, f"no finite floating sample of '{op}'"
    rng = np.random.default_rng(0)
    for sample in samples:
        graph = sample_graph(sample)
        expanded = expand_composites(graph, PRIMITIVES, op_registry()).graph
        assert all(n.op in PRIMITIVES for n in expanded.walk())
        cotangents = [cotangent(rng, v) for v in graph.outputs]
        own, chained = vjp(graph, sample.args, cotangents), vjp(expanded, sample.args, cotangents)
        for i, expected in own.items():
            scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
            assert_close(chained[i], expected, graph.inputs[i].type.dtype, rtol=1e-9,
                         atol=1e-12 * scale, what=f"{sample}: cotangent of input {i}")
