"""``mskernel.common``: MindSpore's ``mindspore.common`` — :class:`Tensor`, :class:`Parameter`,
:class:`ParameterTuple`, the dtypes (:mod:`mskernel.common.dtype`, which scripts import as
``mstype``), :func:`set_seed` and :func:`get_seed`.

A plugin may provide a sub-module here: ``mskernel.common.initializer`` is the initialisers of
mskernel-nn, registered as the namespace ``common.initializer``.  The frontend names are
imported on first use, so ``mskernel.common.dtype`` stays cheap.
"""

from __future__ import annotations

from typing import Any

from .._importer import namespace_member
from . import dtype as dtype

_FRONTEND = {
    "Tensor": "mskernel.frontend.tensor",
    "tensor": "mskernel.frontend.tensor",
    "Parameter": "mskernel.frontend.parameter",
    "ParameterTuple": "mskernel.frontend.parameter",
    "set_seed": "mskernel.common.seed",
    "get_seed": "mskernel.common.seed",
}


def __getattr__(name: str) -> Any:
    return namespace_member(__name__, name, _FRONTEND)
