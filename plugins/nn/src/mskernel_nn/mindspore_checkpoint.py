"""MindSpore's checkpoint files: the ``.ckpt`` files ``mindspore.save_checkpoint`` writes,
read and written.

A file is a run of serialized ``Checkpoint`` messages of MindSpore's ``checkpoint.proto``
(``mindspore/ccsrc/utils/checkpoint.proto``), which protobuf reads as one message::

    message Checkpoint {
        message Value {
            required string tag = 1;
            oneof value { TensorProto tensor = 2; MapTensorProto maptensor = 3; }
        }
        repeated Value value = 1;
    }
    message TensorProto {
        repeated int64 dims = 1;           // [] for a scalar; [0] for a string or legacy scalar
        required string tensor_type = 2;   // "Float32", "Int64", "Bool", "BFloat16", "str", ...
        required bytes tensor_content = 3; // the data, little-endian, C order
    }
    message MapTensorProto { repeated TensorProto tensor = 1; }

A tensor larger than 512 MiB is written as several consecutive values with the same tag,
each holding a slice of the bytes; they are joined when read.  With ``crc_check`` the file
ends in ``b"crc_num"`` and the CRC-32 of everything before it (10 bytes, big-endian).

The message classes are built here from a descriptor written in Python (the ``.proto``
above, field for field), so no generated code and no ``protoc`` are needed.  Reading walks
the values one at a time: each length is checked against the bytes left before the value
is parsed, each tensor's dims against the bytes it holds, so a forged size is an error, not
an allocation; nothing in the file is executed.
"""

from __future__ import annotations

import binascii
import itertools
import math
import warnings
from typing import Any, Iterator, Mapping, Union

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError
from mskernel import (
    bfloat16, bool_, float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32,
    uint64,
)
from mskernel_sdk import (
    DType, FileFormatError, bfloat16_from_bits, bfloat16_to_bits, write_atomically,
)

#: tensor_type strings of MindSpore's checkpoints and the dtypes they hold.
TENSOR_TYPES: dict[str, DType] = {
    "Bool": bool_, "Int8": int8, "Int16": int16, "Int32": int32, "Int64": int64, "UInt8": uint8,
    "UInt16": uint16, "UInt32": uint32, "UInt64": uint64, "Float16": float16,
    "BFloat16": bfloat16, "Float32": float32, "Float64": float64,
}
_TYPE_NAMES = {dt: name for name, dt in TENSOR_TYPES.items()}
#: MindSpore's slice size: tensors are written in chunks of at most this many bytes.
SLICE_BYTES = 512 * 1024 * 1024
_CRC_MARK = b"crc_num"
_CRC_TAIL = len(_CRC_MARK) + 10


def _message_classes() -> tuple[Any, Any]:
    """``Checkpoint`` and ``Checkpoint.Value`` of MindSpore's ``checkpoint.proto``."""
    field = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="mindspore/checkpoint.proto",
                                               syntax="proto2")
    tensor = proto.message_type.add(name="TensorProto")
    tensor.field.add(name="dims", number=1, label=field.LABEL_REPEATED, type=field.TYPE_INT64)
    tensor.field.add(name="tensor_type", number=2, label=field.LABEL_REQUIRED,
                     type=field.TYPE_STRING)
    tensor.field.add(name="tensor_content", number=3, label=field.LABEL_REQUIRED,
                     type=field.TYPE_BYTES)
    map_tensor = proto.message_type.add(name="MapTensorProto")
    map_tensor.field.add(name="tensor", number=1, label=field.LABEL_REPEATED,
                         type=field.TYPE_MESSAGE, type_name=".TensorProto")
    checkpoint = proto.message_type.add(name="Checkpoint")
    value = checkpoint.nested_type.add(name="Value")
    value.oneof_decl.add(name="value")
    value.field.add(name="tag", number=1, label=field.LABEL_REQUIRED, type=field.TYPE_STRING)
    value.field.add(name="tensor", number=2, label=field.LABEL_OPTIONAL,
                    type=field.TYPE_MESSAGE, type_name=".TensorProto", oneof_index=0)
    value.field.add(name="maptensor", number=3, label=field.LABEL_OPTIONAL,
                    type=field.TYPE_MESSAGE, type_name=".MapTensorProto", oneof_index=0)
    checkpoint.field.add(name="value", number=1, label=field.LABEL_REPEATED,
                         type=field.TYPE_MESSAGE, type_name=".Checkpoint.Value")
    pool = descriptor_pool.DescriptorPool()  # private: no clash with MindSpore's own classes
    pool.Add(proto)
    return (message_factory.GetMessageClass(pool.FindMessageTypeByName("Checkpoint")),
            message_factory.GetMessageClass(pool.FindMessageTypeByName("Checkpoint.Value")))


Checkpoint, CheckpointValue = _message_classes()


# -- reading ------------------------------------------------------------------------------------


def read_checkpoint(path: str, crc_check: bool = False
                    ) -> tuple[dict[str, np.ndarray], dict[str, DType], dict[str, str]]:
    """The tensors (reference storage and dtype) and strings of MindSpore checkpoint
    ``path``.  A file with a CRC is always checked; ``crc_check`` also warns when a file has
    none.  Map parameters (MindSpore's hash-table embeddings) are skipped with a warning."""
    with open(path, "rb") as f:
        data = f.read()
    body = _checked_body(data, path, crc_check)
    tensors: dict[str, np.ndarray] = {}
    types: dict[str, DType] = {}
    strings: dict[str, str] = {}
    skipped = []
    for tag, group in itertools.groupby(_values(body, path), key=lambda v: v[1].tag):
        parts = list(group)
        if tag in tensors or tag in strings:
            raise FileFormatError(f"{path}: {tag!r} appears twice, apart")
        kinds = {v.WhichOneof("value") for _, v in parts}
        if kinds == {"maptensor"}:
            skipped.append(tag)
            continue
        if kinds != {"tensor"}:
            raise FileFormatError(f"{path}: entry {tag!r} (at byte {parts[0][0]}) holds no "
                                  "tensor")
        value = _tensor(tag, [v.tensor for _, v in parts], path)
        if isinstance(value, str):
            strings[tag] = value
        elif value is not None:
            tensors[tag], types[tag] = value
    if skipped:
        warnings.warn(f"{path}: map parameters are not supported and were not loaded: "
                      f"{', '.join(skipped)}", stacklevel=3)
    return tensors, types, strings


def _checked_body(data: bytes, path: str, crc_check: bool) -> bytes:
    if len(data) >= _CRC_TAIL and data[-_CRC_TAIL:-10] == _CRC_MARK:
        body = data[:-_CRC_TAIL]
        stored, actual = int.from_bytes(data[-10:], "big"), binascii.crc32(body)
        if stored != actual:
            raise FileFormatError(f"{path}: the checkpoint is damaged: its CRC-32 is "
                                  f"{stored:#010x} but its contents give {actual:#010x}")
        return body
    if crc_check:
        warnings.warn(f"{path} has no CRC to check (it was saved without crc_check)",
                      stacklevel=4)
    return data


def _values(body: bytes, path: str) -> Iterator[tuple[int, Any]]:
    """(offset, ``Checkpoint.Value``) for each value, parsed one at a time."""
    at = 0
    while at < len(body):
        start = at
        key, at = _varint(body, at, path)
        if key != 0x0A:  # field 1, length-delimited: Checkpoint.value
            raise FileFormatError(f"{path} is not an mskernel checkpoint nor a MindSpore one: "
                                  f"byte {start} starts protobuf field {key >> 3} of wire "
                                  f"type {key & 7}, where a Checkpoint holds only field 1")
        length, at = _varint(body, at, path)
        if length > len(body) - at:
            raise FileFormatError(f"{path}: the checkpoint is truncated or damaged: the entry "
                                  f"at byte {start} declares {length} bytes, {len(body) - at} "
                                  "are left")
        try:
            value = CheckpointValue.FromString(body[at:at + length])
        except DecodeError as exc:
            raise FileFormatError(f"{path}: the entry at byte {start} is damaged: "
                                  f"{exc}") from exc
        if not value.HasField("tag"):
            raise FileFormatError(f"{path}: the entry at byte {start} has no name")
        yield start, value
        at += length


def _varint(data: bytes, at: int, path: str) -> tuple[int, int]:
    value = 0
    for shift in range(0, 70, 7):
        if at >= len(data):
            raise FileFormatError(f"{path}: the checkpoint is truncated inside a length")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
    raise FileFormatError(f"{path}: the checkpoint holds an over-long varint at byte {at}")


def _tensor(tag: str, slices: list[Any], path: str) -> Any:
    """The value of one entry: (array, dtype), a string, or None for MindSpore's RNG state."""
    first = slices[0]
    if not all(s.HasField("tensor_type") and s.HasField("tensor_content") for s in slices):
        raise FileFormatError(f"{path}: tensor {tag!r} lacks its type or contents")
    if any(s.tensor_type != first.tensor_type or list(s.dims) != list(first.dims)
           for s in slices):
        raise FileFormatError(f"{path}: the slices of {tag!r} disagree on type or shape")
    kind, dims = first.tensor_type, list(first.dims)
    content = b"".join(s.tensor_content for s in slices)
    if kind == "random_op":  # MindSpore's graph RNG state: nothing to load here
        return None
    if kind == "str":
        return _string(tag, content, path)
    dtype = TENSOR_TYPES.get(kind)
    if dtype is None:
        raise FileFormatError(f"{path}: tensor {tag!r} has type {kind!r}; the types read are "
                              f"{', '.join(TENSOR_TYPES)} and str")
    if any(d < 0 for d in dims):
        raise FileFormatError(f"{path}: tensor {tag!r} has negative dims {dims}")
    itemsize = 1 if dtype is bool_ else dtype.itemsize
    count = len(content) // itemsize
    if dims == [0] and count == 1:  # MindSpore's legacy scalar
        dims = []
    if len(content) % itemsize or count != math.prod(dims):
        raise FileFormatError(f"{path}: tensor {tag!r} of {kind} and shape {dims} needs "
                              f"{math.prod(dims) * itemsize} bytes but holds {len(content)}")
    return _array(content, dtype, dims), dtype


def _array(content: bytes, dtype: DType, dims: list[int]) -> np.ndarray:
    if dtype is bfloat16:
        flat = bfloat16_from_bits(np.frombuffer(content, "<u2"))
    elif dtype is bool_:
        flat = np.frombuffer(content, np.uint8) != 0
    else:
        flat = np.frombuffer(content, dtype.storage.newbyteorder("<")).astype(dtype.storage)
    return flat.reshape(dims)


def _string(tag: str, content: bytes, path: str) -> str:
    """A string entry: NumPy's UTF-32 of the string (``np.array(s).tobytes()``)."""
    if len(content) % 4:
        raise FileFormatError(f"{path}: string {tag!r} holds {len(content)} bytes, not UTF-32")
    try:
        return content.decode("utf-32-le").rstrip("\0")
    except UnicodeDecodeError as exc:
        raise FileFormatError(f"{path}: string {tag!r} is not valid UTF-32: {exc}") from exc


# -- writing ------------------------------------------------------------------------------------


def write_checkpoint(path: str, entries: Mapping[str, Union[str, tuple[np.ndarray, DType]]],
                     crc_check: bool = False) -> None:
    """Write a MindSpore checkpoint as ``mindspore.save_checkpoint`` does, atomically
    (:func:`mskernel_sdk.write_atomically`).  ``entries`` are, in order, tensors as
    (reference storage, dtype) and strings.  An empty tensor is left out with a warning, as
    MindSpore's writer leaves it out (and its reader fails on some)."""
    for name, entry in entries.items():
        if not isinstance(entry, str):
            _type_name(name, entry[1])
    empty = [name for name, entry in entries.items() if not isinstance(entry, str)
             and entry[0].size == 0]
    if empty:
        warnings.warn(f"{path}: empty tensors are left out of a MindSpore checkpoint: "
                      f"{', '.join(empty)}", stacklevel=3)
    chunks = list(_serialized(entries))
    if crc_check:
        crc = 0
        for chunk in chunks:
            crc = binascii.crc32(chunk, crc)
        chunks.append(_CRC_MARK + crc.to_bytes(10, "big"))
    write_atomically(path, chunks)


def _serialized(entries: Mapping[str, Union[str, tuple[np.ndarray, DType]]]) -> Iterator[bytes]:
    """The serialized values, a tensor's bytes in slices of at most :data:`SLICE_BYTES`."""
    for name, entry in entries.items():
        if isinstance(entry, str):
            yield _entry(name, [0], "str", np.array(entry, dtype="<U").tobytes())
            continue
        array, dtype = entry
        content = _content(array, dtype)
        for at in range(0, len(content), SLICE_BYTES):
            yield _entry(name, list(array.shape), _type_name(name, dtype),
                         content[at:at + SLICE_BYTES])


def _type_name(name: str, dtype: DType) -> str:
    if dtype not in _TYPE_NAMES:
        raise ValueError(f"{name!r} is {dtype.name}; MindSpore's checkpoints hold "
                         f"{', '.join(dt.name for dt in _TYPE_NAMES)}")
    return _TYPE_NAMES[dtype]


def _content(array: np.ndarray, dtype: DType) -> bytes:
    if dtype is bfloat16:
        return bfloat16_to_bits(array).astype("<u2").tobytes()
    return np.ascontiguousarray(array, dtype.storage.newbyteorder("<")).tobytes()


def _entry(name: str, dims: list[int], kind: str, content: bytes) -> bytes:
    message = Checkpoint()
    value = message.value.add(tag=name)
    value.tensor.dims.extend(dims)
    value.tensor.tensor_type = kind
    value.tensor.tensor_content = content
    return message.SerializeToString()
