"""``mskernel.dataset.vision``: image transforms (MindSpore's ``mindspore.dataset.vision``
names).  Images are HWC (or HW) NumPy arrays; Pillow images are accepted as input.

Use them in ``map`` — ``ds.map([vision.Decode(), vision.RandomCrop(224), vision.HWC2CHW()],
input_columns="image")`` — or call them directly on an image.
"""

from .autoaugment import AutoAugment, AutoAugmentPolicy, RandomSelectSubpolicy
from .color import (
    AdjustBrightness, AdjustContrast, AdjustSaturation, AdjustSharpness, AutoContrast,
    Equalize, Invert, Posterize, Solarize,
)
from .conversion import Decode, Normalize, Rescale, ToTensor
from .geometry import (
    CHW2HWC, HWC2CHW, Affine, CenterCrop, Pad, RandomCrop, RandomHorizontalFlip,
    RandomResizedCrop, RandomRotation, RandomVerticalFlip, Resize, Rotate,
)
from .image import Border, ImageTransform, Inter

__all__ = [
    "AdjustBrightness", "AdjustContrast", "AdjustSaturation", "AdjustSharpness", "Affine",
    "AutoAugment", "AutoAugmentPolicy", "AutoContrast", "Border", "CHW2HWC", "CenterCrop",
    "Decode", "Equalize", "HWC2CHW", "ImageTransform", "Inter", "Invert", "Normalize", "Pad",
    "Posterize", "RandomCrop", "RandomHorizontalFlip", "RandomResizedCrop", "RandomRotation",
    "RandomSelectSubpolicy", "RandomVerticalFlip", "Rescale", "Resize", "Rotate", "Solarize",
    "ToTensor",
]
