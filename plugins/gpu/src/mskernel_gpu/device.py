"""The device side of the backend, created on first use when a GPU is present: CuPy with
one stream per executable, the cuBLAS settings, the cuDNN frontend when installed, and the
loader of generated kernels.  Nothing here is imported while the backend is unavailable.
"""

from __future__ import annotations

import functools
from typing import Any

from .kernels import ArrayLib
from .nvrtc import default_cache
from .probe import load_library, probe


class Device:
    """CuPy on device 0, with the kernels' :class:`ArrayLib`."""

    def __init__(self) -> None:
        for name in ("nvrtc", "cublas"):
            load_library(name)
        import cupy
        import cupyx.scipy.special

        self.cupy = cupy
        found = probe()
        major, minor = found.devices[0].capability
        self.arch = f"sm_{major}{minor}"  # cubins: no PTX JIT, any driver of CUDA 12
        self.pool = cupy.get_default_memory_pool()  # the caching allocator
        self.notes: list[str] = []
        try:  # float16 GEMMs with float32 accumulation, whatever CuPy's default
            import numpy as np
            from cupy._core import _routines_linalg as linalg

            linalg.set_compute_type(np.float16, linalg.COMPUTE_TYPE_FP32)
        except (ImportError, AttributeError) as exc:  # CuPy moved its switch: say so
            self.notes.append(f"float16 GEMM compute type left to CuPy ({exc})")
        self.pinned = cupy.get_default_pinned_memory_pool()
        from .cudnn import CudnnConv

        self.lib = ArrayLib(cupy, cupyx.scipy.special, CudnnConv.create(cupy))
        self.copy_stream = cupy.cuda.Stream(non_blocking=True)
        self._staging: list[tuple[Any, Any]] = []
        self._functions: dict[str, Any] = {}

    def pinned_empty(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """A host array in page-locked memory (from CuPy's pinned pool)."""
        import cupyx

        return cupyx.empty_pinned(shape, dtype)

    def pinned_like(self, host: Any) -> Any:
        pinned = self.pinned_empty(host.shape, host.dtype)
        pinned[...] = host
        return pinned

    def keep_until(self, event: Any, buffer: Any) -> None:
        """Hold ``buffer`` until ``event`` has passed (asynchronous copies read it)."""
        self._staging = [(e, b) for e, b in self._staging if not e.done]
        self._staging.append((event, buffer))

    def stream(self) -> Any:
        """A new non-blocking stream (one per executable)."""
        return self.cupy.cuda.Stream(non_blocking=True)

    def function(self, name: str, source: str) -> Any:
        """The loaded kernel ``name`` of generated ``source`` (a cubin from the disk cache)."""
        if name not in self._functions:
            cubin = default_cache().compiled(source, name, self.arch)
            module = self.cupy.cuda.function.Module()
            module.load(cubin)
            self._functions[name] = (module, module.get_function(name))
        return self._functions[name][1]


@functools.cache
def device() -> Device:
    return Device()
