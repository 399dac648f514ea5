"""A MindRecord schema: the fields of a row, each a scalar (``int32``, ``int64``,
``float32``, ``float64``, ``string``), a ``bytes`` value, or a NumPy array of a numeric type
with a ``shape`` (one dimension may be -1).

Scalars are *raw* fields, stored together per row (MessagePack, in raw pages); ``bytes`` and
arrays are *blob* fields, stored as bytes (in blob pages).  The file names the fields in
code-point order, and so does everything that lists them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ..errors import DatasetError

SCALAR_TYPES = ("int32", "int64", "float32", "float64", "string", "bytes")
ARRAY_TYPES = ("int32", "int64", "float32", "float64")
#: Scalar types a field can be indexed by (in the ``.db`` index), and their SQL types.
SQL_TYPES = {"int32": "INTEGER", "int64": "INTEGER", "float32": "REAL", "float64": "REAL",
             "string": "TEXT"}
_NAME = re.compile(r"^[0-9a-zA-Z_]+$")


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    shape: Optional[tuple[int, ...]] = None

    @property
    def is_blob(self) -> bool:
        return self.type == "bytes" or self.shape is not None

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.type)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.shape is not None:
            out["shape"] = list(self.shape)
        return out


class Schema:
    """The validated fields of a schema, with its description."""

    def __init__(self, content: Mapping[str, Any], desc: Optional[str] = None) -> None:
        if not isinstance(content, Mapping) or not content:
            raise DatasetError(f"a MindRecord schema is a non-empty dict of field name → "
                               f"{{'type': ...}}, got {content!r}")
        self.fields = {name: _field(name, spec) for name, spec in sorted(content.items())}
        self.desc = "" if desc is None else str(desc)

    @property
    def blob_fields(self) -> list[str]:
        return [f.name for f in self.fields.values() if f.is_blob]

    @property
    def raw_fields(self) -> list[str]:
        return [f.name for f in self.fields.values() if not f.is_blob]

    @property
    def compresses_integers(self) -> bool:
        """Whether integer array fields are stored compressed (MindSpore compresses them
        whenever the schema has one)."""
        return any(f.shape is not None and f.type in ("int32", "int64")
                   for f in self.fields.values())

    def default_index_fields(self) -> list[str]:
        """The fields indexed when ``add_index`` was not called: every scalar but bytes."""
        return [f.name for f in self.fields.values() if not f.is_blob]

    def check_index_fields(self, names: Sequence[str]) -> list[str]:
        if not isinstance(names, (list, tuple)) or not names:
            raise DatasetError(f"index fields are a non-empty list of field names, got "
                               f"{names!r}")
        for name in names:
            field = self.fields.get(name) if isinstance(name, str) else None
            if field is None:
                raise DatasetError(f"index field {name!r} is not in the schema "
                                   f"({', '.join(self.fields)})")
            if field.is_blob:
                raise DatasetError(f"index field {name!r} is a {field.type} "
                                   f"{'array' if field.shape else 'value'}; only scalar "
                                   "int, float and string fields can be indexed")
        if len(set(names)) != len(names):
            raise DatasetError(f"index fields repeat a name: {list(names)}")
        return list(names)

    def as_json(self) -> dict[str, Any]:
        return {"blob_fields": self.blob_fields, "desc": self.desc,
                "schema": {name: f.as_json() for name, f in self.fields.items()}}

    @classmethod
    def from_json(cls, value: Any, where: str) -> "Schema":
        """The schema a file's header holds (its ``blob_fields`` must agree)."""
        if not isinstance(value, dict) or not isinstance(value.get("schema"), dict):
            raise DatasetError(f"{where}: the schema is not a JSON object with a 'schema'")
        schema = cls(value["schema"], value.get("desc") or "")
        if value.get("blob_fields") != schema.blob_fields:
            raise DatasetError(f"{where}: the schema's blob_fields {value.get('blob_fields')} "
                               f"do not match its fields (expected {schema.blob_fields})")
        return schema


def _field(name: Any, spec: Any) -> Field:
    if not isinstance(name, str) or not _NAME.match(name):
        raise DatasetError(f"MindRecord field name {name!r} must be made of 0-9, a-z, A-Z "
                           "and _")
    if not isinstance(spec, Mapping) or "type" not in spec or set(spec) - {"type", "shape"}:
        raise DatasetError(f"field {name!r}: a field is {{'type': ...}} or {{'type': ..., "
                           f"'shape': [...]}}, got {spec!r}")
    kind = spec["type"]
    if "shape" not in spec:
        if kind not in SCALAR_TYPES:
            raise DatasetError(f"field {name!r}: type {kind!r} is not one of "
                               f"{', '.join(SCALAR_TYPES)}")
        return Field(name, kind)
    if kind not in ARRAY_TYPES:
        raise DatasetError(f"field {name!r}: an array field's type is one of "
                           f"{', '.join(ARRAY_TYPES)}, got {kind!r}")
    shape = spec["shape"]
    if not isinstance(shape, (list, tuple)) or not shape or not all(
            isinstance(d, int) and not isinstance(d, bool) and (d > 0 or d == -1)
            for d in shape) or list(shape).count(-1) > 1:
        raise DatasetError(f"field {name!r}: shape must be a non-empty list of positive "
                           f"sizes with at most one -1, got {shape!r}")
    return Field(name, kind, tuple(shape))
