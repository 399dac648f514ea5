"""Operators and methods of :class:`~mskernel.frontend.tensor.Tensor`.

Each one delegates to the functional op of the same meaning (:mod:`.functional`, i.e.
``mskernel.ops``), so a method and its function never disagree: ``x.sum(1)`` is
``mskernel.ops.sum(x, 1)`` and ``x + 1`` is ``mskernel.ops.add(x, 1)``.  Binary operators
accept what the functional ops accept (tensors, NumPy arrays, lists, Python and NumPy
scalars) and return ``NotImplemented`` for anything else, so ``x == None`` is ``False`` as
in Python.  Tensors are immutable: ``x[i] = v`` is an error; ``x.at[i].set(v)`` returns the
updated copy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

if TYPE_CHECKING:
    from .indexing import IndexUpdater
    from .tensor import Tensor

_OPERAND_TYPES = (int, float, complex, bool, np.ndarray, np.generic, list, tuple)


def _functional() -> Any:
    from . import functional

    return functional


def _method(name: str) -> Callable[..., Any]:
    """A method calling ``mskernel.ops.<name>(self, *args, **kwargs)``."""

    def method(self: "Tensor", *args: Any, **kwargs: Any) -> Any:
        return getattr(_functional(), name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``mskernel.ops.{name}(self, ...)``."
    return method


def _operator(name: str, reflected: bool = False) -> Callable[[Any, Any], Any]:
    """A binary operator calling ``mskernel.ops.<name>`` (operands swapped if ``reflected``)."""

    resolved: list[Callable[[Any, Any], Any]] = []  # the function, looked up on first use

    def method(self: "Tensor", other: Any) -> Any:
        if not isinstance(other, (TensorMethods, *_OPERAND_TYPES)):
            return NotImplemented
        if not resolved:
            resolved.append(getattr(_functional(), name))
        fn = resolved[0]
        return fn(other, self) if reflected else fn(self, other)

    method.__name__ = method.__qualname__ = name
    operands = "(other, self)" if reflected else "(self, other)"
    method.__doc__ = f"``mskernel.ops.{name}{operands}``."
    return method


def _shape_args(args: tuple[Any, ...]) -> Any:
    """``f(2, 3)`` and ``f((2, 3))`` alike: the varargs as one sequence."""
    return args[0] if len(args) == 1 and not isinstance(args[0], int) else args


class TensorMethods:
    __slots__ = ()

    # -- operators ----------------------------------------------------------------------------

    __add__, __radd__ = _operator("add"), _operator("add", True)
    __sub__, __rsub__ = _operator("subtract"), _operator("subtract", True)
    __mul__, __rmul__ = _operator("multiply"), _operator("multiply", True)
    __truediv__, __rtruediv__ = _operator("true_divide"), _operator("true_divide", True)
    __floordiv__, __rfloordiv__ = _operator("floor_divide"), _operator("floor_divide", True)
    __mod__, __rmod__ = _operator("remainder"), _operator("remainder", True)
    __pow__, __rpow__ = _operator("power"), _operator("power", True)
    __matmul__, __rmatmul__ = _operator("matmul"), _operator("matmul", True)
    __and__, __rand__ = _operator("bitwise_and"), _operator("bitwise_and", True)
    __or__, __ror__ = _operator("bitwise_or"), _operator("bitwise_or", True)
    __xor__, __rxor__ = _operator("bitwise_xor"), _operator("bitwise_xor", True)
    __lshift__, __rlshift__ = _operator("left_shift"), _operator("left_shift", True)
    __rshift__, __rrshift__ = _operator("right_shift"), _operator("right_shift", True)
    __eq__ = _operator("equal")  # type: ignore[assignment]
    __ne__ = _operator("not_equal")  # type: ignore[assignment]
    __lt__, __le__ = _operator("less"), _operator("less_equal")
    __gt__, __ge__ = _operator("greater"), _operator("greater_equal")
    __neg__ = _method("negative")
    __abs__ = _method("abs")
    __invert__ = _method("bitwise_not")
    __round__ = _method("round")

    def __pos__(self) -> "Tensor":
        return self  # type: ignore[return-value]

    # -- indexing -----------------------------------------------------------------------------

    def __getitem__(self, key: Any) -> "Tensor":
        from .indexing import getitem

        return getitem(self, key)  # type: ignore[arg-type]

    def __setitem__(self, key: Any, value: Any) -> None:
        raise TypeError(
            "tensors are immutable: x[...] = v cannot change x; write x = x.at[...].set(v), "
            "which returns an updated copy (.add, .multiply, .min and .max also exist)"
        )

    @property
    def at(self) -> "IndexUpdater":
        """Functional updates: ``x.at[idx].set(v)``, ``.add(v)``, ``.multiply(v)``,
        ``.min(v)``, ``.max(v)`` return new tensors (JAX's ``.at``)."""
        from .indexing import IndexUpdater

        return IndexUpdater(self)  # type: ignore[arg-type]

    def __contains__(self, value: Any) -> bool:
        """``value in x``: some element equals ``value`` (NumPy)."""
        ops = _functional()
        return bool(ops.any(ops.equal(self, value)))

    def __iter__(self) -> Iterator["Tensor"]:
        """The sub-tensors along the first axis (concrete tensors only)."""
        t: Any = self
        if t.is_traced:
            from .tensor import TracedValueError

            raise TracedValueError(
                f"cannot iterate over a traced {t.type} tensor; write the loop in the jitted "
                "function itself (for i in range(n): ... x[i] ...), where it is converted, or "
                "use mskernel.ops.scan / fori_loop"
            )
        if t.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (t[i] for i in range(t.shape[0]))

    # -- shape --------------------------------------------------------------------------------

    def reshape(self, *shape: Any) -> "Tensor":
        """``x.reshape(2, 3)`` or ``x.reshape((2, 3))``; one dimension may be -1."""
        return _functional().reshape(self, _shape_args(shape))

    def transpose(self, *axes: Any) -> "Tensor":
        """``x.transpose()`` reverses the axes; ``x.transpose(1, 0, 2)`` or
        ``x.transpose((1, 0, 2))`` permutes them."""
        return _functional().transpose(self, _shape_args(axes) if axes else None)

    permute = transpose

    @property
    def T(self) -> "Tensor":
        """The tensor with its axes reversed."""
        return _functional().transpose(self)

    @property
    def mT(self) -> "Tensor":
        """The last two axes swapped (a batch of transposed matrices)."""
        return _functional().swapaxes(self, -1, -2)

    @property
    def real(self) -> "Tensor":
        return _functional().real(self)

    @property
    def imag(self) -> "Tensor":
        return _functional().imag(self)

    def tolist(self) -> Any:
        """The values as nested Python lists (concrete tensors only)."""
        return self.numpy().tolist()  # type: ignore[attr-defined]

    flatten = _method("flatten")
    ravel = _method("ravel")
    squeeze = _method("squeeze")
    expand_dims = _method("expand_dims")
    unsqueeze = _method("unsqueeze")
    swapaxes = _method("swapaxes")
    moveaxis = _method("moveaxis")
    broadcast_to = _method("broadcast_to")
    repeat = _method("repeat")
    tile = _method("tile")
    flip = _method("flip")
    roll = _method("roll")
    split = _method("split")
    take = _method("take")
    take_along_axis = _method("take_along_axis")
    tril = _method("tril")
    triu = _method("triu")
    nonzero = _method("nonzero")

    # -- conversion and math ------------------------------------------------------------------

    astype = _method("astype")
    abs = _method("abs")
    sign = _method("sign")
    square = _method("square")
    sqrt = _method("sqrt")
    rsqrt = _method("rsqrt")
    exp = _method("exp")
    log = _method("log")
    sin = _method("sin")
    cos = _method("cos")
    tanh = _method("tanh")
    sigmoid = _method("sigmoid")
    relu = _method("relu")
    softmax = _method("softmax")
    log_softmax = _method("log_softmax")
    floor = _method("floor")
    ceil = _method("ceil")
    round = _method("round")
    clip = _method("clip")
    conj = _method("conj")
    isnan = _method("isnan")
    isfinite = _method("isfinite")
    matmul = _method("matmul")
    dot = _method("dot")

    # -- reductions, scans and sorting --------------------------------------------------------

    sum = _method("sum")
    prod = _method("prod")
    mean = _method("mean")
    var = _method("var")
    std = _method("std")
    max = _method("max")
    min = _method("min")
    argmax = _method("argmax")
    argmin = _method("argmin")
    all = _method("all")
    any = _method("any")
    logsumexp = _method("logsumexp")
    cumsum = _method("cumsum")
    cumprod = _method("cumprod")
    sort = _method("sort")
    argsort = _method("argsort")
    topk = _method("topk")
