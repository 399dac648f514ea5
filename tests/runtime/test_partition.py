"""Placement by capability and priority, fallback policy, segments and transfers."""

import numpy as np
import pytest

from mskernel.errors import BackendError
from mskernel.ir import GraphBuilder, SourceLoc, float32, tensor_type
from mskernel.runtime import CompiledGraph, FallbackWarning, partition
from mskernel.runtime.interpreter import run_graph
from mskernel.runtime.reference import ReferenceBackend


def chain_graph():
    """x → exp → add(x) → erf → mul(x) → tanh : erf and tanh are not claimed by 'fast'."""
    b = GraphBuilder("chain")
    x = b.input(tensor_type("f32", (4, 8)), "x")
    e = b.op("exp", x)
    a = b.op("add", e, x)
    r = b.op("erf", a, loc=SourceLoc("model.py", 7))
    m = b.op("mul", r, x)
    t = b.op("tanh", m)
    return b.build([t, e])


def run_plan(plan, backends, args):
    executables = [
        {b.name: b for b in backends}[s.backend].compile(s.graph, None) for s in plan.segments
    ]
    compiled = CompiledGraph(plan, {b.name: b for b in backends}, executables)
    return compiled(*args)


def test_single_backend_is_one_segment_with_the_whole_graph():
    g = chain_graph()
    plan = partition(g, [ReferenceBackend()], "deny")
    assert len(plan.segments) == 1 and plan.segments[0].graph is g
    assert not plan.transfers and not plan.fallbacks


def test_unclaimed_nodes_fall_back_and_are_reported(subset_backend):
    fast = subset_backend("fast", ["exp", "add", "mul"])
    ref = ReferenceBackend()
    g = chain_graph()
    with pytest.warns(FallbackWarning, match=r"'erf' at model.py:7 → reference \(fast: no kernel"):
        plan = partition(g, [fast, ref], "warn")
    assert [p.backend for p in plan.placements] == ["fast", "fast", "reference", "fast", "reference"]
    assert [s.backend for s in plan.segments] == ["fast", "reference", "fast", "reference"]
    # add→erf, erf→mul, mul→tanh cross backends; x is a graph input (no transfer counted)
    assert len(plan.transfers) == 3
    assert plan.transfer_bytes == 3 * 4 * 8 * 4
    text = plan.explain()
    assert "fallback: fast: no kernel for 'erf'" in text and "transfers: 3 (384 B)" in text


def test_partitioned_run_equals_the_interpreter(subset_backend):
    fast = subset_backend("fast", ["exp", "add", "mul"])
    ref = ReferenceBackend()
    g = chain_graph()
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    plan = partition(g, [fast, ref], "allow")
    got = run_plan(plan, [fast, ref], [x])
    want = run_graph(g, [x])
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_deny_policy_refuses_fallback_naming_the_nodes(subset_backend):
    fast = subset_backend("fast", ["exp", "add", "mul"])
    with pytest.raises(BackendError, match=r"cannot run 2 node.*'erf' at model.py:7.*'deny'"):
        partition(chain_graph(), [fast, ReferenceBackend()], "deny")


def test_no_capable_backend_names_op_and_every_reason(subset_backend):
    fast = subset_backend("fast", ["exp"])
    with pytest.raises(BackendError, match=r"node 1 'add'.*cannot run on any backend: fast: no kernel"):
        partition(chain_graph(), [fast], "allow")


def test_dtype_capabilities_are_respected(subset_backend):
    f32_only = subset_backend("f32only", ["add"], dtypes=frozenset({float32}))
    b = GraphBuilder()
    x = b.input(tensor_type("f64", (2,)))
    g = b.build([b.op("add", x, x)])
    plan = partition(g, [f32_only, ReferenceBackend()], "allow")
    assert plan.placements[0].backend == "reference"
    assert "dtype float64 not supported" in plan.placements[0].fallback_reason


def test_segments_cluster_independent_work_on_one_backend(subset_backend):
    """Two independent chains interleaved in program order still give two segments."""
    fast = subset_backend("fast", ["exp"])
    b = GraphBuilder()
    x = b.input(tensor_type("f32", (3,)))
    e1 = b.op("exp", x)
    s1 = b.op("sin", x)
    e2 = b.op("exp", e1)
    s2 = b.op("sin", s1)
    g = b.build([e2, s2])
    plan = partition(g, [fast, ReferenceBackend()], "allow")
    assert [s.backend for s in plan.segments] == ["fast", "reference"]
    assert not plan.transfers
