"""``mskernel.export`` and ``mskernel.load``: MindSpore's model export.

    mskernel.export(net, x, file_name="lenet")                      # lenet.mindir
    mskernel.export(net, x, file_name="lenet", file_format="ONNX")  # lenet.onnx
    graph = mskernel.load("lenet.mindir")
    out = nn.GraphCell(graph)(x)                                    # no Python model needed

``export`` traces the network at the example inputs in inference mode (see
:mod:`mskernel_onnx.capture`) and writes the graph with its parameters as weights, named by
their Cell path: ``"MINDIR"`` is mskernel's model file (no pickle; it records the plugin
distributions whose ops the graph uses), ``"ONNX"`` an ONNX model (opset 18 unless
``opset=`` says otherwise).  The suffix is added as MindSpore adds it when ``file_name`` lacks
it.  ``load`` reads a model file of any format an installed plugin reads and returns a
:class:`mskernel.ir.Model`: the graph, whose inputs are the call's tensors then the weights,
and the weights by name.
"""

from __future__ import annotations

import os
from typing import Any, Union

from mskernel_sdk import Model, read_model, save_model

from .capture import capture
from .export import DEFAULT_OPSET, save_onnx, to_onnx

#: file_format → the suffix MindSpore gives its files
SUFFIXES = {"MINDIR": ".mindir", "ONNX": ".onnx"}

PathLike = Union[str, "os.PathLike[str]"]


def export(net: Any, *inputs: Any, file_name: PathLike, file_format: str = "MINDIR",
           opset: int = DEFAULT_OPSET) -> str:
    """Write ``net`` (a Cell, a jitted or a plain function) traced at ``inputs`` to
    ``file_name`` (suffix added when missing) as ``file_format`` ``"MINDIR"`` or ``"ONNX"``
    (at ``opset``); return the path written."""
    fmt = str(file_format).upper()
    if fmt not in SUFFIXES:
        raise ValueError(f"export: file_format must be one of {', '.join(SUFFIXES)}, got "
                         f"{file_format!r}")
    path = with_suffix(file_name, SUFFIXES[fmt])
    captured = capture(net, inputs)
    if fmt == "MINDIR":
        save_model(path, captured.graph, captured.weights, dtypes=captured.weight_dtypes)
    else:
        model = to_onnx(captured.graph, captured.weights, opset=opset,
                        weight_dtypes=captured.weight_dtypes,
                        doc=f"exported from {type(net).__name__} by mskernel")
        save_onnx(model, path)
    return path


def load(file_name: PathLike) -> Model:
    """The model in ``file_name`` (any format an installed plugin reads); run it with
    ``mskernel.nn.GraphCell``."""
    return read_model(file_name)


def with_suffix(file_name: PathLike, suffix: str) -> str:
    """``file_name`` ending in ``suffix`` (added unless it is there already, in any case)."""
    name = os.fspath(file_name)
    return name if name.lower().endswith(suffix) else name + suffix
