"""What every vision transform shares: the :class:`ImageTransform` base, the interpolation
and border enums, decoding, and running Pillow on NumPy images.

Images are NumPy arrays, HWC (or HW for one channel), any dtype; a Pillow image is accepted
as input and becomes an array.  Geometric operations run Pillow channel by channel — mode
``L`` for uint8, ``F`` (float32) for anything else, cast back to the input dtype — so they
work for any number of channels and dtypes.  Pillow is the field's standard for decoding,
resampling and rotating images: it is fast C, and its results are what users of
torchvision and MindSpore's Python ops already get.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
import enum
import io
from typing import Any, Callable, Sequence, Union

import numpy as np
from PIL import Image

from .transforms import Transform

Fill = Union[float, Sequence[float]]


class Inter(enum.Enum):
    """Interpolation of resampling operations."""

    NEAREST = Image.Resampling.NEAREST
    LINEAR = Image.Resampling.BILINEAR
    BILINEAR = Image.Resampling.BILINEAR
    CUBIC = Image.Resampling.BICUBIC
    BICUBIC = Image.Resampling.BICUBIC
    AREA = Image.Resampling.BOX
    ANTIALIAS = Image.Resampling.LANCZOS


class Border(enum.Enum):
    """How padding fills the new border: a constant, the edge pixel, or a reflection that
    leaves out (``REFLECT``) or repeats (``SYMMETRIC``) the edge."""

    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


class ImageTransform(Transform, ABC):
    """A transform of one image column: implement ``transform(image, rng)`` on an HWC or HW
    array and return an array."""

    def apply(self, columns: tuple, rng: np.random.Generator) -> tuple:
        if len(columns) != 1:
            raise TypeError(f"{type(self).__name__} takes one image column, got "
                            f"{len(columns)} columns")
        return (self.transform(as_image(columns[0], type(self).__name__), rng),)

    @abstractmethod
    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The transformed image (HWC, the input's dtype)."""


def as_image(value: Any, op: str) -> np.ndarray:
    """``value`` (an array or a Pillow image) as an HW or HWC array."""
    image = np.asarray(value)
    if image.ndim not in (2, 3):
        raise ValueError(f"{op} needs an HW or HWC image, got shape {image.shape}")
    return image


def decode(data: Any) -> np.ndarray:
    """Encoded image bytes (bytes, a 1-D uint8 array, or a bytes array as ``MindDataset``
    gives) as an RGB uint8 HWC array."""
    if isinstance(data, bytes):
        raw = data
    elif isinstance(data, np.ndarray) and data.dtype.kind == "S":
        raw = data.tobytes()
    else:
        raw = np.asarray(data, np.uint8).tobytes()
    try:
        with Image.open(io.BytesIO(raw)) as im:
            return np.asarray(im.convert("RGB"))
    except Exception as exc:
        raise ValueError(f"cannot decode {len(raw)} bytes as an image: {exc}") from exc


def channel_fills(fill: Fill, channels: int) -> list[float]:
    """``fill`` (one value, or one per channel) as one value per channel."""
    fills = list(fill) if isinstance(fill, (list, tuple)) else [fill] * channels
    if len(fills) != channels:
        raise ValueError(f"fill_value has {len(fills)} values for {channels} channels")
    return fills


def per_channel(image: np.ndarray, fn: Callable[[Image.Image, float], Image.Image],
                fill: Fill = 0) -> np.ndarray:
    """Apply a Pillow operation ``fn(channel, fill)`` to each channel of ``image``."""
    planes = image[..., None] if image.ndim == 2 else image
    mode_dtype = np.uint8 if image.dtype == np.uint8 else np.float32
    fills = channel_fills(fill, planes.shape[2])
    out = [np.asarray(fn(Image.fromarray(planes[..., c].astype(mode_dtype, copy=False)),
                         fills[c]))
           for c in range(planes.shape[2])]
    result = _cast_back(np.stack(out, axis=-1), image.dtype)
    return result[..., 0] if image.ndim == 2 else result


def _cast_back(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if values.dtype == dtype:
        return values
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = np.clip(np.rint(values), info.min, info.max)
    return values.astype(dtype)


def to_pil(image: np.ndarray, op: str) -> Image.Image:
    """A uint8 image with one or three channels as a Pillow ``L`` or ``RGB`` image (what
    colour operations need)."""
    if image.dtype != np.uint8 or (image.ndim == 3 and image.shape[2] not in (1, 3)):
        raise ValueError(f"{op} needs a uint8 image with 1 or 3 channels, got {image.dtype} "
                         f"with shape {image.shape}")
    return Image.fromarray(image[..., 0] if image.ndim == 3 and image.shape[2] == 1 else image)


def from_pil(im: Image.Image, like: np.ndarray) -> np.ndarray:
    """The result of a colour operation on ``like`` (made by :func:`to_pil`) as an array of
    ``like``'s shape."""
    return np.asarray(im).reshape(like.shape)
