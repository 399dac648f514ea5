"""mskernel-cpu: the CPU backend of mskernel.

Installing the distribution registers the backend ``cpu`` (priority 100, above the reference
backend), so ``mskernel_sdk.compile_graph`` prefers it; ops it has no kernel for run on the
reference backend (see ``mskernel plugins info cpu``).

    import mskernel_cpu
    mskernel_cpu.set_num_threads(2)   # or MSKERNEL_NUM_THREADS=2 before the first use
    print(mskernel_cpu.profile(mskernel.jit(fn), x))   # where a compiled step's time goes

Importing this package loads no native code; the extension loads when the backend is first
used.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "get_num_threads", "profile", "set_num_threads"]


def get_num_threads() -> int:
    """Threads the kernels use (the caller included)."""
    from .native import load

    return load().num_threads()


def set_num_threads(n: int) -> None:
    """Use ``n`` threads (at least 1) from now on; overrides ``MSKERNEL_NUM_THREADS``."""
    from .native import load

    load().set_num_threads(n)


def profile(fn, *args, repeats: int = 10, warmup: int = 1, **kwargs):
    """Time every step of the cpu plans of ``fn`` (a ``mskernel.jit`` function) on ``args``;
    see :func:`mskernel_cpu.profiling.profile`."""
    from .profiling import profile as run_profile

    return run_profile(fn, *args, repeats=repeats, warmup=warmup, **kwargs)
