"""The errors of ONNX import.  Each message names the file, or the node, its op and opset."""

from __future__ import annotations

from typing import Sequence

from mskernel_sdk import FileFormatError, MskernelError


class OnnxFileError(FileFormatError):
    """An ONNX file is unreadable, truncated, corrupt or hostile (a forged size, external data
    outside the model's directory, an element type mskernel does not have)."""


class OnnxImportError(MskernelError):
    """A node of a valid ONNX model has no translation to mskernel, or its inputs and
    attributes break the op's rules; the message names the node, its op and its opset."""


class NeedsValue(OnnxImportError):
    """The graph's shape depends on the *values* of graph inputs (a ``Reshape`` whose shape is
    an input, ``NonZero`` ...).  :func:`~mskernel_onnx.importer.import_model` takes them as
    ``static_inputs``; the ONNX backend does so by itself, compiling once per value."""

    def __init__(self, message: str, inputs: Sequence[str]) -> None:
        super().__init__(message)
        self.inputs = tuple(inputs)
