"""Vision transforms that change an image's representation: decode, rescale, normalise, and
the HWC uint8 → CHW float conversion a network wants."""

from __future__ import annotations

from typing import Any, Sequence, Union

import numpy as np

from .image import ImageTransform, decode
from .transforms import Transform

Values = Union[float, Sequence[float]]


class Decode(Transform):
    """Encoded image bytes (a 1-D uint8 array, as ``ImageFolderDataset`` gives, or a bytes
    array, as ``MindDataset`` gives) to an RGB uint8 HWC image (any format Pillow reads:
    JPEG, PNG, BMP, GIF, TIFF, WebP...)."""

    def apply(self, columns: tuple, rng: np.random.Generator) -> tuple:
        return tuple(decode(c) for c in columns)


class Rescale(ImageTransform):
    """``image * rescale + shift`` as float32."""

    def __init__(self, rescale: float, shift: float) -> None:
        self.rescale, self.shift = rescale, shift

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return (image.astype(np.float32) * np.float32(self.rescale)
                + np.float32(self.shift)).astype(np.float32)


def _per_channel(values: Values, what: str) -> np.ndarray:
    out = np.atleast_1d(np.asarray(values, np.float32))
    if out.ndim != 1 or not len(out):
        raise ValueError(f"{what} must be a number or one number per channel, got {values!r}")
    return out


class Normalize(ImageTransform):
    """``(image - mean) / std`` per channel as float32; channels last unless ``is_hwc`` is
    False.  MindSpore convention: ``mean`` and ``std`` are in the image's units (0–255
    for uint8 images)."""

    def __init__(self, mean: Values, std: Values, is_hwc: bool = True) -> None:
        self.mean, self.std = _per_channel(mean, "mean"), _per_channel(std, "std")
        if np.any(self.std <= 0):
            raise ValueError(f"Normalize std must be positive, got {std!r}")
        self.is_hwc = is_hwc

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        channels = 1 if image.ndim == 2 else image.shape[2 if self.is_hwc else 0]
        if len(self.mean) not in (1, channels) or len(self.std) not in (1, channels):
            raise ValueError(f"Normalize has {len(self.mean)} means and {len(self.std)} stds "
                             f"for an image with {channels} channels")
        shape = (-1,) if self.is_hwc or image.ndim == 2 else (-1, 1, 1)
        return ((image.astype(np.float32) - self.mean.reshape(shape))
                / self.std.reshape(shape)).astype(np.float32)


class ToTensor(ImageTransform):
    """An HWC (or HW) image to CHW ``output_type`` values divided by 255."""

    def __init__(self, output_type: Any = np.float32) -> None:
        self.output_type = np.dtype(output_type)
        if self.output_type.kind != "f":
            raise ValueError(f"ToTensor output_type must be a float type, got {output_type}")

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        planes = image[..., None] if image.ndim == 2 else image
        scaled = planes.astype(self.output_type) / self.output_type.type(255)
        return np.ascontiguousarray(scaled.transpose(2, 0, 1))
