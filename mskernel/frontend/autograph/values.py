"""The values converted code holds besides the user's: :class:`Undefined` for a variable not
assigned yet, :data:`UNDEFINED_RETURN` for the hidden return value before a ``return``, and
:class:`StateVars`, the getter/setter pair through which the runtime reads and writes the
variables a converted statement assigns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..tensor import Tensor
from .converted import use_site
from .errors import variable


class Undefined:
    """The value of a variable not assigned yet.  Any use raises an error naming it."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise NameError(f"{variable(self.name)} is used{use_site()} before it is assigned on "
                        "every path (an `if` or loop that did not run may have been meant to set "
                        "it)")

    __bool__ = __iter__ = __len__ = __call__ = __getitem__ = __array__ = __index__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _fail
    __rtruediv__ = __neg__ = __lt__ = __le__ = __gt__ = __ge__ = __float__ = __int__ = _fail

    def __getattr__(self, attr: str) -> Any:
        self._fail()

    def __repr__(self) -> str:
        return f"<undefined {self.name}>"


class _UndefinedReturn:
    """The hidden return value before a ``return`` ran (``None`` once the function ends)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<no return value yet>"


UNDEFINED_RETURN = _UndefinedReturn()


def describe(value: Any) -> str:
    """A value as a message shows it: ``a f32[3] tensor``, ``the Python int 2``, ``None``."""
    if isinstance(value, Tensor):
        return f"a {value.type} tensor"
    if isinstance(value, Undefined):
        return "undefined"
    if value is None:
        return "None"
    if isinstance(value, (bool, int, float, complex, str)):
        return f"the Python {type(value).__name__} {value!r}"
    if isinstance(value, (tuple, list, dict)):
        return f"a {type(value).__name__} of {len(value)} item(s)"
    return f"a {type(value).__name__}"


@dataclass(frozen=True)
class StateVars:
    """The variables a converted statement assigns, as the enclosing function holds them."""

    get: Callable[[], tuple[Any, ...]]
    set: Callable[[tuple[Any, ...]], None]
    names: tuple[str, ...]

    def values(self) -> list[Any]:
        return list(self.get())

    def assign(self, values: Sequence[Any]) -> None:
        self.set(tuple(values))

    def positions(self, names: Sequence[str]) -> list[int]:
        return [self.names.index(n) for n in names]
