"""MindSpore's communication primitives (``mskernel.ops.AllReduce`` ...) on N ranks, as
MindSpore's scripts use them: made in a Cell's ``__init__``, called in ``construct``, eagerly
and under ``@jit``, against NumPy computed from every rank's input; the gradients of
``AllReduce`` and ``AllGather`` in a training-style ``value_and_grad`` against their closed
forms; ``NeighborExchange`` around a ring with small and large messages.  Run by
``tests/test_primitives.py`` under ``mskernel run -n N`` (and alone); a failed check raises."""

from __future__ import annotations

import numpy as np
from mskernel_autodiff.api import value_and_grad

import mskernel
from mskernel import communication, nn, ops

communication.init()
RANK, N = communication.get_rank(), communication.get_group_size()


def inputs(rank: int, rows: int = 2 * N, cols: int = 3) -> np.ndarray:
    return np.random.default_rng(10 + rank).uniform(0.5, 2.0, (rows, cols)).astype(np.float32)


XS = [inputs(r) for r in range(N)]
X = mskernel.Tensor(XS[RANK])


def close(actual: object, expected: np.ndarray, what: str) -> None:
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=1e-5, atol=1e-6, err_msg=what)


class Collectives(nn.Cell):
    """One of each primitive, as a MindSpore network holds them."""

    def __init__(self) -> None:
        super().__init__()
        self.all_reduce_sum = ops.AllReduce(ops.ReduceOp.SUM)
        self.all_reduce_max = ops.AllReduce(op=ops.ReduceOp.MAX)
        self.all_gather = ops.AllGather()
        self.reduce_scatter = ops.ReduceScatter(ops.ReduceOp.SUM)
        self.broadcast = ops.Broadcast(N - 1)
        self.all_to_all = ops.AlltoAll(split_count=N, split_dim=0, concat_dim=1)

    def construct(self, x):  # type: ignore[no-untyped-def]
        (root,) = self.broadcast((x,))
        return (self.all_reduce_sum(x), self.all_reduce_max(x), self.all_gather(x),
                self.reduce_scatter(x), root, self.all_to_all(x))


def expected() -> list[np.ndarray]:
    stacked = np.stack(XS)
    blocks = [np.split(x, N, axis=0)[RANK] for x in XS]  # block RANK of every rank
    return [stacked.sum(0), stacked.max(0), np.concatenate(XS, 0),
            np.split(stacked.sum(0), N, axis=0)[RANK], XS[N - 1], np.concatenate(blocks, 1)]


def check_values() -> None:
    net = Collectives()
    names = ["AllReduce sum", "AllReduce max", "AllGather", "ReduceScatter", "Broadcast",
             "AlltoAll"]
    for mode, run in (("eager", net), ("jit", mskernel.jit(net))):
        for got, want, name in zip(run(X), expected(), names, strict=True):
            close(got.numpy(), want, f"{name} ({mode})")


class Loss(nn.Cell):
    """``sum(c * AllGather(x * w)) + sum(AllReduce(x * w))`` for a weight ``w``."""

    def __init__(self) -> None:
        super().__init__()
        self.w = mskernel.Parameter(mskernel.Tensor(np.full((1, 3), 0.5, np.float32)), name="w")
        self.all_gather = ops.AllGather()
        self.all_reduce = ops.AllReduce()

    def construct(self, x, c):  # type: ignore[no-untyped-def]
        y = x * self.w
        return (c * self.all_gather(y)).sum() + self.all_reduce(y).sum()


def check_gradients() -> None:
    """Differentiated as the sum over ranks of each rank's loss (MindSpore's convention): the
    gradient of ``w`` on rank r is ``n * sum(c_r * x_r) + n * sum(x_r)`` over the rows, with
    ``c_r`` rank r's block of the (shared) ``c``."""
    c = np.random.default_rng(3).normal(size=(2 * N * N, 3)).astype(np.float32)
    c_r = np.split(c, N, axis=0)[RANK]
    want = N * (c_r * XS[RANK]).sum(0, keepdims=True) + N * XS[RANK].sum(0, keepdims=True)
    net = Loss()
    step = value_and_grad(net, None, weights=net.trainable_params())
    for mode, run in (("eager", step), ("jit", mskernel.jit(step))):
        _, (grad,) = run(X, mskernel.Tensor(c))
        close(grad.numpy(), want, f"gradient through AllGather and AllReduce ({mode})")


def check_point_to_point() -> None:
    if N == 1:
        return
    right, left = (RANK + 1) % N, (RANK - 1) % N
    for size in (4, 1 << 16):  # an eager message and one MPI sends by rendezvous
        mine = np.full((size,), RANK, np.float32)
        if N == 2:
            exchange = ops.NeighborExchange([right], [left], [(size,)], [(size,)], "float32")
            (got,) = exchange((mskernel.Tensor(mine),))
            close(got.numpy(), np.full((size,), left, np.float32), "NeighborExchange pair")
            continue
        exchange = ops.NeighborExchange(send_rank_ids=[right, left], recv_rank_ids=[left, right],
                                        recv_shapes=[(size,), (size,)],
                                        send_shapes=[(size,), (size,)], recv_type="float32")
        from_left, from_right = exchange((mskernel.Tensor(mine), mskernel.Tensor(mine + 100)))
        close(from_left.numpy(), np.full((size,), left, np.float32), "NeighborExchange left")
        close(from_right.numpy(), np.full((size,), right + 100, np.float32),
              "NeighborExchange right")
    if RANK == 0:
        ops.Send(sr_tag=5, dest_rank=N - 1)(X)
    if RANK == N - 1:
        got = ops.Receive(sr_tag=5, src_rank=0, shape=XS[0].shape, dtype=mskernel.float32)()
        close(got.numpy(), XS[0], "Send/Receive")


check_values()
check_gradients()
check_point_to_point()
print(f"rank {RANK} of {N}: every primitive check passed")
