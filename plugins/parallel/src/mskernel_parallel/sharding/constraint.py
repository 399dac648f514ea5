"""``parallel.sharding_constraint``: a strategy recorded on the traced graph.

The op is the identity on its operand; its attributes say how the value must be laid out
over the ranks — either a :class:`~.layout.TensorLayout` (``mesh_shape``, ``mesh_names``,
``spec``) or MindSpore's tuple strategy (``splits``: how many blocks per dimension, mapped
onto the mesh together with the other operands of the op that consumes it).  The sharding
pass reads these nodes and drops them; any other pipeline drops them as identities
(the ``"identity"`` trait), so a sharded function runs unchanged on one process.

:func:`shard` is ``mskernel.shard`` and ``Cell.shard``: it records the strategies of a
function's (or cell's) inputs and outputs, and of named parameters, without changing the
function.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, Callable, Optional, Sequence, Union

from mskernel_sdk import Attr, HostKernel, InferError, OpDef, Tensor, apply, require_tensor

from ..errors import ShardingError
from .layout import Mesh, TensorLayout, parse_spec

CONSTRAINT = "parallel.sharding_constraint"
Strategy = Union[TensorLayout, Sequence[int], None]


def _infer(x: Any, *, mesh_shape: tuple[int, ...], mesh_names: str, spec: str,
           splits: tuple[int, ...]) -> Any:
    x = require_tensor(x)
    layout = constraint_layout(mesh_shape, mesh_names, spec)
    try:
        if layout is not None:
            layout.check(x.shape, "constrained tensor")
        elif len(splits) != x.rank or any(k < 1 or n % k for n, k in zip(x.shape, splits)):
            raise ShardingError(f"strategy {list(splits)} does not fit shape {list(x.shape)}: "
                                "one block count per dimension, each dividing it")
    except ShardingError as exc:
        raise InferError(str(exc)) from None
    return x


def _identity(x: Any, **attrs: Any) -> Any:
    return x


OP = OpDef(CONSTRAINT, ("x",), _infer, _identity,
           attrs=(Attr("mesh_shape", "ints", ()), Attr("mesh_names", "str", ""),
                  Attr("spec", "str", ""), Attr("splits", "ints", ())),
           traits=frozenset({"identity"}), owner="mskernel-parallel",
           doc="x, laid out as the strategy says (read by the sharding pass)")


def constraint_layout(mesh_shape: Sequence[int], mesh_names: str,
                      spec: str) -> Optional[TensorLayout]:
    """The layout a constraint node's attributes give (``None`` for a tuple strategy)."""
    if not mesh_shape:
        return None
    return parse_spec(Mesh(tuple(mesh_shape), tuple(mesh_names.split(","))), spec)


def _vjp(primals: Any, outputs: Any, cotangents: Any, **attrs: Any) -> Any:
    return (cotangents[0],)


def _jvp(primals: Any, tangents: Any, outputs: Any, **attrs: Any) -> Any:
    return (tangents[0],)


RULES = [("vjp", CONSTRAINT, _vjp), ("jvp", CONSTRAINT, _jvp)]
#: eagerly, on one process, the constraint is the identity on any backend's host arrays
HOST_KERNELS = {CONSTRAINT: HostKernel(_identity)}


def with_sharding_constraint(x: Any, strategy: Strategy) -> Any:
    """``x`` with ``strategy`` recorded on it (``None``: unconstrained)."""
    if strategy is None or not isinstance(x, Tensor):
        return x
    if isinstance(strategy, TensorLayout):
        return apply(CONSTRAINT, x, mesh_shape=strategy.mesh.shape,
                     mesh_names=",".join(strategy.mesh.names), spec=strategy.spec())
    splits = tuple(int(k) for k in strategy)
    return apply(CONSTRAINT, x, splits=splits)


def _each(values: Sequence[Any], strategies: Optional[Sequence[Strategy]], what: str) -> list:
    if strategies is None:
        return list(values)
    if len(strategies) != len(values):
        raise ShardingError(f"{what}: {len(strategies)} strategies for {len(values)} values")
    return [with_sharding_constraint(v, s) for v, s in zip(values, strategies)]


#: Parameter -> its strategy (``parameter_plan`` of :func:`shard`), read by the pass.
PARAMETER_PLAN: "weakref.WeakKeyDictionary[Any, Strategy]" = weakref.WeakKeyDictionary()


def shard(fn: Callable[..., Any], in_strategy: Optional[Sequence[Strategy]] = None,
          out_strategy: Optional[Sequence[Strategy]] = None,
          parameter_plan: Optional[dict[str, Strategy]] = None) -> Callable[..., Any]:
    """Record sharding strategies on ``fn``: one per positional input (``in_strategy``) and
    per output (``out_strategy``), each a :class:`TensorLayout` (``Layout(...)("dp",
    "None")``), a tuple of block counts per dimension (MindSpore's ``(2, 1)``), or ``None``.
    ``parameter_plan`` maps parameter names of a cell to strategies.  The sharding pass
    propagates them to the rest of the graph; run without it, ``fn`` computes as before.

    On a cell (``Cell.shard``), the cell itself is returned, its ``construct`` recording
    the strategies; on a function, a new function."""
    is_cell = hasattr(fn, "construct") and hasattr(fn, "parameters_and_names")
    target = fn.construct if is_cell else fn

    @functools.wraps(target)
    def sharded(*args: Any, **kwargs: Any) -> Any:
        result = target(*_each(args, in_strategy, "in_strategy"), **kwargs)
        if out_strategy is None:
            return result
        many = isinstance(result, tuple)
        outs = _each(list(result) if many else [result], out_strategy, "out_strategy")
        return tuple(outs) if many else outs[0]

    if parameter_plan:
        if not is_cell:
            raise ShardingError("parameter_plan names parameters of a cell; pass a cell")
        params = dict(fn.parameters_and_names())
        for name, strategy in parameter_plan.items():
            if name not in params:
                raise ShardingError(f"parameter_plan: no parameter {name!r}; the cell has "
                                    f"{', '.join(params)}")
            PARAMETER_PLAN[params[name]] = strategy
    if is_cell:
        object.__setattr__(fn, "construct", sharded)
        return fn
    return sharded
