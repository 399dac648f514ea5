"""User functions handed to higher-order functions: converted like the code ``@jit`` calls.

``@jit`` converts the Python control flow of the function it compiles and of the user functions
that function calls.  A function the user hands to a higher-order function of mskernel or of
a plugin — ``grad(f)``, ``vjp(f, x)``, ``cond(p, f, g, x)``, ``while_loop(c, b, x)`` — is
called by library code instead, which converted code does not reach.  The library declares
which of its parameters take user functions with :func:`user_callables`; such a function is
then called converted whenever a trace is active (``@jit`` tracing, a control-flow body being
traced), and as it is in eager mode — as MindSpore's graph mode parses the whole call tree.

    @user_callables("fn")
    def grad(fn, argnums=0):
        ...

What is converted is what converted code would convert (:func:`.conversion.converted_callee`):
user functions, lambdas, methods, callable objects and partials of them — never library code.
"""

from __future__ import annotations

import functools
import inspect
import typing
from typing import Any, Callable, TypeVar

from ..trace_context import active_trace
from .conversion import converted_callee

__all__ = ["as_user_callable", "user_callables"]

Fn = TypeVar("Fn", bound=Callable[..., Any])

_MARK = "__mskernel_user_callable__"
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def as_user_callable(fn: Any) -> Any:
    """``fn`` (a user function) wrapped so that it runs converted while a trace is active;
    anything else — a non-callable, an already wrapped function — is returned as it is."""
    if not callable(fn) or getattr(fn, _MARK, False):
        return fn

    @functools.wraps(fn, updated=())  # a callable object's attributes stay its own
    def call(*args: Any, **kwargs: Any) -> Any:
        target = converted_callee(fn) if active_trace() is not None else fn
        return target(*args, **kwargs)

    setattr(call, _MARK, True)
    return call


def _as_user_callables(value: Any) -> Any:
    """A callable, or each callable of a list or tuple (``switch``'s branches)."""
    if isinstance(value, (list, tuple)):
        return type(value)(as_user_callable(v) for v in value)
    return as_user_callable(value)


def user_callables(*names: str) -> Callable[[Fn], Fn]:
    """Declare that the parameters ``names`` of the decorated function take user functions
    (or lists/tuples of them): they are wrapped with :func:`as_user_callable` on every call,
    however they are passed.  For a plugin's transforms and combinators; the wrapping costs
    one extra call and never changes what an eager call computes."""

    def decorate(fn: Fn) -> Fn:
        parameters = inspect.signature(fn).parameters
        unknown = [n for n in names if n not in parameters]
        if unknown:
            raise TypeError(f"user_callables: {fn.__qualname__} has no parameter "
                            f"{', '.join(map(repr, unknown))}")
        positions = {name: i for i, (name, p) in enumerate(parameters.items())
                     if p.kind in _POSITIONAL}

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = list(args)
            for name in names:
                i = positions.get(name)
                if i is not None and i < len(given):
                    given[i] = _as_user_callables(given[i])
                elif name in kwargs:
                    kwargs[name] = _as_user_callables(kwargs[name])
            return fn(*given, **kwargs)

        return typing.cast(Fn, wrapper)

    return decorate
