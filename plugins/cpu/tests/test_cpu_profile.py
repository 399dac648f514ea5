"""The plan profiler: every step timed in C++ while profiling is on, untimed otherwise; the
per-step and per-op table; ``mskernel_cpu.profile`` on a jitted function."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel
import mskernel_cpu
from mskernel import nn
from mskernel_sdk import GraphBuilder, tensor_type

F32 = tensor_type("f32", (16, 32))


def chain_graph():
    b = GraphBuilder("chain")
    x, w = b.input(F32, "x"), b.input(tensor_type("f32", (32, 8)), "w")
    y = b.op("exp", b.op("add", x, x))
    graph = b.build([b.op("matmul", y, w), y])
    return graph


def device_args(cpu, graph):
    rng = np.random.default_rng(0)
    return [cpu.to_device(rng.standard_normal(v.type.shape).astype(np.float32), v.type)
            for v in graph.inputs]


def test_executable_profile_times_every_step(cpu, executable):
    graph = chain_graph()
    compiled = executable(graph)
    report = compiled.profile(device_args(cpu, graph), repeats=4)
    assert report.runs == 4
    assert len(report.steps) == compiled.plan.num_steps
    assert [s.index for s in report.steps] == list(range(compiled.plan.num_steps))
    assert [s.op for s in report.steps[:3]] == ["add", "exp", "matmul"]
    assert report.steps[2].shape == "f32[16,8]"
    for step in report.steps:
        assert step.seconds >= 0 and step.calls == 4 and step.plan == "chain"
    assert report.total_seconds == pytest.approx(sum(s.seconds for s in report.steps))
    by_op = {op: n for op, _, n in report.by_op()}
    assert by_op["add"] == by_op["exp"] == by_op["matmul"] == 1
    table = str(report)
    assert "ms per run over 4 runs" in table
    for op in ("add", "exp", "matmul"):
        assert f"{op} (1)" in table
    assert len(report.table(top=1).splitlines()) == 2 + 1 + 1 + 1


def test_profiling_is_off_outside_profile(cpu, executable):
    graph = chain_graph()
    compiled = executable(graph)
    args = device_args(cpu, graph)
    first = compiled.profile(args, repeats=2)
    assert not compiled.plan.profiling
    compiled.run(args)  # untimed: the counters stay as the profile left them
    assert [calls for _, _, calls in compiled.plan.step_times()] == [2] * len(first.steps)
    again = compiled.profile(args, repeats=1)  # turning profiling on clears them
    assert all(s.calls == 1 for s in again.steps)
    with pytest.raises(ValueError, match="repeats must be at least 1"):
        compiled.profile(args, repeats=0)


def test_profile_of_a_jitted_training_step():
    mskernel.random.set_seed(0)
    net = nn.Dense(12, 4)
    cell = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                               nn.Momentum(net.trainable_params(), 0.1, 0.9)).set_train(True)
    rng = np.random.default_rng(1)
    x = mskernel.Tensor(rng.standard_normal((5, 12)).astype(np.float32))
    y = mskernel.Tensor(rng.standard_normal((5, 4)).astype(np.float32))
    report = mskernel_cpu.profile(mskernel.jit(cell), x, y, repeats=3)
    ops = {s.op for s in report.steps}
    assert {"ref_load", "ref_store"} <= ops
    assert all(s.calls == 3 and s.seconds >= 0 for s in report.steps)
    assert "ref_store" in report.table()
