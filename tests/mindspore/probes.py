"""Whether mskernel has the MindSpore names a port needs, asked of the installed mskernel
itself: a port whose names are missing is an expected failure, and runs as an ordinary test
(which must pass) once they are there."""

from __future__ import annotations

from typing import Callable

import mskernel


def _named(*names: str, where: object = mskernel) -> Callable[[], bool]:
    def present() -> bool:
        try:
            return all(getattr(where, name, None) is not None for name in names)
        except mskernel.errors.MskernelError:
            return False
    return present


#: what a port needs → (how to tell it is there, the MindSpore names it stands for)
NEEDS: dict[str, tuple[Callable[[], bool], str]] = {
    "export": (_named("export", "load"), "mskernel.export, mskernel.load and nn.GraphCell"),
}


def missing(*needs: str) -> str:
    """The MindSpore names among ``needs`` that mskernel lacks, as one reason ('' if none)."""
    return "; ".join(text for need in needs for probe, text in [NEEDS[need]] if not probe())
