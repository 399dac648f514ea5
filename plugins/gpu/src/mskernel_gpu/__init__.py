"""mskernel-gpu: the NVIDIA GPU backend of mskernel.

Installing the distribution registers the backend ``gpu`` (priority 200, above cpu).  On a
machine without an NVIDIA driver and device it reports itself unavailable, with what is
missing, and everything runs on the next backend; ``mskernel plugins info gpu`` lists what
was probed and the ops that fall back.

    import mskernel_gpu
    mskernel_gpu.set_float32_matmul_precision("high")   # TF32 tensor cores for float32 GEMMs

Importing this package imports no CUDA library.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "get_float32_matmul_precision", "set_float32_matmul_precision"]

_PRECISION = {"highest": "COMPUTE_TYPE_FP32", "high": "COMPUTE_TYPE_TF32"}
_precision = "highest"


def set_float32_matmul_precision(precision: str) -> None:
    """PyTorch's switch: ``"highest"`` (the default) computes float32 GEMMs in float32;
    ``"high"`` lets cuBLAS use TF32 tensor cores (10-bit mantissa products, float32
    accumulation), several times faster on Ampere and later.  float16 GEMMs always use tensor
    cores with float32 accumulation."""
    global _precision
    if precision not in _PRECISION:
        raise ValueError(f"precision must be one of {', '.join(_PRECISION)}, got {precision!r}")
    from .probe import load_library

    load_library("cublas")
    import numpy as np
    from cupy._core import _routines_linalg as linalg

    linalg.set_compute_type(np.float32, getattr(linalg, _PRECISION[precision]))
    _precision = precision


def get_float32_matmul_precision() -> str:
    return _precision
