"""How the IR finds op definitions: the :class:`OpLookup` a graph is built, verified and
parsed with.

The IR does not know where ops come from.  Each function that needs an op's definition takes
an ``OpLookup`` — in a running program the plugin host's op registry, which the host fills
with the core's and every plugin's ops; in a test, any object with ``get``.
:class:`~mskernel.ops.OpRegistry` is one.  The entry points users call directly may leave it
out; :mod:`mskernel.defaults` then supplies the host's.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence, TypeVar

from .types import Type

__all__ = ["OpLookup", "OpSchema"]


class OpSchema(Protocol):
    """What the IR asks of an op definition (:class:`~mskernel.ops.OpDef` is one)."""

    @property
    def owner(self) -> str:
        """The distribution that defines the op (``mskernel`` for the core's)."""
        ...

    @property
    def effectful(self) -> bool:
        """Whether the op reads or writes state (it then takes and returns a ``!token``)."""
        ...

    def bind_attrs(self, attrs: Mapping[str, Any], *, loc: Any = None) -> dict[str, Any]:
        """``attrs`` validated, in canonical form, defaults filled in."""
        ...

    def infer_outputs(self, input_types: Sequence[Type], attrs: Mapping[str, Any], *,
                      regions: Sequence[Any] = (), loc: Any = None) -> tuple[tuple[Type, ...], bool]:
        """The output types, and whether the op returns a tuple."""
        ...

    def infer_types(self, input_types: Sequence[Type], attrs: Mapping[str, Any], *,
                    regions: Sequence[Any] = (), loc: Any = None) -> tuple[Type, ...]:
        """The output types."""
        ...


Definition = TypeVar("Definition", covariant=True)


class OpLookup(Protocol[Definition]):
    """Op definitions by name.  The IR uses ``OpLookup[OpSchema]``; passes and the runtime,
    which also read traits and reference semantics, ``OpLookup[OpDef]``."""

    def get(self, name: str) -> Definition:
        """The definition of op ``name``; raises :class:`~mskernel.errors.UnknownOpError`
        when there is none."""
        ...
