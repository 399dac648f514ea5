"""``mskernel.Parameter``: a named tensor whose value can be replaced — a layer's weight, an
optimizer's slot, a random-number state.

Eagerly a parameter is an ordinary concrete tensor; :meth:`Parameter.assign_value` swaps the
data it holds (tensors themselves stay immutable).  Inside a trace, reading a parameter
becomes ``ref_load`` from a ``!ref`` input of the graph and ``assign_value`` becomes
``ref_store``, both ordered by the trace's state token, so a compiled training step updates
its parameters in place on the device.  Autodiff tracks a parameter by identity, like any
tensor passed in ``weights``.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..errors import MskernelError
from .tensor import Tensor, host_array
from .trace_context import active_trace


class Parameter(Tensor):
    __slots__ = ("name", "requires_grad")

    def __init__(self, data: Any, name: Optional[str] = None, requires_grad: bool = True,
                 dtype: Any = None) -> None:
        if isinstance(data, Tensor) and data.is_traced:
            raise MskernelError("a Parameter needs a concrete initial value, not a traced tensor")
        arr, dt = host_array(data, dtype)
        super().__init__(arr, dt)
        self.name = name
        self.requires_grad = requires_grad

    def assign_value(self, value: Any) -> "Parameter":
        """Replace the parameter's value with ``value`` (same shape; cast to its dtype)."""
        new = value if isinstance(value, Tensor) else Tensor(value, self.dtype)
        if new.shape != self.shape:
            raise MskernelError(
                f"cannot assign a value of shape {new.shape} to parameter "
                f"{self.name or ''} of shape {self.shape}"
            )
        if new.dtype is not self.dtype:
            new = new.astype(self.dtype)
        trace = active_trace()
        if trace is not None:
            trace.assign(self, new)
        elif new.is_traced:
            raise MskernelError("cannot assign a traced tensor to a parameter outside its trace")
        else:
            self._data = new._data if new._data.backend is self._data.backend else (  # type: ignore[union-attr]
                self._data.backend.to_device(new._data.to_host(), self.type))  # type: ignore[union-attr]
        return self

    set_data = assign_value

    def __repr__(self) -> str:
        return f"Parameter(name={self.name!r}, shape={self.shape}, dtype={self.dtype})"


class ParameterTuple(tuple):  # type: ignore[type-arg]
    """A tuple of :class:`Parameter` s (MindSpore's ``ParameterTuple``): what optimizers and
    ``GradOperation(get_by_list=True)`` take."""

    def __new__(cls, iterable: Any = ()) -> "ParameterTuple":
        items = tuple(iterable)
        for i, item in enumerate(items):
            if not isinstance(item, Parameter):
                raise TypeError(f"ParameterTuple: item {i} is a {type(item).__name__}, not a "
                                "Parameter")
        return super().__new__(cls, items)

    def clone(self, prefix: str, init: Any = "same") -> "ParameterTuple":
        """New parameters named ``<prefix>.<name>``, of the same shapes and dtypes: copies
        (``init="same"``), zeros, ones, or what an initializer ``init(shape, dtype)`` gives."""
        if isinstance(init, str) and init not in _FILLS:
            raise ValueError(f"ParameterTuple.clone: init {init!r} is not one of "
                             f"{', '.join(map(repr, _FILLS))}; pass an initializer "
                             "(mskernel.common.initializer) for anything else")
        return ParameterTuple(Parameter(_initial_value(p, init), f"{prefix}.{p.name}",
                                        p.requires_grad, p.dtype) for p in self)


#: ``clone``'s named initial values: the parameter's own, or a constant
_FILLS = {"same": None, "zeros": 0, "ones": 1}


def _initial_value(p: Parameter, init: Any) -> Any:
    if isinstance(init, str):
        fill = _FILLS[init]
        return p.numpy() if fill is None else np.full(p.shape, fill, p.dtype.storage)
    return Tensor(shape=p.shape, dtype=p.dtype, init=init)
