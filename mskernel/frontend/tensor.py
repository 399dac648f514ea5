"""``mskernel.Tensor``: an immutable n-d array on a backend, or a symbolic value while a
function is being traced by ``@jit`` or a control-flow op.

A tensor is *concrete* (it holds a :class:`~mskernel.runtime.DeviceArray`) or *traced* (it
holds an IR :class:`~mskernel.ir.Value` of a :class:`~mskernel.frontend.trace.Trace`).  User
code does not see the difference except where a concrete value is needed — ``bool(t)``,
``t.numpy()``, ``float(t)`` — which a traced tensor refuses with an error pointing at the
user's line.

MindSpore's names for the same things are here too: ``asnumpy()``, ``Tensor.from_numpy``
(sharing the array's memory where the device can), ``Tensor(shape=, dtype=, init=)``,
``itemsize``, ``nbytes``, ``strides`` and ``dim()``; ``print(t)`` shows the values as NumPy
(and MindSpore) print them, ``repr(t)`` the values and the dtype.

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
from .trace_context import outside_traces

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


def _initialised(init: Any, shape: Any, dtype: Any) -> np.ndarray:
    """The values ``init(shape, dtype)`` gives (MindSpore's ``Tensor(shape=, dtype=, init=)``),
    computed now, outside any trace."""
    if shape is None:
        raise TypeError("Tensor(init=...) needs the shape of the tensor to initialise")
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if not callable(init):
        raise TypeError(f"Tensor: init must be an initializer (such as "
                        f"mskernel.common.initializer.Normal()), got {init!r}")
    with outside_traces():
        return np.asarray(init(dims, float32 if dtype is None else dtype))


class Tensor(_Methods):
    """An n-d array.  ``Tensor(data, dtype=None)`` copies ``data`` (a NumPy array, nested
    lists or a scalar) to the current device.  ``Tensor(shape=(2, 3), dtype=float32,
    init=Normal())`` fills it from an initializer instead, at once (MindSpore defers that to
    the first use; the values are the same)."""

    __slots__ = ("_data", "_value", "_trace", "_weak", "__weakref__")
    __array_priority__ = 100  # NumPy defers to Tensor's operators

    def __init__(self, input_data: Any = None, dtype: Any = None, shape: Any = None,
                 init: Any = None) -> None:
        if init is not None:
            if input_data is not None:
                raise TypeError("Tensor: give either input_data or init, not both")
            input_data = _initialised(init, shape, dtype)
        elif input_data is None:
            raise TypeError("Tensor needs input_data, or shape and init")
        arr, dt = host_array(input_data, dtype)
        if shape is not None and init is None and tuple(np.shape(arr)) != tuple(
                (shape,) if isinstance(shape, int) else shape):
            raise ValueError(f"Tensor: the data has shape {arr.shape}, not the given {shape}")
        self._data: Optional[DeviceArray] = current_device().to_device(arr, TensorType(dt, arr.shape))
        self._value: Optional[Value] = None
        self._trace: Optional["Trace"] = None
        self._weak = False

    @classmethod
    def from_numpy(cls, array: np.ndarray) -> "Tensor":
        """A tensor of ``array``'s dtype and shape that shares its memory where the device
        can hold the array as it is (the reference backend; the cpu backend when the array
        is C-contiguous and 64-byte aligned), so later writes to ``array`` show in the
        tensor; otherwise a copy.  Mutating a shared array while the tensor is in use (by a
        jitted function that took it as a constant, say) gives undefined results."""
        if not isinstance(array, np.ndarray):
            raise TypeError(f"Tensor.from_numpy takes a NumPy array, got {type(array).__name__}")
        type_ = TensorType(to_dtype(array.dtype), array.shape)
        backend = current_device()
        data = backend.share(array, type_)
        return cls._concrete(data if data is not None else backend.to_device(array, type_))

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
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of all elements."""
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple[int, ...]:
        """Bytes to step along each axis, for the dense row-major layout (MindSpore's)."""
        steps, step = [], self.dtype.itemsize
        for d in reversed(self.shape):
            steps.append(step)
            step *= d
        return tuple(reversed(steps))

    def dim(self) -> int:
        """The number of axes (``ndim``)."""
        return self.ndim

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

    def asnumpy(self) -> np.ndarray:
        """MindSpore's name for :meth:`numpy` (a copy: tensors are immutable)."""
        return np.array(self._need_concrete("Tensor.asnumpy()").to_host(), copy=True)

    def init_data(self) -> "Tensor":
        """The tensor itself: ``Tensor(init=...)`` is initialised at once (MindSpore's
        deferred initialisation ends here)."""
        return self

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
        body = np.array2string(self._data.to_host(), separator=", ", prefix="Tensor(",
                               formatter=self._formatter())  # type: ignore[arg-type]
        return f"Tensor({body}, dtype={self.dtype})"

    def __str__(self) -> str:
        """The values as NumPy prints them (``[1. 2.]``), as ``print(t)`` shows them in
        MindSpore."""
        if self._data is None:
            return repr(self)
        values, formatter = self._data.to_host(), self._formatter()
        if formatter is None:
            return str(values)
        return np.array2string(values, formatter=formatter)  # type: ignore[arg-type]

    def _formatter(self) -> Optional[dict[str, Any]]:
        return {"float_kind": _bfloat16_text} if self.dtype.name == "bfloat16" else None

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


def tensor(input_data: Any = None, dtype: Any = None, shape: Any = None,
           init: Any = None) -> Tensor:
    """``mskernel.tensor(data, dtype)``: MindSpore's function form of :class:`Tensor`."""
    return Tensor(input_data, dtype, shape, init)


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
