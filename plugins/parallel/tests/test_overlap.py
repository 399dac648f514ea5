"""The overlapped gradient all-reduce in one process (a group of one): in a compiled training
step, each bucket's ``all_reduce_start`` is scheduled as soon as its gradients exist — before
the backward pass of the layers in front of it — and its ``all_reduce_wait`` after every
start, with no copies in the graph to fuse the buckets; the step computes what it computes
without the buckets.  The multi-rank results are
``test_data_parallel.py``'s."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
from mskernel_autodiff.api import value_and_grad
from mskernel_sdk import compile_graph

import mskernel
from mskernel import nn
from mskernel_parallel import ops
from mskernel_parallel.data_parallel import GradientBuckets

SIZES = (64, 48, 32, 10)


class BucketedGradients(nn.Cell):
    """The loss and the gradients of ``network``'s weights, reduced by ``buckets``."""

    def __init__(self, network: nn.Cell, buckets: GradientBuckets | None) -> None:
        super().__init__()
        self.network = network
        self.weights = network.trainable_params()
        self.buckets = buckets

    def construct(self, x, y):  # type: ignore[no-untyped-def]
        loss, grads = value_and_grad(self.network, None, weights=self.weights)(x, y)
        return loss, *(grads if self.buckets is None else self.buckets.reduce(grads))


def network() -> nn.Cell:
    mskernel.random.set_seed(3)
    layers = []
    for fan_in, fan_out in pairwise(SIZES):
        layers += [nn.Dense(fan_in, fan_out), nn.ReLU()]
    return nn.WithLossCell(nn.SequentialCell(layers[:-1]), nn.CrossEntropyLoss())


def batch() -> tuple[mskernel.Tensor, mskernel.Tensor]:
    rng = np.random.default_rng(0)
    return (mskernel.Tensor(rng.normal(size=(16, SIZES[0])).astype(np.float32)),
            mskernel.Tensor(rng.integers(0, SIZES[-1], 16).astype(np.int32)))


def one_bucket_per_layer() -> GradientBuckets:
    """Buckets that close after each layer's weight and bias (MindSpore's split indices)."""
    return GradientBuckets(mean=True, split_indices=range(2, 2 * (len(SIZES) - 1), 2))


def schedule(step: nn.Cell) -> tuple[list, dict]:
    """The nodes of the compiled step in the order the cpu backend and the host kernels run
    them, and each value's producing node."""
    graph = mskernel.jit(step).lower(*batch()).optimized_graph
    plan = compile_graph(graph, backends=["cpu"]).plan
    order = [plan.graph.nodes[i] for segment in plan.segments for i in segment.node_indices]
    return order, {v: n for n in order for v in n.outputs}


def test_each_start_precedes_the_backward_of_the_layers_in_front():
    buckets = one_bucket_per_layer()
    order, producer = schedule(BucketedGradients(network(), buckets))
    position = {n: i for i, n in enumerate(order)}
    starts = [n for n in order if n.op == ops.ALL_REDUCE_START]
    waits = [n for n in order if n.op == ops.ALL_REDUCE_WAIT]
    assert [n.attrs["key"] for n in starts] == [0, 1, 2]  # the last layer's bucket first
    assert len(waits) == 3 and position[starts[-1]] < min(position[w] for w in waits)
    # the buckets are fused on the communication thread, not by copies in the step's graph
    assert not [n.op for n in order if n.op in ("concat", "split")]
    for k, start in enumerate(starts[:-1]):
        # the gradients of every bucket behind k (the layers in front) are computed after
        # start k
        for later in starts[k + 1:]:
            for gradient in later.inputs[:-1]:
                assert position[start] < position[producer[gradient]], (
                    f"bucket {k}'s all-reduce starts after a gradient of bucket "
                    f"{later.attrs['key']}")


def test_bucketed_step_computes_the_plain_gradients():
    plain = mskernel.jit(BucketedGradients(network(), None))(*batch())
    for buckets in (one_bucket_per_layer(), GradientBuckets(bucket_mb=25.0),
                    GradientBuckets(bucket_mb=0.004)):
        reduced = mskernel.jit(BucketedGradients(network(), buckets))(*batch())
        assert len(reduced) == len(plain)
        for got, want in zip(reduced, plain):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
