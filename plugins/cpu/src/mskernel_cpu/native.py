"""Loading the native extension ``mskernel_cpu._native``.

Order matters:

1. ``_cpu_features`` (built for the baseline x86-64 ISA) checks that this CPU has what the
   kernels were compiled for (x86-64-v3: AVX2, FMA, F16C, BMI2).  Without it the backend
   reports itself unavailable instead of crashing on an illegal instruction.
2. ``scipy_openblas32`` is imported: it loads its OpenBLAS library, which ``_native`` links
   against by soname.
3. ``_native`` is imported; the thread count is set from ``MSKERNEL_NUM_THREADS`` (default:
   the CPUs this process may run on).  The kernels' threads block when idle, never spin.

So use :func:`load` rather than importing ``mskernel_cpu._native`` directly: a direct import
finds OpenBLAS only when scipy-openblas32 is installed next to this package.
"""

from __future__ import annotations

import functools
import os
import warnings
from types import ModuleType

THREADS_ENV = "MSKERNEL_NUM_THREADS"


class NativeUnavailable(RuntimeError):
    """The native kernels cannot run here; the message says why."""


def default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def threads_from_env() -> int:
    """``MSKERNEL_NUM_THREADS`` if it is a positive integer, else the default (with a warning
    when it is set to something else)."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return default_threads()
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        warnings.warn(f"{THREADS_ENV}={raw!r} is not a positive integer; using "
                      f"{default_threads()} threads", RuntimeWarning, stacklevel=2)
        return default_threads()
    return value


@functools.cache
def load() -> ModuleType:
    """The extension module, loaded and configured once; raises :class:`NativeUnavailable`."""
    try:
        from . import _cpu_features
    except ImportError as exc:
        raise NativeUnavailable(f"the extension is not built ({exc})") from exc
    missing = _cpu_features.missing_features()
    if missing:
        raise NativeUnavailable(
            f"this CPU lacks {', '.join(missing)}, which the kernels were compiled for")
    try:
        import scipy_openblas32  # noqa: F401  (loads the OpenBLAS library _native links to)

        from . import _native
    except ImportError as exc:
        raise NativeUnavailable(f"cannot load the kernels: {exc}") from exc
    from mskernel_sdk import TOKEN_VALUE, DeviceArray

    _native.set_runtime_types(DeviceArray, TOKEN_VALUE)
    _native.set_num_threads(threads_from_env())
    return _native
