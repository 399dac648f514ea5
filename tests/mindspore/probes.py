"""Whether mskernel has the MindSpore names a port needs, asked of the installed mskernel
itself: a port whose names are missing is an expected failure, and runs as an ordinary test
(which must pass) once they are there."""

from __future__ import annotations

import inspect
from typing import Callable

import mskernel
from mskernel import ops


def _parameters(fn: object) -> list[str]:
    return list(inspect.signature(fn).parameters)  # type: ignore[arg-type]


def _grad_contract() -> bool:
    """``value_and_grad(fn, None, weights, has_aux=True)`` with weights positionally."""
    return _parameters(mskernel.value_and_grad)[1:3] == ["grad_position", "weights"]


def _grad_of_several_outputs() -> bool:
    """``grad`` of a function returning several tensors differentiates their sum, and
    ``ops.stop_gradient`` exists."""
    if not hasattr(ops, "stop_gradient"):
        return False
    x = mskernel.Tensor(2.0)
    return float(mskernel.grad(lambda v: (v * v, v * 3))(x)) == 7.0


def _named(*names: str, where: object = mskernel) -> Callable[[], bool]:
    def present() -> bool:
        try:
            return all(getattr(where, name, None) is not None for name in names)
        except mskernel.errors.MskernelError:
            return False
    return present


#: what a port needs → (how to tell it is there, the MindSpore names it stands for)
NEEDS: dict[str, tuple[Callable[[], bool], str]] = {
    "grad contract": (_grad_contract, "value_and_grad(fn, None, weights, has_aux=True) with "
                                      "weights given positionally (MindSpore 2.x's contract)"),
    "several outputs": (_grad_of_several_outputs, "grad of a function's several outputs as "
                                                  "their sum, and ops.stop_gradient"),
    "GradOperation": (_named("GradOperation", where=ops), "ops.GradOperation"),
    "export": (_named("export", "load"), "mskernel.export, mskernel.load and nn.GraphCell"),
}


def missing(*needs: str) -> str:
    """The MindSpore names among ``needs`` that mskernel lacks, as one reason ('' if none)."""
    return "; ".join(text for need in needs for probe, text in [NEEDS[need]] if not probe())
