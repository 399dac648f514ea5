"""Vision transforms that move pixels: resize, crop, pad, flip, rotate, affine, layout."""

from __future__ import annotations

import math
from typing import Optional, Sequence, Union

import numpy as np
from PIL import Image

from .image import Border, Fill, ImageTransform, Inter, channel_fills, per_channel
from .transforms import check_prob

Size = Union[int, Sequence[int]]


def _hw(size: Size, what: str) -> tuple[int, int]:
    """``size`` (one number for a square, or (height, width)) as (height, width)."""
    pair = (size, size) if isinstance(size, (int, np.integer)) else tuple(size)
    if len(pair) != 2 or not all(isinstance(v, (int, np.integer)) and v > 0 for v in pair):
        raise ValueError(f"{what} must be a positive int or (height, width), got {size!r}")
    return int(pair[0]), int(pair[1])


def _sides(padding: Size) -> tuple[int, int, int, int]:
    """MindSpore's padding: one value for all sides, (left/right, top/bottom), or (left,
    top, right, bottom); returned as (left, top, right, bottom)."""
    values = [padding] if isinstance(padding, (int, np.integer)) else list(padding)
    if len(values) not in (1, 2, 4) or any(v < 0 for v in values):
        raise ValueError(f"padding must be 1, 2 or 4 non-negative values, got {padding!r}")
    if len(values) == 1:
        return (values[0],) * 4  # type: ignore[return-value]
    if len(values) == 2:
        return values[0], values[1], values[0], values[1]
    return tuple(values)  # type: ignore[return-value]


def pad(image: np.ndarray, sides: tuple[int, int, int, int], fill: Fill,
        mode: Border) -> np.ndarray:
    left, top, right, bottom = sides
    widths = [(top, bottom), (left, right)] + [(0, 0)] * (image.ndim - 2)
    if mode is not Border.CONSTANT:
        return np.pad(image, widths, mode=mode.value)
    if image.ndim == 2:
        return np.pad(image, widths, constant_values=channel_fills(fill, 1)[0])
    fills = channel_fills(fill, image.shape[2])
    return np.stack([np.pad(image[..., c], widths[:2], constant_values=fills[c])
                     for c in range(image.shape[2])], axis=-1)


def crop(image: np.ndarray, top: int, left: int, height: int, width: int) -> np.ndarray:
    return np.ascontiguousarray(image[top:top + height, left:left + width])


def resize(image: np.ndarray, height: int, width: int, interpolation: Inter) -> np.ndarray:
    return per_channel(image, lambda ch, _: ch.resize((width, height), interpolation.value))


class Resize(ImageTransform):
    """Resize to ``size``: (height, width), or one number for the shorter side (keeping the
    aspect ratio)."""

    def __init__(self, size: Size, interpolation: Inter = Inter.LINEAR) -> None:
        pair = _hw(size, "Resize size")
        self.size = int(size) if isinstance(size, (int, np.integer)) else pair
        self.interpolation = interpolation

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        h, w = image.shape[:2]
        if isinstance(self.size, tuple):
            th, tw = self.size
        elif h <= w:
            th, tw = self.size, int(self.size * w / h)
        else:
            th, tw = int(self.size * h / w), self.size
        return resize(image, th, tw, self.interpolation)


class Pad(ImageTransform):
    """Pad the borders (see ``padding`` forms in :class:`RandomCrop`)."""

    def __init__(self, padding: Size, fill_value: Fill = 0,
                 padding_mode: Border = Border.CONSTANT) -> None:
        self.padding = _sides(padding)
        self.fill_value, self.padding_mode = fill_value, padding_mode

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return pad(image, self.padding, self.fill_value, self.padding_mode)


class CenterCrop(ImageTransform):
    """Crop the centre ``size``; a smaller image is first padded with zeros."""

    def __init__(self, size: Size) -> None:
        self.size = _hw(size, "CenterCrop size")

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        (ch, cw), (h, w) = self.size, image.shape[:2]
        dh, dw = max(0, ch - h), max(0, cw - w)
        if dh or dw:
            image = pad(image, (dw // 2, dh // 2, dw - dw // 2, dh - dh // 2), 0,
                        Border.CONSTANT)
            h, w = image.shape[:2]
        return crop(image, (h - ch) // 2, (w - cw) // 2, ch, cw)


class RandomCrop(ImageTransform):
    """Crop ``size`` at a random place, after optional ``padding`` — one value for every
    side, (left/right, top/bottom) or (left, top, right, bottom) — filled per
    ``padding_mode``; ``pad_if_needed`` pads an image smaller than ``size``."""

    def __init__(self, size: Size, padding: Optional[Size] = None, pad_if_needed: bool = False,
                 fill_value: Fill = 0, padding_mode: Border = Border.CONSTANT) -> None:
        self.size = _hw(size, "RandomCrop size")
        self.padding = None if padding is None else _sides(padding)
        self.pad_if_needed, self.fill_value, self.padding_mode = (pad_if_needed, fill_value,
                                                                  padding_mode)

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if self.padding is not None:
            image = pad(image, self.padding, self.fill_value, self.padding_mode)
        (ch, cw), (h, w) = self.size, image.shape[:2]
        if self.pad_if_needed and (h < ch or w < cw):
            dh, dw = max(0, ch - h), max(0, cw - w)
            image = pad(image, (dw, dh, dw, dh), self.fill_value, self.padding_mode)
            h, w = image.shape[:2]
        if h < ch or w < cw:
            raise ValueError(f"RandomCrop size {self.size} is larger than the (padded) image "
                             f"{(h, w)}; set pad_if_needed=True or crop smaller")
        return crop(image, int(rng.integers(h - ch + 1)), int(rng.integers(w - cw + 1)),
                    ch, cw)


class RandomResizedCrop(ImageTransform):
    """Crop a random area (a ``scale`` fraction of the image, aspect ratio in ``ratio``)
    and resize it to ``size``; falls back to a centre crop after ``max_attempts``."""

    def __init__(self, size: Size, scale: Sequence[float] = (0.08, 1.0),
                 ratio: Sequence[float] = (3 / 4, 4 / 3), interpolation: Inter = Inter.BILINEAR,
                 max_attempts: int = 10) -> None:
        self.size = _hw(size, "RandomResizedCrop size")
        if not (0 < scale[0] <= scale[1] and 0 < ratio[0] <= ratio[1]):
            raise ValueError(f"scale and ratio must be increasing positive ranges, got "
                             f"{scale} and {ratio}")
        self.scale, self.ratio = tuple(scale), tuple(ratio)
        self.interpolation, self.max_attempts = interpolation, max_attempts

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        top, left, height, width = self._window(*image.shape[:2], rng)
        return resize(crop(image, top, left, height, width), *self.size, self.interpolation)

    def _window(self, h: int, w: int, rng: np.random.Generator) -> tuple[int, int, int, int]:
        log_ratio = np.log(self.ratio)
        for _ in range(self.max_attempts):
            area = h * w * rng.uniform(*self.scale)
            aspect = math.exp(rng.uniform(*log_ratio))
            cw, ch = round(math.sqrt(area * aspect)), round(math.sqrt(area / aspect))
            if 0 < cw <= w and 0 < ch <= h:
                return int(rng.integers(h - ch + 1)), int(rng.integers(w - cw + 1)), ch, cw
        aspect = min(max(w / h, self.ratio[0]), self.ratio[1])
        cw, ch = (w, round(w / aspect)) if w / h < aspect else (round(h * aspect), h)
        ch, cw = min(ch, h), min(cw, w)
        return (h - ch) // 2, (w - cw) // 2, ch, cw


class _RandomFlip(ImageTransform):
    axis = 0

    def __init__(self, prob: float = 0.5) -> None:
        check_prob(prob)
        self.prob = prob

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if rng.random() < self.prob:
            return np.ascontiguousarray(np.flip(image, self.axis))
        return image


class RandomHorizontalFlip(_RandomFlip):
    """Mirror left-right with probability ``prob``."""

    axis = 1


class RandomVerticalFlip(_RandomFlip):
    """Mirror top-bottom with probability ``prob``."""

    axis = 0


def rotate(image: np.ndarray, degrees: float, resample: Inter, expand: bool,
           center: Optional[Sequence[float]], fill: Fill) -> np.ndarray:
    return per_channel(image, lambda ch, f: ch.rotate(
        degrees, resample.value, expand=expand, center=center, fillcolor=f), fill)


class Rotate(ImageTransform):
    """Rotate counter-clockwise by ``degrees`` about ``center`` ((x, y); default the image
    centre); ``expand`` grows the image to hold all of the rotated one."""

    def __init__(self, degrees: float, resample: Inter = Inter.NEAREST, expand: bool = False,
                 center: Optional[Sequence[float]] = None, fill_value: Fill = 0) -> None:
        self.degrees, self.resample, self.expand = degrees, resample, expand
        self.center, self.fill_value = center, fill_value

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return rotate(image, self.degrees, self.resample, self.expand, self.center,
                      self.fill_value)


class RandomRotation(ImageTransform):
    """Rotate by an angle drawn uniformly from ``degrees`` — (min, max), or one number d for
    (-d, d) — with :class:`Rotate`'s other arguments."""

    def __init__(self, degrees: Union[float, Sequence[float]], resample: Inter = Inter.NEAREST,
                 expand: bool = False, center: Optional[Sequence[float]] = None,
                 fill_value: Fill = 0) -> None:
        lo, hi = (-degrees, degrees) if isinstance(degrees, (int, float)) else degrees
        if lo > hi:
            raise ValueError(f"RandomRotation degrees must be (min, max), got {degrees!r}")
        self.degrees = (float(lo), float(hi))
        self.resample, self.expand, self.center, self.fill_value = (resample, expand, center,
                                                                    fill_value)

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return rotate(image, rng.uniform(*self.degrees), self.resample, self.expand,
                      self.center, self.fill_value)


def affine(image: np.ndarray, degrees: float, translate: Sequence[float], scale: float,
           shear: Sequence[float], resample: Inter, fill: Fill,
           center: Optional[Sequence[float]] = None) -> np.ndarray:
    """Rotate ``degrees`` clockwise, scale, shear (x, y degrees) about ``center`` (default
    the image centre), then translate by (x, y) pixels."""
    h, w = image.shape[:2]
    cx, cy = (w * 0.5, h * 0.5) if center is None else center
    rot, sx, sy = (math.radians(a) for a in (degrees, *shear))
    # inverse of T·C·R·Sh·S·C⁻¹, the output → input mapping Pillow wants
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    m = [d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0]
    tx, ty = translate
    m[2] = m[0] * (-cx - tx) + m[1] * (-cy - ty) + cx
    m[5] = m[3] * (-cx - tx) + m[4] * (-cy - ty) + cy
    return per_channel(image, lambda ch, f: ch.transform(
        (w, h), Image.Transform.AFFINE, m, resample.value, fillcolor=f), fill)


class Affine(ImageTransform):
    """An affine map: rotate ``degrees`` clockwise, ``scale``, ``shear`` (x, y degrees, or
    one number for x) about the image centre, then ``translate`` (x, y) pixels."""

    def __init__(self, degrees: float, translate: Sequence[float], scale: float,
                 shear: Union[float, Sequence[float]], resample: Inter = Inter.NEAREST,
                 fill_value: Fill = 0) -> None:
        if scale <= 0:
            raise ValueError(f"Affine scale must be positive, got {scale}")
        self.degrees, self.translate, self.scale = degrees, tuple(translate), scale
        self.shear = (float(shear), 0.0) if isinstance(shear, (int, float)) else tuple(shear)
        self.resample, self.fill_value = resample, fill_value

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return affine(image, self.degrees, self.translate, self.scale, self.shear,
                      self.resample, self.fill_value)


class HWC2CHW(ImageTransform):
    """Channels-last to channels-first (an HW image becomes 1HW)."""

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        planes = image[..., None] if image.ndim == 2 else image
        return np.ascontiguousarray(planes.transpose(2, 0, 1))


class CHW2HWC(ImageTransform):
    """Channels-first to channels-last."""

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if image.ndim != 3:
            raise ValueError(f"CHW2HWC needs a CHW image, got shape {image.shape}")
        return np.ascontiguousarray(image.transpose(1, 2, 0))
