"""``mskernel.dataset``: the public names of mskernel-data (MindSpore's
``mindspore.dataset`` names)::

    import mskernel
    from mskernel.dataset import MnistDataset, vision, transforms

    ds = MnistDataset("/data/fashion-mnist", usage="train")
    ds = ds.map([vision.RandomCrop(28, padding=4), vision.Rescale(1 / 255, 0),
                 vision.HWC2CHW()], input_columns="image",
                num_parallel_workers=4, python_multiprocessing=True)
    ds = ds.map(transforms.TypeCast(mskernel.int32), input_columns="label")
    ds = ds.shuffle(1000).batch(64, drop_remainder=True)
    for image, label in ds.create_tuple_iterator(num_epochs=1):
        ...

``vision``, ``text`` and ``transforms`` hold the transforms (and import as modules:
``import mskernel.dataset.text as text``), ``config`` the seed and worker settings.
"""

from . import config, text, transforms, vision
from .csv_source import CSVDataset
from .dataset import Dataset
from .errors import DatasetError
from .generator import GeneratorDataset
from .image_folder import ImageFolderDataset
from .iterators import DictIterator, TupleIterator
from .mind_dataset import MindDataset
from .mnist import MnistDataset
from .numpy_slices import NumpySlicesDataset
from .samplers import (
    DistributedSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
    SubsetSampler, WeightedRandomSampler,
)
from .source import MappableSource, Shuffle


def zip(datasets):  # noqa: A001 - MindSpore's name
    """Rows of ``datasets`` side by side (see :meth:`Dataset.zip`)."""
    first, *others = datasets
    return first.zip(others)


__all__ = [
    "CSVDataset", "Dataset", "DatasetError", "DictIterator", "DistributedSampler",
    "GeneratorDataset", "ImageFolderDataset", "MappableSource", "MindDataset", "MnistDataset",
    "NumpySlicesDataset", "RandomSampler", "Sampler", "SequentialSampler", "Shuffle",
    "SubsetRandomSampler", "SubsetSampler", "TupleIterator", "WeightedRandomSampler", "config",
    "text", "transforms", "vision", "zip",
]
