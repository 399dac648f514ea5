"""Pipeline parallelism: consecutive stages of a network on consecutive ranks, a batch cut
into micro-batches, Megatron-LM's one-forward-one-backward (1F1B) schedule.

``PipelineSGD(stages, loss_fn, x, y, micro_batches=4, learning_rate=...)``: rank ``s`` runs
``stages[s]`` (a cell or a function of the previous stage's output); the last rank also
applies ``loss_fn(output, y)``.  Stage ``s`` first runs ``S - s - 1`` forwards (warm-up),
then alternates one forward and one backward, then finishes the backwards, so it holds at
most ``S - s`` micro-batches' activations (a GPipe schedule holds all ``M``).  Activations go
forward and cotangents back by ``send``/``recv``; where a stage sends one way while
receiving from the other, both happen at once (``sendrecv``), which cannot deadlock.  Each
stage accumulates its parameters' gradients over the micro-batches (the loss is their mean)
and takes one SGD step: the result equals one process training the whole network on the
whole batch.

:func:`assign_stages` (``PipelineSGD.from_cells``) groups a sequence of cells into stages:
by their ``pipeline_stage`` attributes (MindSpore's), or else into contiguous groups that
minimise the slowest stage's predicted compute (the cost model's, :mod:`.cost`).

``recompute`` (stage indices, or ``True`` for all): those stages keep only each micro-batch's
input between its forward and backward and run the forward again in the backward
(MindSpore's ``recompute``), trading compute for the memory of their activations.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

import numpy as np
from mskernel_sdk import Parameter, Tensor

import mskernel

from .. import groups
from ..errors import ShardingError
from .layout import Mesh
from .cost import cost
from .program import ShardedProgram

_ALONE = Mesh((1,), ("stage",))
#: message tags: micro-batch m's activation has tag m, its cotangent this plus m (MPI
#: guarantees tags up to 32767)
_BACKWARD_TAG = 1 << 14


def _stage_costs(cells: Sequence[Callable[..., Any]], x: np.ndarray) -> list[float]:
    """Each cell's predicted compute time for a training step on ``x`` (the cells applied in
    turn)."""
    costs, h = [], x
    for cell in cells:
        program = ShardedProgram(cell, h, mesh=_ALONE, rank=0)
        costs.append(cost(program.propagation, parameters=len(program.parameters)).compute_s)
        out = program.whole.outputs[0].type
        h = np.zeros(out.shape, out.dtype.storage)
    return costs


def assign_stages(cells: Sequence[Callable[..., Any]], x: Any, stages: int) -> list[list[int]]:
    """The cells of each stage (indices, contiguous): from every cell's ``pipeline_stage``
    when all have one, else the split of the cells' predicted compute on ``x`` whose slowest
    stage is fastest."""
    marks = [getattr(c, "pipeline_stage", None) for c in cells]
    if all(m is not None for m in marks):
        if sorted(set(marks)) != list(range(stages)) or marks != sorted(marks):
            raise ShardingError(f"pipeline_stage of the cells must run 0 to {stages - 1} in "
                                f"order; got {marks}")
        return [[i for i, m in enumerate(marks) if m == s] for s in range(stages)]
    if len(cells) < stages:
        raise ShardingError(f"{len(cells)} cells cannot fill {stages} stages")
    costs = _stage_costs(cells, np.asarray(x))
    n = len(cells)
    prefix = np.concatenate([[0.0], np.cumsum(costs)])
    # best[k][i]: the slowest stage of the best split of cells[:i] into k stages
    best = np.full((stages + 1, n + 1), np.inf)
    cut = np.zeros((stages + 1, n + 1), np.int64)
    best[0][0] = 0.0
    for k in range(1, stages + 1):
        for i in range(k, n + 1):
            for j in range(k - 1, i):
                slowest = max(best[k - 1][j], prefix[i] - prefix[j])
                if slowest < best[k][i]:
                    best[k][i], cut[k][i] = slowest, j
    bounds, i = [], n
    for k in range(stages, 0, -1):
        bounds.append((int(cut[k][i]), i))
        i = int(cut[k][i])
    return [list(range(a, b)) for a, b in reversed(bounds)]


def _chain(cells: Sequence[Callable[..., Any]]) -> Callable[..., Any]:
    def stage(h: Any) -> Any:
        for cell in cells:
            h = cell(h)
        return h
    return stage


class PipelineSGD:
    """See the module doc.  ``step(x, y)`` returns the batch's loss on every rank;
    :meth:`parameters` gives every stage's parameters by name on every rank."""

    def __init__(self, stages: Sequence[Callable[..., Any]], loss_fn: Callable[..., Any],
                 x: Any, y: Any, micro_batches: int, learning_rate: float,
                 recompute: Union[bool, Sequence[int]] = ()) -> None:
        self.world = groups.world()
        self.stage, self.count = self.world.rank, len(stages)
        if self.world.size != self.count:
            raise ShardingError(f"{self.count} stages need {self.count} ranks "
                                f"(mskernel run -n {self.count}); this run has {self.world.size}")
        x, y = np.asarray(x), np.asarray(y)
        if not 1 <= micro_batches < _BACKWARD_TAG:
            raise ShardingError(f"micro_batches must be 1 to {_BACKWARD_TAG - 1}, got "
                                f"{micro_batches}")
        if x.shape[0] % micro_batches:
            raise ShardingError(f"a batch of {x.shape[0]} does not split into {micro_batches} "
                                "micro-batches")
        self.micro, self.learning_rate = micro_batches, learning_rate
        #: the cells of each stage, when made by :meth:`from_cells`
        self.assignment: list[list[int]] = [[s] for s in range(len(stages))]
        chosen = range(len(stages)) if recompute is True else recompute or ()
        self.recompute = self.world.rank in chosen
        #: the most micro-batches whose activations this stage held at once (last step)
        self.peak_held = 0
        size = x.shape[0] // micro_batches
        h: np.ndarray = x[:size]
        self.programs: list[ShardedProgram] = []
        self.shapes: list[tuple[tuple[int, ...], np.dtype]] = []  # each stage's input
        for s, stage in enumerate(stages):
            self.shapes.append((h.shape, h.dtype))
            last = s == self.count - 1
            fn = (lambda a, b, stage=stage: loss_fn(stage(a), b)) if last else stage
            program = ShardedProgram(fn, h, *([y[:size]] if last else []), mesh=_ALONE, rank=0)
            self.programs.append(program)
            out = program.whole.outputs[0].type
            h = np.zeros(out.shape, out.dtype.storage)
        self.program = self.programs[self.stage]
        captured = self.program.parameters
        self._values = [Tensor(t.numpy()) for t in captured]
        self._trained = [i for i, t in enumerate(captured) if isinstance(t, Parameter)]

    @classmethod
    def from_cells(cls, cells: Sequence[Callable[..., Any]], loss_fn: Callable[..., Any], x: Any,
                   y: Any, micro_batches: int, learning_rate: float,
                   recompute: Union[bool, Sequence[int]] = ()) -> "PipelineSGD":
        """A pipeline of one stage per rank over ``cells`` applied in turn, grouped by
        :func:`assign_stages` on a micro-batch of ``x``."""
        count = groups.world().size
        size = np.asarray(x).shape[0] // micro_batches
        groups_of_cells = assign_stages(cells, np.asarray(x)[:size], count)
        stages = [_chain([cells[i] for i in group]) for group in groups_of_cells]
        pipeline = cls(stages, loss_fn, x, y, micro_batches, learning_rate, recompute)
        pipeline.assignment = groups_of_cells
        return pipeline

    # -- communication with the neighbouring stages ---------------------------------------------

    def _recv_forward(self, m: int) -> np.ndarray:
        shape, dtype = self.shapes[self.stage]
        return self.world.recv(shape, dtype, self.stage - 1, tag=m)

    def _recv_backward(self, m: int) -> np.ndarray:
        shape, dtype = self.shapes[self.stage + 1]
        return self.world.recv(shape, dtype, self.stage + 1, tag=_BACKWARD_TAG + m)

    # -- the schedule ---------------------------------------------------------------------------

    def step(self, x: Any, y: Any) -> float:
        x, y = np.asarray(x), np.asarray(y)
        size = x.shape[0] // self.micro
        first, last = self.stage == 0, self.stage == self.count - 1
        pullbacks: dict[int, Any] = {}
        self.peak_held = 0
        losses: list[float] = []
        grads: list[Optional[np.ndarray]] = [None] * len(self._trained)

        def forward(m: int, h: np.ndarray) -> np.ndarray:
            args = [Tensor(h)] + ([Tensor(y[m * size:(m + 1) * size])] if last else [])
            if self.recompute:  # keep the inputs only
                out = self.program(*args, *self._values)
                pullbacks[m] = args
            else:
                out, pullbacks[m] = mskernel.vjp(self.program, *args, *self._values)
                self.peak_held = max(self.peak_held, len(pullbacks))
            if last:
                losses.append(float(out.numpy()))
            return out.numpy()

        def backward(m: int, cotangent: Optional[np.ndarray]) -> np.ndarray:
            seed = np.asarray(1.0 / self.micro, np.float32) if last else cotangent
            pullback = pullbacks.pop(m)
            if self.recompute:
                _, pullback = mskernel.vjp(self.program, *pullback, *self._values)
            got = pullback(Tensor(seed))
            inputs = 2 if last else 1
            for k, i in enumerate(self._trained):
                g = got[inputs + i].numpy()
                grads[k] = g if grads[k] is None else grads[k] + g
            return got[0].numpy()

        def data(m: int) -> np.ndarray:
            return x[m * size:(m + 1) * size]

        warmup = min(self.count - self.stage - 1, self.micro)
        for m in range(warmup):
            out = forward(m, data(m) if first else self._recv_forward(m))
            self.world.send(out, self.stage + 1, tag=m)
        steady = self.micro - warmup
        h = np.empty(0)
        if steady:
            h = data(warmup) if first else self._recv_forward(warmup)
        for j in range(steady):
            m = warmup + j
            out = forward(m, h)
            if last:
                cotangent = None
            else:
                shape, dtype = self.shapes[self.stage + 1]
                cotangent = self.world.sendrecv(out, self.stage + 1, shape, dtype,
                                                self.stage + 1, send_tag=m,
                                                recv_tag=_BACKWARD_TAG + j)
            dx = backward(j, cotangent)
            if j + 1 < steady:
                if first:
                    h = data(m + 1)
                else:
                    shape, dtype = self.shapes[self.stage]
                    h = self.world.sendrecv(dx, self.stage - 1, shape, dtype, self.stage - 1,
                                            send_tag=_BACKWARD_TAG + j, recv_tag=m + 1)
            elif not first:
                self.world.send(dx, self.stage - 1, tag=_BACKWARD_TAG + j)
        for j in range(steady, self.micro):  # cool-down
            dx = backward(j, self._recv_backward(j))
            if not first:
                self.world.send(dx, self.stage - 1, tag=_BACKWARD_TAG + j)
        for k, i in enumerate(self._trained):
            grad = grads[k]
            if grad is not None:
                self._values[i] = Tensor(self._values[i].numpy() - self.learning_rate * grad)
        loss = np.asarray(np.mean(losses) if last else 0.0, np.float64)
        return float(self.world.broadcast(loss, root=self.count - 1))

    def parameters(self) -> dict[str, np.ndarray]:
        """Every stage's trained parameters by name, on every rank."""
        out = {}
        for s, program in enumerate(self.programs):
            for i, p in enumerate(program.parameters):
                if isinstance(p, Parameter):
                    mine = self._values[i].numpy() if s == self.stage else np.empty(
                        p.shape, p.numpy().dtype)
                    out[str(p.name)] = self.world.broadcast(mine, root=s)
        return out
