"""``mskernel.Tensor``: an immutable n-d array on a backend, or a symbolic value while a
function is being traced by ``@jit`` or a control-flow op.

A tensor is *concrete* (it holds a :class:`~mskernel.runtime.DeviceArray`) or *traced* (it
holds an IR :class:`~mskernel.ir.Value` of a :class:`~mskernel.frontend.trace.Trace`).  User
code does not see the difference except where a concrete value is needed — ``bool(t)``,
``t.numpy()``, ``float(t)`` — which a traced tensor refuses with an error pointing at the
user's line.

This module holds the data: storage, type and the conversions to Python and NumPy values.
Operators and methods (``x + y``, ``x.sum()``, ``x[i]``, ``x.at[i].set(v)`` ...) are the
functional ops', installed on the class by :mod:`mskernel.frontend.functional.methods` when
the frontend is imported (as JAX attaches its array methods), so the tensor type does not
depend on the layer built on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ..errors import MskernelError
from ..ir.dtypes import DType, as_storage, dtype as to_dtype, float32, round_to_bfloat16
from ..ir.graph import Value
from ..ir.source import user_location
from ..ir.types import TensorType
from ..runtime.backend import DeviceArray
from .device import current_device

if TYPE_CHECKING:
    from .functional.methods import TensorMethods as _Methods
    from .trace import Trace
else:
    _Methods = object  # installed at run time; type checkers see them through the base


class TracedValueError(MskernelError, TypeError):
    """A traced tensor was used where a concrete value is needed."""


def host_array(data: Any, dtype: Any = None) -> tuple[np.ndarray, DType]:
    """``data`` (array-like, scalar, nested lists) as a host array in reference storage and
    its dtype: the given ``dtype``, else NumPy's for arrays, else the framework defaults
    (Python float → float32, int → int64, bool → bool, complex → complex64)."""
    if isinstance(data, Tensor):
        arr = data.numpy()
        dt = data.dtype if dtype is None else to_dtype(dtype)
        return as_storage(arr, dt), dt
    arr = np.asarray(data)
    if dtype is not None:
        dt = to_dtype(dtype)
    elif isinstance(data, np.ndarray) or isinstance(data, np.generic):
        dt = to_dtype(arr.dtype)
    elif arr.dtype.kind == "f":
        dt = float32
    elif arr.dtype.kind == "c":
        dt = to_dtype("complex64")
    elif arr.dtype.kind in "iu":
        dt = to_dtype("int64") if arr.dtype.kind == "i" else to_dtype(arr.dtype)
    else:
        dt = to_dtype(arr.dtype)
    return as_storage(arr, dt), dt


class Tensor(_Methods):
    """An n-d array.  ``Tensor(data, dtype=None)`` copies ``data`` (a NumPy array, nested
    lists or a scalar) to the current device."""

    __slots__ = ("_data", "_value", "_trace", "_weak", "__weakref__")
    __array_priority__ = 100  # NumPy defers to Tensor's operators

    def __init__(self, data: Any, dtype: Any = None) -> None:
        arr, dt = host_array(data, dtype)
        self._data: Optional[DeviceArray] = current_device().to_device(arr, TensorType(dt, arr.shape))
        self._value: Optional[Value] = None
        self._trace: Optional["Trace"] = None
        self._weak = False

    @classmethod
    def _concrete(cls, data: DeviceArray) -> "Tensor":
        t = cls.__new__(cls)
        t._data, t._value, t._trace, t._weak = data, None, None, False
        return t

    @classmethod
    def _traced(cls, value: Value, trace: "Trace") -> "Tensor":
        t = cls.__new__(cls)
        t._data, t._value, t._trace, t._weak = None, value, trace, False
        return t

    def _as_weak(self) -> "Tensor":
        """The same value, *weakly typed*: it promotes like the Python number it stands for
        (a converted loop's index, where eager code has a Python int), as JAX's weak types."""
        t = Tensor.__new__(Tensor)
        t._data, t._value, t._trace, t._weak = self._data, self._value, self._trace, True
        return t

    # -- type information (available in both states) ------------------------------------

    @property
    def type(self) -> TensorType:
        return self._data.type if self._data is not None else self._value.type  # type: ignore[union-attr, return-value]

    @property
    def dtype(self) -> DType:
        return self.type.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def ndim(self) -> int:
        return len(self.type.shape)

    @property
    def size(self) -> int:
        return self.type.size

    @property
    def is_traced(self) -> bool:
        return self._trace is not None

    @property
    def device(self) -> str:
        """The backend holding the data, or ``"traced"`` inside a trace."""
        return self._data.backend.name if self._data is not None else "traced"

    # -- concrete values ------------------------------------------------------------------

    def _need_concrete(self, what: str) -> DeviceArray:
        if self._data is None:
            loc = user_location()
            raise TracedValueError(
                f"{what} needs a concrete value, but this {self.type} tensor is traced "
                f"(inside @jit or a control-flow function){f' at {loc}' if loc else ''}; "
                "a Python `if`/`while` on a tensor is converted in the user code @jit reaches "
                "(the jitted function, the functions it calls, those handed to grad, vjp, cond "
                "…) but not in lambdas, library code or do_not_convert functions — there use "
                "mskernel.ops.cond / while_loop"
            )
        return self._data

    def numpy(self) -> np.ndarray:
        """A host copy (bfloat16 tensors come back as float32 arrays holding bf16 values)."""
        return np.array(self._need_concrete("Tensor.numpy()").to_host(), copy=True)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype)

    def item(self) -> Any:
        if self.size != 1:
            raise ValueError(f"item() needs a tensor with one element, got shape {self.shape}")
        return self._need_concrete("Tensor.item()").to_host().reshape(()).item()

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                f"the truth value of a tensor with {self.size} elements is ambiguous; "
                "use .any() or .all()"
            )
        return bool(self._need_concrete("bool(tensor)").to_host().reshape(()))

    def __float__(self) -> float:
        self._need_concrete("float(tensor)")
        return float(self.item())

    def __int__(self) -> int:
        self._need_concrete("int(tensor)")
        return int(self.item())

    def __index__(self) -> int:
        if not (self.dtype.is_integer or self.dtype.is_bool) or self.size != 1:
            raise TypeError(f"only scalar integer tensors can be used as an index, got {self.type}")
        return int(self.item())

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        if self._data is None:
            return f"Tensor(traced, shape={self.shape}, dtype={self.dtype})"
        formatter = {"float_kind": _bfloat16_text} if self.dtype.name == "bfloat16" else None
        body = np.array2string(self._data.to_host(), separator=", ", prefix="Tensor(",
                               formatter=formatter)  # type: ignore[arg-type]  # numpy's TypedDict
        return f"Tensor({body}, dtype={self.dtype})"

    def __hash__(self) -> int:
        return id(self)

    def __setitem__(self, key: Any, value: Any) -> None:
        raise TypeError(
            "tensors are immutable: x[...] = v cannot change x; write x = x.at[...].set(v), "
            "which returns an updated copy (.add, .multiply, .min and .max also exist)"
        )

    def tolist(self) -> Any:
        """The values as nested Python lists (concrete tensors only)."""
        return self.numpy().tolist()


def _bfloat16_text(v: float) -> str:
    """The shortest decimal that reads back as the same bfloat16 value."""
    if not np.isfinite(v):
        return str(np.float32(v))
    for digits in range(1, 10):
        text = np.format_float_positional(np.float32(v), precision=digits, unique=False,
                                          fractional=False, trim=".")
        if round_to_bfloat16(np.array(float(text), np.float32)) == np.float32(v):
            return text
    return str(np.float32(v))
