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
        self.arch = f"compute_{major}{minor}"
        self.pool = cupy.get_default_memory_pool()  # the caching allocator
        self.pinned = cupy.get_default_pinned_memory_pool()
        from .cudnn import CudnnConv

        self.lib = ArrayLib(cupy, cupyx.scipy.special, CudnnConv.create(cupy))

    def stream(self) -> Any:
        """A new non-blocking stream (one per executable)."""
        return self.cupy.cuda.Stream(non_blocking=True)

    @functools.cache
    def function(self, name: str, source: str) -> Any:
        """The loaded kernel ``name`` of generated ``source`` (PTX from the disk cache)."""
        ptx = default_cache().ptx(source, name, self.arch)
        module = self.cupy.cuda.function.Module()
        module.load(ptx.encode())
        return module.get_function(name)


@functools.cache
def device() -> Device:
    return Device()
