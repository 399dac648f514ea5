"""Reading ONNX protos without trusting them: model files, tensors and attributes.

An ONNX file is parsed by protobuf, which allocates no more than the file holds.  What a file
*claims* is checked before it is believed:

- a model file (or a model given as bytes) is limited to :data:`MAX_MODEL_BYTES`, parsed by
  protobuf only (no pickle, no code), and a parse failure is a :class:`OnnxFileError`
  naming the file;
- a tensor's dims must be non-negative and describe at most :data:`MAX_TENSOR_BYTES`; the
  bytes it holds (``raw_data`` or a typed field) must match its dims exactly — a forged dim
  never sizes an allocation;
- external data is read only from a regular file inside the model's directory (no absolute
  path, no ``..``, no symbolic link leading out), between an offset and a length that lie
  inside that file and match the tensor's dims.

Element types map onto mskernel dtypes through NumPy (:func:`element_dtype`); a type mskernel
does not have (strings, 8-, 4- and 2-bit floats and integers) is an error naming it.
"""

from __future__ import annotations

import math
import os
import stat
from typing import Any, Optional, Union

import ml_dtypes
import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from mskernel_sdk import DType, as_storage, dtype as to_dtype

from .errors import OnnxFileError

#: The largest model file (or serialized model) read: protobuf's own limit.
MAX_MODEL_BYTES = 2**31 - 1
#: The largest tensor a file may declare (dims × element size), in memory or external.
MAX_TENSOR_BYTES = 2**34

PathLike = Union[str, "os.PathLike[str]"]


def element_name(elem_type: int) -> str:
    """``FLOAT``, ``INT64`` ... for an ONNX element type (``#N`` when ONNX has no such type)."""
    try:
        return TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"#{elem_type}"


def element_dtype(elem_type: int) -> DType:
    """The mskernel dtype of an ONNX element type; raise :class:`OnnxFileError` when there is
    none."""
    try:
        return to_dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, TypeError, ValueError):
        raise OnnxFileError(
            f"ONNX element type {element_name(elem_type)} has no mskernel dtype (mskernel has "
            "bool, int8-64, uint8-64, float16, bfloat16, float32, float64, complex64, "
            "complex128)") from None


def onnx_element_type(dt: DType) -> int:
    """The ONNX element type of an mskernel dtype."""
    if dt.name == "bfloat16":
        return TensorProto.BFLOAT16
    return helper.np_dtype_to_tensor_dtype(dt.storage)


def to_storage(array: Any, dt: DType) -> np.ndarray:
    """A NumPy array as ONNX gives it (ml_dtypes' bfloat16 included) in mskernel's reference
    storage of ``dt``."""
    array = np.asarray(array)
    if array.dtype == ml_dtypes.bfloat16:
        array = array.astype(np.float32)
    return as_storage(array, dt)


def from_storage(array: np.ndarray, dt: DType) -> np.ndarray:
    """The NumPy array ONNX expects for a value of ``dt`` held in reference storage."""
    if dt.name == "bfloat16":
        return np.asarray(array, np.float32).astype(ml_dtypes.bfloat16)
    return np.asarray(array)


# --- models ------------------------------------------------------------------------------------


def read_model(source: Union[onnx.ModelProto, bytes, PathLike]) -> tuple[onnx.ModelProto,
                                                                          Optional[str]]:
    """The model and the directory its external data is read from (``None`` for a model given
    in memory: such a model may not name external data)."""
    if isinstance(source, onnx.ModelProto):
        return source, None
    if isinstance(source, (bytes, bytearray, memoryview)):
        return parse_model(bytes(source), "<bytes>"), None
    path = os.fspath(source)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_MODEL_BYTES:
                raise OnnxFileError(f"{path}: {size} bytes is larger than an ONNX model can be "
                                    f"({MAX_MODEL_BYTES} bytes)")
            data = f.read()
    except OSError as exc:
        raise OnnxFileError(f"{path}: cannot read the model: {exc.strerror or exc}") from exc
    return parse_model(data, path), os.path.dirname(os.path.abspath(path))


def parse_model(data: bytes, where: str) -> onnx.ModelProto:
    if len(data) > MAX_MODEL_BYTES:
        raise OnnxFileError(f"{where}: {len(data)} bytes is larger than an ONNX model can be")
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as exc:  # protobuf's DecodeError, or RecursionError on deep nesting
        raise OnnxFileError(f"{where}: not a valid ONNX model (the protobuf does not parse: "
                            f"{type(exc).__name__}: {exc})") from None
    if not model.HasField("graph"):
        raise OnnxFileError(f"{where}: not an ONNX model: it has no graph")
    return model


# --- tensors -----------------------------------------------------------------------------------


def tensor_array(tensor: TensorProto, base_dir: Optional[str], what: str) -> np.ndarray:
    """The array a tensor holds, in mskernel's reference storage, after checking its dims,
    its byte count and, for external data, where it is read from."""
    dt = element_dtype(tensor.data_type) if tensor.data_type else _missing_type(what)
    dims = tuple(int(d) for d in tensor.dims)
    if any(d < 0 for d in dims):
        raise OnnxFileError(f"{what}: negative dimension in dims {list(dims)}")
    itemsize = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize
    nbytes = math.prod(dims) * itemsize
    if nbytes > MAX_TENSOR_BYTES:
        raise OnnxFileError(f"{what}: dims {list(dims)} describe {nbytes} bytes, more than the "
                            f"{MAX_TENSOR_BYTES} a tensor may hold")
    if tensor.data_location == TensorProto.EXTERNAL:
        raw = read_external(tensor, base_dir, nbytes, what)
        tensor = TensorProto(data_type=tensor.data_type, dims=dims, raw_data=raw)
    elif tensor.HasField("raw_data") and len(tensor.raw_data) != nbytes:
        raise OnnxFileError(f"{what}: holds {len(tensor.raw_data)} bytes of raw data, but dims "
                            f"{list(dims)} of {element_name(tensor.data_type)} need {nbytes}")
    try:
        array = numpy_helper.to_array(tensor)
    except Exception as exc:  # a typed field whose length does not match the dims
        raise OnnxFileError(f"{what}: its data does not match dims {list(dims)} of "
                            f"{element_name(tensor.data_type)} ({exc})") from None
    return to_storage(array.reshape(dims), dt)


def _missing_type(what: str) -> DType:
    raise OnnxFileError(f"{what}: the tensor has no element type")


def read_external(tensor: TensorProto, base_dir: Optional[str], nbytes: int, what: str) -> bytes:
    """The bytes of an external tensor: exactly ``nbytes`` from a regular file inside
    ``base_dir``."""
    info = {entry.key: entry.value for entry in tensor.external_data}
    location = info.get("location", "")
    if base_dir is None:
        raise OnnxFileError(f"{what}: the tensor's data is in an external file ({location!r}), "
                            "but the model was not read from a file; load it by path")
    if not location or os.path.isabs(location) or ".." in location.replace("\\", "/").split("/"):
        raise OnnxFileError(f"{what}: external data location {location!r} is not a relative "
                            "path inside the model's directory")
    root = os.path.realpath(base_dir)
    path = os.path.realpath(os.path.join(root, location))
    if os.path.commonpath([root, path]) != root:
        raise OnnxFileError(f"{what}: external data location {location!r} leads outside the "
                            f"model's directory {base_dir}")
    try:
        offset = int(info.get("offset", "0"))
        length = int(info["length"]) if "length" in info else nbytes
    except ValueError:
        raise OnnxFileError(f"{what}: external data offset/length are not integers") from None
    if offset < 0 or length != nbytes:
        raise OnnxFileError(f"{what}: external data at offset {offset} of length {length} "
                            f"does not hold the {nbytes} bytes its dims need")
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise OnnxFileError(f"{what}: external data {location!r} is not a regular file")
            if offset + length > st.st_size:
                raise OnnxFileError(f"{what}: external data {location!r} has {st.st_size} bytes; "
                                    f"the tensor needs bytes {offset}..{offset + length}")
            f.seek(offset)
            data = f.read(length)
    except OSError as exc:
        raise OnnxFileError(f"{what}: cannot read external data {location!r}: "
                            f"{exc.strerror or exc}") from exc
    if len(data) != length:
        raise OnnxFileError(f"{what}: external data {location!r} ended early")
    return data


# --- attributes --------------------------------------------------------------------------------


def attribute_value(attr: AttributeProto, base_dir: Optional[str], what: str) -> Any:
    """An attribute as plain Python data: ints, floats and strings (``str``), tuples of them,
    arrays for tensors; graphs stay ``GraphProto``."""
    kind = attr.type
    if kind == AttributeProto.TENSOR:
        return tensor_array(attr.t, base_dir, f"{what} attribute '{attr.name}'")
    if kind == AttributeProto.TENSORS:
        return tuple(tensor_array(t, base_dir, f"{what} attribute '{attr.name}'")
                     for t in attr.tensors)
    if kind == AttributeProto.SPARSE_TENSOR:
        raise OnnxFileError(f"{what} attribute '{attr.name}': sparse tensors are not supported")
    value = helper.get_attribute_value(attr)
    if kind == AttributeProto.STRING:
        return value.decode("utf-8", "replace")
    if kind == AttributeProto.STRINGS:
        return tuple(v.decode("utf-8", "replace") for v in value)
    if kind in (AttributeProto.INTS, AttributeProto.FLOATS, AttributeProto.GRAPHS):
        return tuple(value)
    return value
