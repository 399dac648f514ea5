"""MindSpore's communication primitives (``mskernel.ops.AllReduce``, ``AllGather``,
``ReduceScatter``, ``Broadcast``, ``AlltoAll``, ``NeighborExchange``, ``Send``/``Receive``,
``ReduceOp``): on 2 and 4 ranks in a Cell, eager and under ``@jit``, with gradients —
``programs/primitives.py`` — and in one process, with the errors of a bad configuration."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import check_every_rank

import mskernel
from mskernel import ops
from mskernel_parallel import primitives
from mskernel_parallel.errors import CommunicationError
from mskernel_parallel.plugin import PRIMITIVES


@pytest.mark.parametrize("n", [1, 2, 4])
def test_primitives_on_ranks(n):
    check_every_rank("primitives.py", n, "every primitive check passed")


def test_every_primitive_is_in_mskernel_ops():
    assert sorted(PRIMITIVES) == sorted(primitives.__all__)
    for name in PRIMITIVES:
        assert getattr(ops, name) is getattr(primitives, name)
    assert ops.ReduceOp.SUM == "sum" and ops.ReduceOp.PROD == "prod"


@pytest.mark.parametrize("make, message", [
    (lambda: ops.AllReduce("average"), "op must be one of"),
    (lambda: ops.AllReduce(group=3), "group must be a group name"),
    (lambda: ops.AllGather(group="nowhere"), "no process group 'nowhere'"),
    (lambda: ops.Broadcast(root_rank=1), "root_rank 1 is not a rank"),
    (lambda: ops.AlltoAll(split_count=2, split_dim=0, concat_dim=0), "must equal the size"),
    (lambda: ops.NeighborExchange([0], [], [], [(2,)], "float32"), "distinct other ranks"),
    (lambda: ops.NeighborExchange([], [1], [], [], "float32"), "each rank needs one shape"),
])
def test_bad_configurations_are_errors_naming_the_primitive(make, message):
    with pytest.raises(CommunicationError, match=message):
        make()


def test_repr_and_one_rank_values():
    x = mskernel.Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
    assert repr(ops.AllReduce(ops.ReduceOp.MAX)) == "Prim[AllReduce]<group='world', op='max'>"
    for primitive in (ops.AllReduce(), ops.AllGather(), ops.ReduceScatter(ops.ReduceOp.MIN),
                      ops.AlltoAll(1, 1, 0)):
        np.testing.assert_array_equal(primitive(x).numpy(), x.numpy())
    (y,) = ops.Broadcast(0)((x,))
    np.testing.assert_array_equal(y.numpy(), x.numpy())
