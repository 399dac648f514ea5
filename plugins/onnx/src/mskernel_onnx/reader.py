"""The ``onnx`` model-file format of ``mskernel.load``, ``mskernel convert`` and
``mskernel explain``: an ``.onnx`` file read as an :class:`mskernel.ir.Model`."""

from __future__ import annotations

from mskernel_sdk import FileFormatError, Model

from .errors import OnnxFileError, OnnxImportError
from .importer import import_model
from .protos import read_model


def read_onnx(path: str) -> Model:
    """The model in the ONNX file at ``path``: its graph takes the model's inputs, then its
    floating-point initializers as weights under their names.  A model the file alone does
    not make static (a dim without a value, an input that decides a shape) or that holds an
    op mskernel cannot translate is a :class:`FileFormatError` saying so; import such a
    model with :func:`mskernel_onnx.importer.import_model` and its ``input_types`` /
    ``static_inputs``."""
    proto, directory = read_model(path)
    try:
        imported = import_model(proto, base_dir=directory)
    except OnnxFileError:
        raise
    except OnnxImportError as exc:
        raise FileFormatError(f"{path}: cannot be read as an mskernel graph: {exc}") from exc
    return Model(graph=imported.graph, weights=dict(imported.weights),
                 format_version=proto.ir_version,
                 producer=" ".join(filter(None, (proto.producer_name, proto.producer_version))),
                 requires={}, weight_dtypes=imported.weight_dtypes())
