"""The memory planner: buffers share bytes only when their lifetimes do not overlap, the arena
of a chain of ops stays small, and planned graphs compute what the reference computes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mskernel.testing import region
from mskernel_sdk import GraphBuilder, run_reference, tensor_type

from mskernel_cpu.memory import ALIGNMENT, BufferRequest, aligned, plan_memory

X = tensor_type("f32", (256,))  # 1 KiB


def assert_valid(plan):
    buffers = plan.buffers
    for i, a in enumerate(buffers):
        assert a.offset % ALIGNMENT == 0
        assert a.end <= plan.arena_bytes
        for b in buffers[i + 1:]:
            if a.request.overlaps(b.request) and a.request.nbytes and b.request.nbytes:
                assert a.end <= b.offset or b.end <= a.offset, (a, b)


requests = st.lists(
    st.tuples(st.integers(0, 5000), st.integers(0, 30), st.integers(0, 10)).map(
        lambda t: BufferRequest(f"b{t}", t[0], t[1], t[1] + t[2])),
    max_size=40)


@settings(max_examples=200, deadline=None)
@given(requests)
def test_buffers_with_overlapping_lifetimes_never_share_bytes(reqs):
    plan = plan_memory("random", reqs)
    assert [b.request for b in plan.buffers] == reqs  # in request order
    assert_valid(plan)
    assert plan.arena_bytes <= plan.naive_bytes


def test_buffers_with_disjoint_lifetimes_share_bytes():
    plan = plan_memory("chain", [BufferRequest(f"v{i}", 1000, i, i + 1) for i in range(10)])
    assert_valid(plan)
    assert plan.arena_bytes == 2 * aligned(1000)  # two alive at a time
    assert plan.naive_bytes == 10 * aligned(1000)
    assert {b.offset for b in plan.buffers} == {0, aligned(1000)}


def test_chain_of_ops_reuses_two_buffers(executable):
    b = GraphBuilder("chain")
    v = b.input(X, "x")
    for op in ("exp", "sin", "cos", "tanh", "neg", "abs", "sqrt", "log1p"):
        v = b.op(op, v)
    graph = b.build([v])
    plan = executable(graph).memory_plan()
    assert len(plan.buffers) == 7  # the last value is the output, outside the arena
    assert plan.arena_bytes == 2 * X.nbytes and plan.naive_bytes == 7 * X.nbytes
    assert_valid(plan)
    assert "arena 2048 B for 7 buffer(s), 7168 B without reuse" in str(plan)


def test_a_value_used_late_keeps_its_buffer(cpu, executable):
    b = GraphBuilder("long_lived")
    x = b.input(X, "x")
    kept = b.op("exp", x)
    v = kept
    for op in ("sin", "cos", "tanh"):
        v = b.op(op, v)
    graph = b.build([b.op("add", v, kept)])
    compiled = executable(graph)
    plan = compiled.memory_plan()
    assert_valid(plan)
    (kept_buffer,) = [buf for buf in plan.buffers
                      if (buf.request.first, buf.request.last) == (0, 4)]
    for buf in plan.buffers:
        if buf is not kept_buffer:
            assert buf.end <= kept_buffer.offset or kept_buffer.end <= buf.offset
    x_host = np.linspace(-1, 1, 256, dtype=np.float32)
    (got,) = compiled.run([cpu.to_device(x_host, X)])
    (want,) = run_reference(graph, [x_host])
    np.testing.assert_allclose(got.to_host(), want, rtol=1e-6, atol=1e-7)


def test_kernel_workspace_is_planned_for_its_step_only(executable):
    b = GraphBuilder("workspace")
    x = b.input(tensor_type("f32", (4, 64)), "x")
    graph = b.build([b.op("exp", b.op("sum", b.op("exp", x), axes=(1,)))])
    plan = executable(graph).memory_plan()
    (scratch,) = [buf for buf in plan.buffers if buf.request.label.startswith("scratch")]
    assert scratch.request.first == scratch.request.last == 1
    assert scratch.request.nbytes == 4 * 8  # one float64 accumulator per output
    assert_valid(plan)


def test_regions_have_their_own_plans(executable):
    types = (X,)
    then_region = region("then", types, lambda b, v: (b.op("sin", b.op("exp", v[0])),))
    else_region = region("else", types, lambda b, v: (b.op("neg", v[0]),))
    b = GraphBuilder("branches")
    p, x = b.input(tensor_type("bool", ())), b.input(X)
    graph = b.build(list(b.op("If", p, x, regions=(then_region, else_region))))
    plan = executable(graph).memory_plan()
    assert [r.name for r in plan.regions] == ["then", "else"]
    assert plan.regions[0].arena_bytes == X.nbytes  # exp's result; sin writes the output
    assert "memory plan of @then" in str(plan)
