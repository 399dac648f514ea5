"""Loading the native extension ``mskernel_cpu._native``.

Order matters:

1. ``_cpu_features`` (built for the baseline x86-64 ISA) checks that this CPU has what the
   kernels were compiled for (x86-64-v3: AVX2, FMA, F16C, BMI2).  Without it the backend
   reports itself unavailable instead of crashing on an illegal instruction.
2. ``scipy_openblas32`` is imported: it loads its OpenBLAS library, which ``_native`` links
   against by soname.  OpenBLAS picks its kernel family for this CPU as it loads (AVX-512
   ``SkylakeX`` kernels where the CPU has AVX-512) unless ``OPENBLAS_CORETYPE`` forces one.
   Some hosts set ``OPENBLAS_CORETYPE`` (and ``OPENBLAS_L2_SIZE``) for older OpenBLAS builds
   that mis-detect their CPU; they would hold this current build to an older family
   (``Haswell``: half the GEMM rate of AVX-512), so they are set aside while it loads.
   ``MSKERNEL_CPU_BLAS_CORETYPE`` names a family for it explicitly; ``blas_info()`` says
   which one runs.
3. ``_native`` is imported; the thread count is set from ``MSKERNEL_NUM_THREADS`` (default:
   the CPUs this process may run on).  The kernels' threads block when idle, never spin.
4. The type check is installed: ``_native.prepare`` runs :func:`check_node_types` before any
   kernel factory, so a factory only ever sees a node its op's rule accepts (and refuses to
   prepare anything until this is done).

So use :func:`load` rather than importing ``mskernel_cpu._native`` directly: a direct import
finds OpenBLAS only when scipy-openblas32 is installed next to this package.
"""

from __future__ import annotations

import contextlib
import functools
import os
import warnings
from types import ModuleType
from typing import Any, Iterator, Mapping, Sequence

THREADS_ENV = "MSKERNEL_NUM_THREADS"
#: OpenBLAS's kernel family for this package's OpenBLAS (its names: Haswell, SkylakeX, Zen ...);
#: unset: OpenBLAS's own choice for this CPU.
BLAS_CORETYPE_ENV = "MSKERNEL_CPU_BLAS_CORETYPE"
#: set aside while the OpenBLAS library loads (see the module docstring)
BLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


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


def check_node_types(op: str, inputs: Sequence[tuple[str, Sequence[int]]],
                     outputs: Sequence[tuple[str, Sequence[int]]],
                     attrs: Mapping[str, Any]) -> None:
    """Raise unless ``outputs`` (``(dtype name, shape)`` pairs) are exactly the types the rule
    of ``op`` gives for ``inputs`` and ``attrs``: the kernels' factories index operands and
    read attributes on that promise (shapes, ranks, dtypes, attribute ranges).  The error is
    the rule's own (naming the op), or a TypeError naming the op and both type lists.  An op
    with regions (``cpu.fused_elementwise``) is prepared from its program, which its kernel
    checks itself."""
    from mskernel_sdk import op_registry, tensor_type

    opdef = op_registry().get(op)
    if opdef.num_regions:
        return
    input_types = [tensor_type(dt, shape) for dt, shape in inputs]
    output_types = tuple(tensor_type(dt, shape) for dt, shape in outputs)
    expected = opdef.infer_types(input_types, opdef.bind_attrs(attrs), regions=())
    if expected != output_types:
        raise TypeError(f"op '{op}': the rule gives {', '.join(map(str, expected))} for inputs "
                        f"{', '.join(map(str, input_types)) or 'none'}, not the outputs "
                        f"{', '.join(map(str, output_types)) or 'none'}")


@contextlib.contextmanager
def blas_environment() -> Iterator[None]:
    """The environment OpenBLAS reads as it loads: without :data:`BLAS_OVERRIDES`, with
    ``OPENBLAS_CORETYPE`` from :data:`BLAS_CORETYPE_ENV` when that is set; restored after."""
    saved = {name: os.environ.pop(name) for name in BLAS_OVERRIDES if name in os.environ}
    if os.environ.get(BLAS_CORETYPE_ENV):
        os.environ["OPENBLAS_CORETYPE"] = os.environ[BLAS_CORETYPE_ENV]
    try:
        yield
    finally:
        os.environ.pop("OPENBLAS_CORETYPE", None)
        os.environ.update(saved)


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
        with blas_environment():
            import scipy_openblas32  # noqa: F401  (loads the OpenBLAS library _native links to)

            from . import _native
    except ImportError as exc:
        raise NativeUnavailable(f"cannot load the kernels: {exc}") from exc
    from mskernel_sdk import TOKEN_VALUE, DType, DeviceArray

    _native.set_runtime_types(DeviceArray, TOKEN_VALUE, DType)
    _native.set_type_check(check_node_types)
    _native.set_num_threads(threads_from_env())
    return _native
