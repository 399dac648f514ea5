"""The header of a MindRecord file: a little-endian uint64 length, then that many bytes of
JSON describing the schema, the index fields, the shard files and the pages.

Below the header (``header_size`` bytes from the start) come the pages, each
``page_size`` bytes apart, page ``i`` at ``header_size + i * page_size``; a page's JSON
``page_size`` is how much of it is used.  A blob page holds the blobs of one *row group*
(rows ``start_row_id`` to ``end_row_id`` of the file; its ``page_type_id`` is the group's
id); a raw page holds the raw rows of the groups it lists in ``row_group_ids`` as
``{id, offset}``.  Every row in a page is an 8-byte little-endian length and its bytes.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from typing import Any

from mskernel_sdk import FileFormatError

from .schema import Schema

VERSION = "3.0"
MIN_HEADER_SIZE, MAX_HEADER_SIZE = 1 << 14, 1 << 27
MIN_PAGE_SIZE, MAX_PAGE_SIZE = 1 << 15, 1 << 28
DEFAULT_HEADER_SIZE, DEFAULT_PAGE_SIZE = 1 << 24, 1 << 25
MAX_SHARDS = 1000
BLOB, RAW = "BLOB_DATA", "RAW_DATA"


@dataclass
class Page:
    page_id: int
    shard_id: int
    page_type: str
    page_type_id: int
    start_row_id: int
    end_row_id: int
    row_group_ids: list[tuple[int, int]] = field(default_factory=list)  # (group id, offset)
    page_size: int = 0

    def as_json(self) -> dict[str, Any]:
        groups = self.row_group_ids or [(0, 0)]  # as MindSpore writes a page without groups
        return {"end_row_id": self.end_row_id, "page_id": self.page_id,
                "page_size": self.page_size, "page_type": self.page_type,
                "page_type_id": self.page_type_id,
                "row_group_ids": [{"id": g, "offset": o} for g, o in groups],
                "shard_id": self.shard_id, "start_row_id": self.start_row_id}


@dataclass
class Header:
    """What a shard file's header says."""

    schema: Schema
    index_fields: list[str]
    shard_addresses: list[str]
    shard_id: int
    pages: list[Page]
    header_size: int = DEFAULT_HEADER_SIZE
    page_size: int = DEFAULT_PAGE_SIZE
    compression_size: int = 0

    def page_offset(self, page_id: int) -> int:
        return self.header_size + page_id * self.page_size

    def encode(self) -> bytes:
        """The header bytes: length and JSON, keys in MindSpore's order and spacing."""
        def dump(value: Any) -> str:
            return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

        index = [{"index_field": name, "schema_id": 0} for name in self.index_fields] or None
        text = (f'{{"header_size":{self.header_size},"index_fields":{dump(index)},'
                f'"page":{dump([p.as_json() for p in self.pages] or None)},'
                f'"page_size":{self.page_size},"compression_size":{self.compression_size},'
                f'"schema":{dump([self.schema.as_json()])},'
                f'"shard_addresses":{dump(self.shard_addresses)},"shard_id":{self.shard_id},'
                f'"statistics":null,"version":"{VERSION}"}}').encode("utf-8")
        if len(text) + 8 > self.header_size:
            raise FileFormatError(f"the MindRecord header needs {len(text) + 8} bytes but the "
                                  f"header size is {self.header_size}; call "
                                  "set_header_size with a larger size")
        return struct.pack("<Q", len(text)) + text


def read_header(data: Any, path: str) -> Header:
    """Parse and check the header of the file whose bytes are ``data`` (a buffer); every
    size and offset is checked against the file before it is trusted."""
    if len(data) < 8:
        raise FileFormatError(f"{path} is not a MindRecord file: it has {len(data)} bytes")
    (length,) = struct.unpack_from("<Q", data)
    if length > min(MAX_HEADER_SIZE, len(data) - 8):
        raise FileFormatError(f"{path} is not a MindRecord file (or is truncated): its first "
                              f"8 bytes declare a {length}-byte header in a "
                              f"{len(data)}-byte file")
    try:
        raw = json.loads(bytes(data[8:8 + length]).decode("utf-8"))
        header = _from_json(raw, path)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise FileFormatError(f"{path}: the MindRecord header is damaged: {exc}") from exc
    _check_layout(header, length, len(data), path)
    return header


def _from_json(raw: dict, path: str) -> Header:
    if raw.get("version") != VERSION:
        raise ValueError(f"version {raw.get('version')!r} (this reader reads {VERSION})")
    schemas = raw["schema"]
    if not isinstance(schemas, list) or len(schemas) != 1:
        raise ValueError("a MindRecord file has exactly one schema")
    schema = Schema.from_json(schemas[0], path)
    index = [f["index_field"] for f in raw["index_fields"] or []]
    addresses = raw["shard_addresses"]
    if not isinstance(addresses, list) or not 1 <= len(addresses) <= MAX_SHARDS or not all(
            isinstance(a, str) and a and "/" not in a and "\\" not in a and a not in (".", "..")
            for a in addresses):
        raise ValueError(f"shard_addresses must list 1 to {MAX_SHARDS} file names, got "
                         f"{str(addresses)[:200]}")
    pages = [Page(int(p["page_id"]), int(p["shard_id"]), str(p["page_type"]),
                  int(p["page_type_id"]), int(p["start_row_id"]), int(p["end_row_id"]),
                  [(int(g["id"]), int(g["offset"])) for g in p["row_group_ids"]],
                  int(p["page_size"])) for p in raw["page"] or []]
    return Header(schema, index, addresses, int(raw["shard_id"]), pages,
                  int(raw["header_size"]), int(raw["page_size"]),
                  int(raw.get("compression_size", 0)))


def _check_layout(header: Header, length: int, file_size: int, path: str) -> None:
    def fail(message: str) -> FileFormatError:
        return FileFormatError(f"{path}: the MindRecord header is damaged: {message}")

    if not MIN_HEADER_SIZE <= header.header_size <= MAX_HEADER_SIZE or \
            length + 8 > header.header_size:
        raise fail(f"header_size {header.header_size} is out of range or smaller than the "
                   "header")
    if not MIN_PAGE_SIZE <= header.page_size <= MAX_PAGE_SIZE:
        raise fail(f"page_size {header.page_size} is outside [{MIN_PAGE_SIZE}, "
                   f"{MAX_PAGE_SIZE}]")
    if not 0 <= header.shard_id < len(header.shard_addresses):
        raise fail(f"shard_id {header.shard_id} for {len(header.shard_addresses)} shards")
    for index, page in enumerate(header.pages):
        if page.page_id != index or page.page_type not in (BLOB, RAW):
            raise fail(f"page {index} has id {page.page_id} and type {page.page_type!r}")
        if not 0 <= page.page_size <= header.page_size or \
                header.page_offset(page.page_id) + page.page_size > file_size:
            raise fail(f"page {index} ({page.page_size} bytes) lies beyond the page size or "
                       f"the end of the {file_size}-byte file")
        if not 0 <= page.start_row_id <= page.end_row_id or \
                (page.page_type == BLOB and 8 * (page.end_row_id - page.start_row_id)
                 > page.page_size):
            raise fail(f"page {index} declares rows {page.start_row_id} to "
                       f"{page.end_row_id}, more than its {page.page_size} bytes can hold")
        if any(not 0 <= offset <= page.page_size for _, offset in page.row_group_ids):
            raise fail(f"page {index} has a row group outside its {page.page_size} bytes")


def blob_pages(header: Header) -> list[Page]:
    """The blob pages in row order (by row group id)."""
    return sorted((p for p in header.pages if p.page_type == BLOB), key=lambda p: p.page_type_id)


def raw_group_starts(header: Header) -> dict[int, tuple[Page, int]]:
    """Row group id → (raw page, offset of the group's first row in it)."""
    return {group: (page, offset) for page in header.pages if page.page_type == RAW
            for group, offset in page.row_group_ids}
