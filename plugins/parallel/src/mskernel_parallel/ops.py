"""The collective ops: ``parallel.all_reduce``, ``parallel.all_gather``,
``parallel.reduce_scatter``, ``parallel.broadcast``, ``parallel.all_to_all``,
``parallel.send``, ``parallel.recv`` and ``parallel.barrier``.

Every one is effectful: it takes the state ``!token`` last and returns the next token last, so
the order of collectives is a data dependency in the IR — no pass reorders two of them (which
could deadlock ranks that reordered differently) or drops one whose result is unused (the
other ranks would wait for it).  Through the frontend (:func:`mskernel_sdk.apply`) they take
their tensors alone and the trace supplies the token.

Attributes.  ``group`` names the process group (``"world"`` or one made by
``create_group``) and ``group_size`` is its number of ranks: the output shapes of
``all_gather``, ``reduce_scatter`` and ``all_to_all`` depend on it, so a graph states it and
says what it computes without asking the running process.  Running a node on a group of
another size is an error.

Semantics (``n`` = ``group_size``, ``x_r`` = rank ``r``'s operand):

- ``all_reduce(x; reduction)``: the ``reduction`` (sum, mean, max, min, prod) of
  ``x_0 … x_{n-1}``, elementwise, on every rank (sum, prod: numeric; mean: floating or
  complex; max, min: real or bool);
- ``all_gather(x)``: ``concat(x_0, …, x_{n-1})`` along axis 0 (rank ≥ 1);
- ``reduce_scatter(x; reduction)``: the reduction, split along axis 0 into ``n`` blocks (axis 0
  divisible by ``n``); rank ``i`` gets block ``i``;
- ``broadcast(x; root)``: ``x_root`` on every rank;
- ``all_to_all(x; split_axis, concat_axis)``: ``x`` split along ``split_axis`` into ``n``
  blocks, block ``j`` to rank ``j``; the received blocks in rank order concatenated along
  ``concat_axis`` (MindSpore's ``AlltoAll``);
- ``send(x; dest, tag) -> !token`` and ``recv(; src, tag, shape, dtype) -> T``: a tensor from
  one rank to another, matched by ``tag``;
- ``barrier()``: every rank of the group has reached it;
- ``all_reduce_start(x_1 … x_k; reduction, key) -> !token`` and ``all_reduce_wait(x_1 … x_k;
  reduction, key) -> y_1 … y_k``: ``all_reduce`` of several tensors of one dtype (a gradient
  bucket) in two halves — the start hands them to the group's communication thread, which
  fuses them into one buffer and all-reduces it, and returns at once; the wait (given the
  same operands, which keeps their buffers alive and unchanged meanwhile) returns each
  one's reduction.  ``key`` pairs them.  The start has the trait ``schedule_early``: the
  partitioner runs it as soon as its operands exist, so the backend computes what follows
  while the all-reduce runs (the overlapped gradient all-reduce of data parallel,
  :mod:`.data_parallel`).

The reference semantics are the collectives themselves (:mod:`.group`): in a group of one,
each is its one rank's case (``all_reduce`` returns its operand, ...), which is what a single
process computes; across several processes the same functions run over MPI.  They are also the
ops' host kernels, so a node runs beside any backend (the cpu backend hands over its host
arrays), never as a fallback.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from mskernel_sdk import (
    SCHEDULE_EARLY, TOKEN_VALUE, Attr, HostKernel, InferError, OpDef, TensorType, TokenType, require_kind,
    require_tensor,
)

from . import groups
from .errors import CommunicationError
from .group import REDUCTIONS, ProcessGroup

ALL_REDUCE = "parallel.all_reduce"
ALL_GATHER = "parallel.all_gather"
REDUCE_SCATTER = "parallel.reduce_scatter"
BROADCAST = "parallel.broadcast"
ALL_TO_ALL = "parallel.all_to_all"
SEND = "parallel.send"
RECV = "parallel.recv"
BARRIER = "parallel.barrier"
ALL_REDUCE_START = "parallel.all_reduce_start"
ALL_REDUCE_WAIT = "parallel.all_reduce_wait"

TOKEN = TokenType()
_GROUP = (Attr("group", "str", groups.WORLD), Attr("group_size", "int"))
#: dtype families by reduction (kind letters, as mskernel_sdk.require_kind takes them)
_REDUCIBLE = {"sum": "iufc", "prod": "iufc", "mean": "fc", "max": "biuf", "min": "biuf"}


def _token(t: Any) -> None:
    if not isinstance(t, TokenType):
        raise InferError(f"the last operand must be the state !token, got {t}")


def _group_size(group_size: int) -> None:
    if group_size < 1:
        raise InferError(f"group_size must be at least 1, got {group_size}")


def _reduction(x: TensorType, reduction: str) -> None:
    if reduction not in REDUCTIONS:
        raise InferError(f"reduction must be one of {', '.join(REDUCTIONS)}, got {reduction!r}")
    require_kind(x, _REDUCIBLE[reduction], f"a {reduction}-reducible")


def _axis(x: TensorType, axis: int, what: str) -> int:
    if not -x.rank <= axis < x.rank:
        raise InferError(f"{what} {axis} is out of range for rank {x.rank}")
    return axis % x.rank


def _divisible(x: TensorType, axis: int, n: int, what: str) -> None:
    if x.shape[axis] % n:
        raise InferError(f"{what}: dimension {axis} of {x} ({x.shape[axis]}) is not divisible "
                         f"by the group size {n}")


def _all_reduce_infer(x: Any, token: Any, *, group: str, group_size: int, reduction: str) -> Any:
    x = require_tensor(x)
    _token(token), _group_size(group_size), _reduction(x, reduction)
    return x, TOKEN


def _all_gather_infer(x: Any, token: Any, *, group: str, group_size: int) -> Any:
    x = require_tensor(x)
    _token(token), _group_size(group_size)
    if x.rank == 0:
        raise InferError(f"needs a tensor of rank >= 1 (gathered along axis 0), got {x}")
    return x.with_shape((x.shape[0] * group_size, *x.shape[1:])), TOKEN


def _reduce_scatter_infer(x: Any, token: Any, *, group: str, group_size: int,
                          reduction: str) -> Any:
    x = require_tensor(x)
    _token(token), _group_size(group_size), _reduction(x, reduction)
    if x.rank == 0:
        raise InferError(f"needs a tensor of rank >= 1 (scattered along axis 0), got {x}")
    _divisible(x, 0, group_size, "reduce_scatter")
    return x.with_shape((x.shape[0] // group_size, *x.shape[1:])), TOKEN


def _broadcast_infer(x: Any, token: Any, *, group: str, group_size: int, root: int) -> Any:
    x = require_tensor(x)
    _token(token), _group_size(group_size)
    if not 0 <= root < group_size:
        raise InferError(f"root {root} is not a rank of a group of {group_size}")
    return x, TOKEN


def _all_to_all_infer(x: Any, token: Any, *, group: str, group_size: int, split_axis: int,
                      concat_axis: int) -> Any:
    x = require_tensor(x)
    _token(token), _group_size(group_size)
    split, concat = _axis(x, split_axis, "split_axis"), _axis(x, concat_axis, "concat_axis")
    _divisible(x, split, group_size, "all_to_all")
    shape = list(x.shape)
    shape[split] //= group_size
    shape[concat] *= group_size
    return x.with_shape(tuple(shape)), TOKEN


def _send_infer(x: Any, token: Any, *, group: str, group_size: int, dest: int, tag: int) -> Any:
    require_tensor(x)
    _token(token), _group_size(group_size)
    if not 0 <= dest < group_size:
        raise InferError(f"dest {dest} is not a rank of a group of {group_size}")
    return TOKEN


def _recv_infer(token: Any, *, group: str, group_size: int, src: int, tag: int,
                shape: tuple[int, ...], dtype: Any) -> Any:
    _token(token), _group_size(group_size)
    if not 0 <= src < group_size:
        raise InferError(f"src {src} is not a rank of a group of {group_size}")
    if any(d < 0 for d in shape):
        raise InferError(f"shape {list(shape)} has a negative dimension")
    return TensorType(dtype, tuple(shape)), TOKEN


def _bucket(operands: tuple[Any, ...], reduction: str) -> list[TensorType]:
    """The tensors of a bucket (the operands before the token), of one reducible dtype."""
    if not operands:
        raise InferError("needs the bucket's tensors and the state !token")
    *xs, token = operands
    _token(token)
    if not xs:
        raise InferError("needs at least one tensor before the state !token")
    bucket = [require_tensor(x) for x in xs]
    if len({x.dtype for x in bucket}) > 1:
        raise InferError(f"a bucket holds one dtype, got {', '.join(str(x) for x in bucket)}")
    _reduction(bucket[0], reduction)
    return bucket


def _all_reduce_start_infer(*operands: Any, group: str, group_size: int, reduction: str,
                            key: int) -> Any:
    _group_size(group_size), _bucket(operands, reduction)
    return TOKEN


def _all_reduce_wait_infer(*operands: Any, group: str, group_size: int, reduction: str,
                           key: int) -> Any:
    _group_size(group_size)
    return (*_bucket(operands, reduction), TOKEN)


def _barrier_infer(token: Any, *, group: str, group_size: int) -> Any:
    _token(token), _group_size(group_size)
    return TOKEN


def _group(name: str, size: int, op: str) -> ProcessGroup:
    g = groups.get_group(name)
    if g.size != size:
        raise CommunicationError(
            f"op '{op}' was built for a group '{name}' of {size} rank(s); here it has "
            f"{g.size}: rebuild the graph in this run")
    return g


def _tensor_kernel(op: str, run: Callable[..., np.ndarray]) -> Callable[..., Any]:
    def kernel(x: np.ndarray, token: Any, *, group: str, group_size: int, **attrs: Any) -> Any:
        return run(_group(group, group_size, op), x, **attrs), TOKEN_VALUE
    kernel.__name__ = op.split(".")[1]
    return kernel


def _send(x: np.ndarray, token: Any, *, group: str, group_size: int, dest: int,
          tag: int) -> Any:
    _group(group, group_size, SEND).send(x, dest, tag)
    return TOKEN_VALUE


def _recv(token: Any, *, group: str, group_size: int, src: int, tag: int,
          shape: tuple[int, ...], dtype: Any) -> Any:
    return _group(group, group_size, RECV).recv(shape, dtype.storage, src, tag), TOKEN_VALUE


def _all_reduce_start(*operands: Any, group: str, group_size: int, reduction: str,
                      key: int) -> Any:
    _group(group, group_size, ALL_REDUCE_START).start_all_reduce(operands[:-1], reduction, key)
    return TOKEN_VALUE


def _all_reduce_wait(*operands: Any, group: str, group_size: int, reduction: str,
                     key: int) -> Any:
    return (*_group(group, group_size, ALL_REDUCE_WAIT).finish_all_reduce(key), TOKEN_VALUE)


def _barrier(token: Any, *, group: str, group_size: int) -> Any:
    _group(group, group_size, BARRIER).barrier()
    return TOKEN_VALUE


_all_reduce = _tensor_kernel(ALL_REDUCE, lambda g, x, reduction: g.all_reduce(x, reduction))
_all_gather = _tensor_kernel(ALL_GATHER, lambda g, x: g.all_gather(x))
_reduce_scatter = _tensor_kernel(REDUCE_SCATTER, lambda g, x, reduction: g.reduce_scatter(
    x, reduction))
_broadcast = _tensor_kernel(BROADCAST, lambda g, x, root: g.broadcast(x, root))
_all_to_all = _tensor_kernel(ALL_TO_ALL, lambda g, x, split_axis, concat_axis: g.all_to_all(
    x, split_axis, concat_axis))


def _op(name: str, inputs: tuple[str, ...], infer: Callable[..., Any],
        reference: Callable[..., Any], attrs: tuple[Attr, ...], doc: str,
        traits: frozenset[str] = frozenset()) -> OpDef:
    return OpDef(name, inputs, infer, reference, attrs=_GROUP + attrs, effectful=True,
                 traits={"collective", *traits}, doc=doc)


OPS: list[OpDef] = [
    _op(ALL_REDUCE, ("x", "token"), _all_reduce_infer, _all_reduce,
        (Attr("reduction", "str", "sum"),), "the reduction of every rank's x, on every rank"),
    _op(ALL_GATHER, ("x", "token"), _all_gather_infer, _all_gather, (),
        "every rank's x concatenated along axis 0"),
    _op(REDUCE_SCATTER, ("x", "token"), _reduce_scatter_infer, _reduce_scatter,
        (Attr("reduction", "str", "sum"),), "block i (of axis 0) of the reduction, on rank i"),
    _op(BROADCAST, ("x", "token"), _broadcast_infer, _broadcast, (Attr("root", "int", 0),),
        "rank root's x on every rank"),
    _op(ALL_TO_ALL, ("x", "token"), _all_to_all_infer, _all_to_all,
        (Attr("split_axis", "int", 0), Attr("concat_axis", "int", 0)),
        "block j of x to rank j, received blocks concatenated"),
    _op(SEND, ("x", "token"), _send_infer, _send, (Attr("dest", "int"), Attr("tag", "int", 0)),
        "x to rank dest"),
    _op(RECV, ("token",), _recv_infer, _recv,
        (Attr("src", "int"), Attr("tag", "int", 0), Attr("shape", "ints"),
         Attr("dtype", "dtype")), "the tensor rank src sent"),
    _op(BARRIER, ("token",), _barrier_infer, _barrier, (), "wait for every rank of the group"),
    _op(ALL_REDUCE_START, ("*operands",), _all_reduce_start_infer, _all_reduce_start,
        (Attr("reduction", "str", "sum"), Attr("key", "int")),
        "start the all_reduce of the tensors (token last); all_reduce_wait with the same key "
        "returns it", frozenset({SCHEDULE_EARLY})),
    _op(ALL_REDUCE_WAIT, ("*operands",), _all_reduce_wait_infer, _all_reduce_wait,
        (Attr("reduction", "str", "sum"), Attr("key", "int")),
        "the all_reduce of the tensors (token last) started with the same key"),
]

#: Each op's host kernel is its reference semantics: the collective on host arrays.
HOST_KERNELS: dict[str, HostKernel] = {op.name: HostKernel(op.reference) for op in OPS}
