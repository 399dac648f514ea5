"""MindSpore's spellings of the functional ops, from two tables.

- :data:`KEYWORDS`: a keyword MindSpore's ``ops`` or ``mint`` uses → ours.  Every functional op
  with our parameter (and no parameter of MindSpore's name) takes MindSpore's keyword too:
  ``ops.mean(x, dim=1, keepdim=True)`` and ``ops.mean(input=x, axis=1, keep_dims=True)`` are
  ``ops.mean(x, axis=1, keepdims=True)``.
- :data:`ALIASES`: MindSpore's other name of an op → ours (``ops.cat`` is ``ops.concat``).

:func:`mindspore_names` applies both to the namespace of :mod:`mskernel.frontend.functional`;
the tensor's methods take the keywords too (:mod:`.methods`).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

#: MindSpore / mint keyword → the parameter it names in our functions.
KEYWORDS = {
    "keep_dims": "keepdims", "keepdim": "keepdims", "dim": "axis", "input": "x", "input_x": "x",
    "other": "y", "tensors": "xs", "input_perm": "axes", "multiples": "reps", "dims": "reps",
    "start_dim": "start_axis", "end_dim": "end_axis",
}

#: MindSpore's other name of an op → the name of ours.
ALIASES = {
    "cat": "concat", "reverse": "flip", "range": "arange", "permute": "transpose",
    "reduce_mean": "mean", "reduce_sum": "sum", "reduce_max": "amax", "reduce_min": "amin",
    "reduce_prod": "prod", "select": "where", "clamp": "clip", "clip_by_value": "clip",
    "eq": "equal", "ne": "not_equal", "gt": "greater", "ge": "greater_equal", "lt": "less",
    "le": "less_equal", "floor_div": "floor_divide", "floor_mod": "remainder", "mm": "matmul",
    "bmm": "matmul", "tensor_dot": "tensordot", "unstack": "unbind", "inv": "reciprocal",
}


def accepting_mindspore_keywords(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, taking the :data:`KEYWORDS` that name its parameters (``fn`` itself when none
    does).  Giving both spellings of one parameter is a ``TypeError`` naming the op."""
    params = inspect.signature(fn).parameters
    renames = {ms: ours for ms, ours in KEYWORDS.items() if ours in params and ms not in params}
    if not renames:
        return fn

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for ms in renames.keys() & kwargs.keys():
            ours = renames[ms]
            if ours in kwargs:
                raise TypeError(f"{fn.__name__}() got {ms!r} and {ours!r}, two names of one "
                                "argument")
            kwargs[ours] = kwargs.pop(ms)
        return fn(*args, **kwargs)

    return wrapper


def mindspore_names(namespace: dict[str, Any], names: list[str]) -> list[str]:
    """Rebind the functions ``names`` of ``namespace`` to take MindSpore's keywords and add
    the :data:`ALIASES`; returns the aliases' names."""
    for name in names:
        if inspect.isfunction(namespace[name]):
            namespace[name] = accepting_mindspore_keywords(namespace[name])
    for alias, name in ALIASES.items():
        namespace[alias] = namespace[name]
    return list(ALIASES)
