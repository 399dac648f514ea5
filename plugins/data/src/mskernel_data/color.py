"""Vision transforms that change pixel values in place: the colour operations AutoAugment
draws from (uint8 images with one or three channels, through Pillow)."""

from __future__ import annotations

from abc import abstractmethod
from typing import Optional, Sequence, Union

import numpy as np
from PIL import Image, ImageEnhance, ImageOps

from .image import ImageTransform, from_pil, to_pil


class _PillowColour(ImageTransform):
    """A colour operation run by Pillow: implement ``pillow(im)``."""

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return from_pil(self.pillow(to_pil(image, type(self).__name__)), image)

    @abstractmethod
    def pillow(self, im: Image.Image) -> Image.Image:
        """The Pillow image after this operation."""


class _Enhance(_PillowColour):
    """Blend with a degenerate image: factor 0 gives the degenerate one, 1 the original."""

    enhancer: type = ImageEnhance.Brightness

    def __init__(self, factor: float) -> None:
        if factor < 0:
            raise ValueError(f"{type(self).__name__} factor must be >= 0, got {factor}")
        self.factor = factor

    def pillow(self, im: Image.Image) -> Image.Image:
        return self.enhancer(im).enhance(self.factor)


class AdjustBrightness(_Enhance):
    """Scale brightness by ``factor`` (0: black)."""

    enhancer = ImageEnhance.Brightness


class AdjustContrast(_Enhance):
    """Scale contrast by ``factor`` (0: the mean grey)."""

    enhancer = ImageEnhance.Contrast


class AdjustSaturation(_Enhance):
    """Scale saturation by ``factor`` (0: greyscale)."""

    enhancer = ImageEnhance.Color


class AdjustSharpness(_Enhance):
    """Scale sharpness by ``factor`` (0: blurred, 2: sharpened)."""

    enhancer = ImageEnhance.Sharpness


class Posterize(_PillowColour):
    """Keep the ``bits`` high bits of every channel."""

    def __init__(self, bits: int) -> None:
        if not 1 <= bits <= 8:
            raise ValueError(f"Posterize bits must lie in [1, 8], got {bits}")
        self.bits = int(bits)

    def pillow(self, im: Image.Image) -> Image.Image:
        return ImageOps.posterize(im, self.bits)


class AutoContrast(_PillowColour):
    """Stretch each channel to [0, 255], ignoring the ``cutoff`` percent darkest and
    brightest pixels and the values in ``ignore``."""

    def __init__(self, cutoff: float = 0.0, ignore: Optional[Union[int, Sequence[int]]] = None
                 ) -> None:
        if not 0 <= cutoff < 50:
            raise ValueError(f"AutoContrast cutoff must lie in [0, 50), got {cutoff}")
        self.cutoff, self.ignore = cutoff, ignore

    def pillow(self, im: Image.Image) -> Image.Image:
        return ImageOps.autocontrast(im, self.cutoff, self.ignore)


class Equalize(_PillowColour):
    """Equalise each channel's histogram."""

    def pillow(self, im: Image.Image) -> Image.Image:
        return ImageOps.equalize(im)


class Invert(ImageTransform):
    """``255 - pixel`` for uint8 images."""

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if image.dtype != np.uint8:
            raise ValueError(f"Invert needs a uint8 image, got {image.dtype}")
        return 255 - image


class Solarize(ImageTransform):
    """Invert the uint8 pixels in ``threshold``: (min, max), or one number t for [t, 255]."""

    def __init__(self, threshold: Union[float, Sequence[float]]) -> None:
        lo, hi = (threshold, 255) if isinstance(threshold, (int, float)) else threshold
        if not 0 <= lo <= hi <= 255:
            raise ValueError(f"Solarize threshold must lie in [0, 255] as (min, max), got "
                             f"{threshold!r}")
        self.threshold = (float(lo), float(hi))

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if image.dtype != np.uint8:
            raise ValueError(f"Solarize needs a uint8 image, got {image.dtype}")
        lo, hi = self.threshold
        return np.where((image >= lo) & (image <= hi), 255 - image, image)
