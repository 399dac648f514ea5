"""Ascend's data layouts, as NumPy conversions.

The Cube unit multiplies 16×16 fractal blocks, so convolutions read their operands in the
layouts CANN calls:

- ``NC1HWC0`` (5HD) for feature maps: ``[N, C, H, W]`` → ``[N, C1, H, W, C0]`` with
  ``C1 = ceil(C / C0)``, the channels split into blocks of ``C0`` and the last block padded
  with zeros; ``C0`` is 32 bytes of the Cube's input: 16 for float16 (and float32, which the
  Cube reads as 16-channel blocks too), 32 for int8 and uint8;
- ``FRACTAL_Z`` for convolution weights: ``[N, C, KH, KW]`` (out, in, kernel) →
  ``[C1 * KH * KW, N1, N0, C0]`` with ``N1 = ceil(N / 16)`` and ``N0 = 16``: for each input
  channel block and kernel tap, a 16×C0 fractal per block of 16 output channels, input and
  output channels padded with zeros.

The padding is zeros, so a convolution over padded channels adds nothing, and the
conversions back (``to_nchw``, ``weights_from_fractal_z``) drop it.  CANN's ``TransData`` op
converts between these layouts; :mod:`.ops` defines it as ``ascend.transdata``.
"""

from __future__ import annotations

import numpy as np

NCHW = "NCHW"
NC1HWC0 = "NC1HWC0"
FRACTAL_Z = "FRACTAL_Z"
FORMATS = (NCHW, NC1HWC0, FRACTAL_Z)
#: the fractal's output-channel side
N0 = 16


def c0_of(dtype_name: str) -> int:
    """The channel block ``C0`` of the 5HD and fractal layouts for a dtype."""
    return 32 if dtype_name in ("int8", "uint8") else 16


def blocks(size: int, block: int) -> int:
    return -(-size // block)


def nc1hwc0_shape(nchw: tuple[int, ...], c0: int) -> tuple[int, ...]:
    n, c, h, w = nchw
    return (n, blocks(c, c0), h, w, c0)


def fractal_z_shape(nchw: tuple[int, ...], c0: int) -> tuple[int, ...]:
    n, c, kh, kw = nchw
    return (blocks(c, c0) * kh * kw, blocks(n, N0), N0, c0)


def to_nc1hwc0(x: np.ndarray, c0: int) -> np.ndarray:
    n, c, h, w = x.shape
    c1 = blocks(c, c0)
    padded = np.zeros((n, c1 * c0, h, w), x.dtype)
    padded[:, :c] = x
    return np.ascontiguousarray(padded.reshape(n, c1, c0, h, w).transpose(0, 1, 3, 4, 2))


def to_nchw(x5: np.ndarray, channels: int) -> np.ndarray:
    n, c1, h, w, c0 = x5.shape
    return np.ascontiguousarray(x5.transpose(0, 1, 4, 2, 3).reshape(n, c1 * c0, h, w)[:, :channels])


def to_fractal_z(w: np.ndarray, c0: int) -> np.ndarray:
    n, c, kh, kw = w.shape
    c1, n1 = blocks(c, c0), blocks(n, N0)
    padded = np.zeros((n1 * N0, c1 * c0, kh, kw), w.dtype)
    padded[:n, :c] = w
    # [N1, N0, C1, C0, KH, KW] -> [C1, KH, KW, N1, N0, C0]
    tiles = padded.reshape(n1, N0, c1, c0, kh, kw).transpose(2, 4, 5, 0, 1, 3)
    return np.ascontiguousarray(tiles.reshape(c1 * kh * kw, n1, N0, c0))


def weights_from_fractal_z(wz: np.ndarray, nchw: tuple[int, ...]) -> np.ndarray:
    n, c, kh, kw = nchw
    _, n1, n0, c0 = wz.shape
    c1 = blocks(c, c0)
    tiles = wz.reshape(c1, kh, kw, n1, n0, c0).transpose(3, 4, 0, 5, 1, 2)
    return np.ascontiguousarray(tiles.reshape(n1 * n0, c1 * c0, kh, kw)[:n, :c])


def convert(x: np.ndarray, src: str, dst: str, nchw: tuple[int, ...]) -> np.ndarray:
    """``x`` from layout ``src`` to ``dst``; ``nchw`` is the logical ``[N, C, H, W]`` shape
    (of the feature map, or of the weights as ``[out, in, KH, KW]``)."""
    c0 = c0_of(x.dtype.name)
    if src == NCHW and dst == NC1HWC0:
        return to_nc1hwc0(x, c0)
    if src == NC1HWC0 and dst == NCHW:
        return to_nchw(x, nchw[1])
    if src == NCHW and dst == FRACTAL_Z:
        return to_fractal_z(x, c0)
    if src == FRACTAL_Z and dst == NCHW:
        return weights_from_fractal_z(x, nchw)
    raise ValueError(f"no conversion from {src} to {dst}")


def converted_shape(src: str, dst: str, nchw: tuple[int, ...], c0: int) -> tuple[int, ...]:
    """The shape :func:`convert` gives, or ``ValueError`` for a conversion it does not do."""
    if (src, dst) in ((NCHW, NC1HWC0), (NCHW, FRACTAL_Z)):
        return nc1hwc0_shape(nchw, c0) if dst == NC1HWC0 else fractal_z_shape(nchw, c0)
    if (src, dst) in ((NC1HWC0, NCHW), (FRACTAL_Z, NCHW)):
        return tuple(nchw)
    raise ValueError(f"no conversion from {src} to {dst}")
