"""Augmentation policies: :class:`RandomSelectSubpolicy` (your own policy: sub-policies of
(operation, probability) pairs) and :class:`AutoAugment` (the policies learned by Cubuk et
al., "AutoAugment: Learning Augmentation Strategies from Data", 2019, with the magnitude
scales torchvision uses)."""

from __future__ import annotations

import enum
import math
from typing import Callable, Sequence

import numpy as np

from .color import (
    AdjustBrightness, AdjustContrast, AdjustSaturation, AdjustSharpness, AutoContrast,
    Equalize, Invert, Posterize, Solarize,
)
from .geometry import affine, rotate
from .image import Fill, ImageTransform, Inter
from .transforms import Operation, Transform, call_operation, check_prob


class RandomSelectSubpolicy(Transform):
    """Per row, pick one sub-policy uniformly; apply each of its ``(operation, prob)`` pairs
    in order, each with its probability.  ``policy`` is a list of sub-policies."""

    def __init__(self, policy: Sequence[Sequence[tuple[Operation, float]]]) -> None:
        if not policy or not all(policy):
            raise ValueError("RandomSelectSubpolicy needs a non-empty list of non-empty "
                             "sub-policies")
        for sub in policy:
            for op, prob in sub:
                if not callable(op):
                    raise TypeError(f"RandomSelectSubpolicy: {op!r} is not an operation")
                check_prob(prob)
        self.policy = [list(sub) for sub in policy]

    def apply(self, columns: tuple, rng: np.random.Generator) -> tuple:
        for op, prob in self.policy[rng.integers(len(self.policy))]:
            if rng.random() < prob:
                columns = call_operation(op, columns, rng)
        return columns


class AutoAugmentPolicy(enum.Enum):
    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


# (operation, probability, magnitude bin) pairs; None: the operation takes no magnitude.
_POLICIES = {
    AutoAugmentPolicy.IMAGENET: [
        (("Posterize", 0.4, 8), ("Rotate", 0.6, 9)),
        (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
        (("Posterize", 0.6, 7), ("Posterize", 0.6, 6)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)),
        (("Equalize", 0.4, None), ("Rotate", 0.8, 8)),
        (("Solarize", 0.6, 3), ("Equalize", 0.6, None)),
        (("Posterize", 0.8, 5), ("Equalize", 1.0, None)),
        (("Rotate", 0.2, 3), ("Solarize", 0.6, 8)),
        (("Equalize", 0.6, None), ("Posterize", 0.4, 6)),
        (("Rotate", 0.8, 8), ("Color", 0.4, 0)),
        (("Rotate", 0.4, 9), ("Equalize", 0.6, None)),
        (("Equalize", 0.0, None), ("Equalize", 0.8, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Rotate", 0.8, 8), ("Color", 1.0, 2)),
        (("Color", 0.8, 8), ("Solarize", 0.8, 7)),
        (("Sharpness", 0.4, 7), ("Invert", 0.6, None)),
        (("ShearX", 0.6, 5), ("Equalize", 1.0, None)),
        (("Color", 0.4, 0), ("Equalize", 0.6, None)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)),
        (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
    ],
    AutoAugmentPolicy.CIFAR10: [
        (("Invert", 0.1, None), ("Contrast", 0.2, 6)),
        (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
        (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)),
        (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.5, None), ("Equalize", 0.9, None)),
        (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
        (("Color", 0.4, 3), ("Brightness", 0.6, 7)),
        (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
        (("Equalize", 0.6, None), ("Equalize", 0.5, None)),
        (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
        (("Color", 0.7, 7), ("TranslateX", 0.5, 8)),
        (("Equalize", 0.3, None), ("AutoContrast", 0.4, None)),
        (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)),
        (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
        (("Solarize", 0.5, 2), ("Invert", 0.0, None)),
        (("Equalize", 0.2, None), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.2, None), ("Equalize", 0.6, None)),
        (("Color", 0.9, 9), ("Equalize", 0.6, None)),
        (("AutoContrast", 0.8, None), ("Solarize", 0.2, 8)),
        (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
        (("Solarize", 0.4, 5), ("AutoContrast", 0.9, None)),
        (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.9, None), ("Solarize", 0.8, 3)),
        (("Equalize", 0.8, None), ("Invert", 0.1, None)),
        (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, None)),
    ],
    AutoAugmentPolicy.SVHN: [
        (("ShearX", 0.9, 4), ("Invert", 0.2, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.6, None), ("Solarize", 0.6, 6)),
        (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("AutoContrast", 0.8, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.4, None)),
        (("ShearY", 0.9, 5), ("Solarize", 0.2, 6)),
        (("Invert", 0.9, None), ("AutoContrast", 0.8, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("Solarize", 0.3, 3)),
        (("ShearY", 0.8, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.9, None), ("TranslateY", 0.6, 6)),
        (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Contrast", 0.3, 3), ("Rotate", 0.8, 4)),
        (("Invert", 0.8, None), ("TranslateY", 0.0, 2)),
        (("ShearY", 0.7, 6), ("Solarize", 0.4, 8)),
        (("Invert", 0.6, None), ("Rotate", 0.8, 4)),
        (("ShearY", 0.3, 7), ("TranslateX", 0.9, 3)),
        (("ShearX", 0.1, 6), ("Invert", 0.6, None)),
        (("Solarize", 0.7, 2), ("TranslateY", 0.6, 7)),
        (("ShearY", 0.8, 4), ("Invert", 0.8, None)),
        (("ShearX", 0.7, 9), ("TranslateY", 0.8, 3)),
        (("ShearY", 0.8, 5), ("AutoContrast", 0.7, None)),
        (("ShearX", 0.7, 2), ("Invert", 0.1, None)),
    ],
}

_BINS = 10
_Apply = Callable[[np.ndarray, float, Inter, Fill], np.ndarray]


def _shear(axis: int) -> _Apply:
    def apply(image: np.ndarray, m: float, interp: Inter, fill: Fill) -> np.ndarray:
        shear = [0.0, 0.0]
        shear[axis] = math.degrees(math.atan(m))
        return affine(image, 0.0, (0, 0), 1.0, shear, interp, fill, center=(0, 0))
    return apply


def _translate(axis: int) -> _Apply:
    def apply(image: np.ndarray, m: float, interp: Inter, fill: Fill) -> np.ndarray:
        shift = [0, 0]
        shift[axis] = int(m)
        return affine(image, 0.0, shift, 1.0, (0.0, 0.0), interp, fill)
    return apply


def _colour(make: Callable[[float], ImageTransform]) -> _Apply:
    return lambda image, m, interp, fill: make(m).transform(image, None)


# name → (magnitudes by bin as a function of the image's (height, width), signed?, apply)
_OPERATIONS: dict[str, tuple[Callable[[int, int], np.ndarray], bool, _Apply]] = {
    "ShearX": (lambda h, w: np.linspace(0.0, 0.3, _BINS), True, _shear(0)),
    "ShearY": (lambda h, w: np.linspace(0.0, 0.3, _BINS), True, _shear(1)),
    "TranslateX": (lambda h, w: np.linspace(0.0, 150 / 331 * w, _BINS), True, _translate(0)),
    "TranslateY": (lambda h, w: np.linspace(0.0, 150 / 331 * h, _BINS), True, _translate(1)),
    "Rotate": (lambda h, w: np.linspace(0.0, 30.0, _BINS), True,
               lambda image, m, interp, fill: rotate(image, m, interp, False, None, fill)),
    "Brightness": (lambda h, w: np.linspace(0.0, 0.9, _BINS), True,
                   _colour(lambda m: AdjustBrightness(1 + m))),
    "Color": (lambda h, w: np.linspace(0.0, 0.9, _BINS), True,
              _colour(lambda m: AdjustSaturation(1 + m))),
    "Contrast": (lambda h, w: np.linspace(0.0, 0.9, _BINS), True,
                 _colour(lambda m: AdjustContrast(1 + m))),
    "Sharpness": (lambda h, w: np.linspace(0.0, 0.9, _BINS), True,
                  _colour(lambda m: AdjustSharpness(1 + m))),
    "Posterize": (lambda h, w: 8 - np.round(np.arange(_BINS) / ((_BINS - 1) / 4)), False,
                  _colour(lambda m: Posterize(int(m)))),
    "Solarize": (lambda h, w: np.linspace(255.0, 0.0, _BINS), False,
                 _colour(lambda m: Solarize(m))),
    "AutoContrast": (lambda h, w: np.zeros(_BINS), False, _colour(lambda m: AutoContrast())),
    "Equalize": (lambda h, w: np.zeros(_BINS), False, _colour(lambda m: Equalize())),
    "Invert": (lambda h, w: np.zeros(_BINS), False, _colour(lambda m: Invert())),
}


class AutoAugment(ImageTransform):
    """Apply a random sub-policy of a learned AutoAugment ``policy`` to a uint8 RGB or
    greyscale image: each of its two operations happens with its probability, at its
    magnitude, with a random sign for signed operations (shear, translate, rotate and the
    enhancements)."""

    def __init__(self, policy: AutoAugmentPolicy = AutoAugmentPolicy.IMAGENET,
                 interpolation: Inter = Inter.NEAREST, fill_value: Fill = 0) -> None:
        self.policy, self.interpolation, self.fill_value = policy, interpolation, fill_value

    def transform(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        table = _POLICIES[self.policy]
        for name, prob, level in table[rng.integers(len(table))]:
            happens, negative = rng.random() <= prob, rng.random() < 0.5
            if not happens:
                continue
            magnitudes, signed, apply = _OPERATIONS[name]
            m = 0.0 if level is None else float(magnitudes(*image.shape[:2])[level])
            image = apply(image, -m if signed and negative else m, self.interpolation,
                          self.fill_value)
        return image

