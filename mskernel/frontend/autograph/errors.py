"""Errors of the converter, and how its messages name the user's variables, values and lines.

Unsupported syntax is reported when a function is converted (:class:`ConversionError`);
disagreements between the branches of a tensor-dependent ``if`` or the iterations of a
tensor-dependent loop are reported while tracing, as
:class:`~mskernel.frontend.conditions.ControlFlowError`.  Both start with ``file:line`` of the
user's statement.
"""

from __future__ import annotations

from ...errors import MskernelError
from .lowering import BREAK_PREFIX, CONTINUE_PREFIX, DO_RETURN, RETVAL

#: Where a converted statement stands: ``(file, line)``.
Loc = tuple[str, int]
#: The name under which messages speak of the value of a conditional expression.
IF_EXP = "ag__if_exp"


class ConversionError(MskernelError):
    """A construct @jit cannot convert into a graph; the message names it and its line."""


def at(loc: Loc) -> str:
    return f"{loc[0]}:{loc[1]}"


def unsupported(loc: Loc, construct: str, hint: str) -> ConversionError:
    return ConversionError(f"{at(loc)}: {construct} is not supported in @jit functions; {hint}")


def variable(name: str) -> str:
    """How a message names a variable of the converted code."""
    if name == RETVAL:
        return "the return value"
    if name == DO_RETURN:
        return "the early-return flag"
    if name.startswith(BREAK_PREFIX):
        return "the `break` flag"
    if name.startswith(CONTINUE_PREFIX):
        return "the `continue` flag"
    if name == IF_EXP:
        return "the conditional expression"
    return f"variable '{name}'"
