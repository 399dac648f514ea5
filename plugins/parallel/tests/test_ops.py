"""The collective ops in one process — a group of one — through the samples this plugin
attaches under the SDK's ``samples`` rule: the reference semantics are each op's one-rank case,
the host kernel beside the cpu backend and eager application agree with them, and bad
attributes and wrong group sizes are errors naming the op."""

from __future__ import annotations

import numpy as np
import pytest
from mskernel_sdk import (
    TOKEN_VALUE, GraphBuilder, MskernelError, OpSample, Tensor, apply, as_storage, assert_close,
    compile_graph, dtype, run_reference, sample_graph, samples_for, tensor_type,
)

from mskernel_parallel import ops
from mskernel_parallel.errors import CollectiveMismatchError, CommunicationError

SAMPLED = [ops.ALL_REDUCE, ops.ALL_GATHER, ops.REDUCE_SCATTER, ops.BROADCAST, ops.ALL_TO_ALL,
           ops.BARRIER]


def one_rank(sample: OpSample) -> list[np.ndarray]:
    """What each op computes in a group of one, written out: the operand itself."""
    if sample.op == ops.BARRIER:
        return []
    return [sample.args[0]]


def _result_type(sample: OpSample) -> str:
    return sample.dtypes[0] if sample.dtypes and sample.dtypes[0] else np.asarray(
        sample.args[0]).dtype.name


@pytest.mark.parametrize("op", SAMPLED)
def test_reference_is_the_one_rank_case(op):
    samples = samples_for(op, seed=1)
    assert samples, f"{op} has no samples"
    for sample in samples:
        graph = sample_graph(sample)
        *outputs, token = run_reference(graph, list(sample.args))
        assert token is TOKEN_VALUE
        for got, want in zip(outputs, one_rank(sample), strict=True):
            dt = dtype(_result_type(sample))
            assert_close(got, as_storage(want, dt), dt, what=str(sample))


@pytest.mark.parametrize("op", SAMPLED)
def test_host_kernel_beside_the_cpu_backend(op):
    for sample in samples_for(op, seed=2):
        graph = sample_graph(sample)
        compiled = compile_graph(graph, backends=["cpu"])
        assert not compiled.plan.fallbacks, compiled.explain()
        placed = [p for p in compiled.plan.placements if p.node.op == op]
        assert placed and all(p.host_kernel == "mskernel-parallel" for p in placed)
        *outputs, _ = compiled(*sample.args)
        for got, want in zip(outputs, run_reference(graph, list(sample.args))[:-1], strict=True):
            dt = dtype(_result_type(sample))
            assert_close(got, want, dt, what=str(sample))


def test_eager_application_leaves_the_token_to_the_frontend(rng):
    x = rng.normal(size=(4, 3)).astype(np.float32)
    y = apply(ops.ALL_REDUCE, Tensor(x), group="world", group_size=1, reduction="mean")
    np.testing.assert_array_equal(y.numpy(), x)
    assert apply(ops.BARRIER, group="world", group_size=1) == ()


def test_send_and_recv_in_a_group_of_one(rng):
    from mskernel import communication as comm

    x = rng.normal(size=(2, 3)).astype(np.float32)
    comm.send(x, 0, tag=11)
    comm.send(2 * x, 0, tag=11)
    np.testing.assert_array_equal(comm.recv(x, 0, tag=11).numpy(), x)  # oldest first
    np.testing.assert_array_equal(comm.recv(x, 0, tag=11).numpy(), 2 * x)
    with pytest.raises(CommunicationError, match="nothing was sent with this tag"):
        comm.recv(x, 0, tag=11)
    comm.send(x, 0, tag=12)
    with pytest.raises(CollectiveMismatchError, match=r"float32\[2, 3\]"):
        comm.recv(np.zeros((3, 3), np.float32), 0, tag=12)
    with pytest.raises(MskernelError, match="dest 1 is not a rank of a group of 1"):
        comm.send(x, 1)


def test_statistics_count_the_operands(rng):
    from mskernel import communication as comm

    before = comm.statistics()
    x = rng.normal(size=(5, 3)).astype(np.float32)
    comm.all_reduce(x)
    comm.all_gather(x.astype(np.float64))
    comm.barrier()
    comm.send(x, 0, tag=13)
    comm.recv(x, 0, tag=13)
    after = comm.statistics()
    assert after["collectives"] - before["collectives"] == 3
    assert after["payload_bytes"] - before["payload_bytes"] == 60 + 120 + 60
    assert after["check_bytes"] == before["check_bytes"] == 0  # one rank agrees with itself


def _graph(op, x_type, **attrs):
    b = GraphBuilder("g")
    x, token = b.input(tensor_type(*x_type)), b.input(ops.TOKEN)
    out = b.op(op, x, token, **attrs)
    return b.build(list(out))


@pytest.mark.parametrize("op, x_type, attrs, message", [
    (ops.ALL_REDUCE, ("i32", (4,)), {"reduction": "mean"}, "mean-reducible"),
    (ops.ALL_REDUCE, ("f32", (4,)), {"reduction": "avg"}, "reduction must be one of"),
    (ops.ALL_REDUCE, ("c64", (4,)), {"reduction": "max"}, "max-reducible"),
    (ops.REDUCE_SCATTER, ("f32", (5, 2)), {}, r"\(5\) is not divisible by the group size 2"),
    (ops.ALL_GATHER, ("f32", ()), {}, "rank >= 1"),
    (ops.ALL_TO_ALL, ("f32", (4, 3)), {"split_axis": 1}, r"\(3\) is not divisible"),
    (ops.BROADCAST, ("f32", (4,)), {"root": 2}, "root 2 is not a rank of a group of 2"),
])
def test_shape_and_dtype_rules_name_the_op(op, x_type, attrs, message):
    with pytest.raises(MskernelError, match=message) as info:
        _graph(op, x_type, group="world", group_size=2, **attrs)
    assert f"'{op}'" in str(info.value)


def test_a_graph_for_another_group_size_refuses_to_run():
    graph = _graph(ops.ALL_GATHER, ("f32", (2,)), group="world", group_size=4)
    assert graph.outputs[0].type == tensor_type("f32", (8,))
    with pytest.raises(CommunicationError, match="built for a group 'world' of 4 rank"):
        run_reference(graph, [np.zeros(2, np.float32), TOKEN_VALUE])


def test_unknown_group_is_named():
    from mskernel import communication as comm

    with pytest.raises(CommunicationError, match="no process group 'nope'; known: world"):
        comm.all_reduce(np.ones(2, np.float32), group="nope")
