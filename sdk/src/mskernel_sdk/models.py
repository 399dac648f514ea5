"""Reading model files of any registered format (exported by :mod:`mskernel_sdk`)."""

from __future__ import annotations

import os
from typing import Union

from mskernel.hooks.host import host
from mskernel.ir.fileformat import Model


def read_model(path: Union[str, "os.PathLike[str]"]) -> Model:
    """The model in the file at ``path``, read by the reader of its format (mskernel's own
    model file, or a format a plugin registered with ``mskernel_register_model_readers``);
    a file of no known format is a :class:`~mskernel.errors.FileFormatError`."""
    model: Model = host().model_readers.read(path)
    return model
