"""Placing rows into the pages of one shard file, exactly as MindSpore's ``ShardWriter``
places them, so a file written here matches one MindSpore writes from the same rows.

Each ``write_raw_data`` call's rows are cut into row groups: the first continues the last
blob page while it has room (and its group's raw rows still fit one raw page); each further
group opens a new blob page.  A group's raw rows stay together in one raw page: when the
continued group outgrows its raw page it moves to a new one, and a new group that does not
fit the last raw page starts another.  Pages are written at their slots (``header_size +
page_id * page_size``) and never padded, so the file is sparse between them.  Rows already
in the file are never overwritten, which is what makes appending safe: until the header is
rewritten the file still describes its old rows.
"""

from __future__ import annotations

import struct
from typing import BinaryIO, Optional, Sequence

from mskernel_sdk import FileFormatError

from .header import BLOB, RAW, Header, Page

Group = tuple[int, int]  # rows [start, end) of one write


class ShardLayout:
    """The pages of one shard file being written through ``file``."""

    def __init__(self, file: BinaryIO, header: Header) -> None:
        self.file, self.header = file, header

    @property
    def pages(self) -> list[Page]:
        return self.header.pages

    def write(self, blobs: Sequence[bytes], raws: Sequence[bytes]) -> None:
        """Append rows (their blob and raw bytes, unprefixed) to the file."""
        if not blobs:
            return
        page_size = self.header.page_size
        blob_sizes = [8 + len(b) for b in blobs]
        raw_sizes = [8 + len(r) for r in raws]
        too_big = max(max(blob_sizes), max(raw_sizes))
        if too_big > page_size:
            raise FileFormatError(f"a row needs {too_big} bytes but the page size is "
                                  f"{page_size}; call set_page_size with a larger size")
        last_raw, last_blob = self._last(RAW), self._last(BLOB)
        groups = self._cut(blob_sizes, raw_sizes, last_raw, last_blob)
        if last_blob is not None:
            self._append_blobs(last_blob, groups[0], blobs, blob_sizes)
        self._new_blob_pages(last_blob, groups[1:], blobs, blob_sizes)
        last_raw = self._move_last_group_if_full(last_raw, groups[0], raw_sizes)
        self._write_raws(last_raw, groups, raws, raw_sizes)

    def _last(self, kind: str) -> Optional[Page]:
        return next((p for p in reversed(self.pages) if p.page_type == kind), None)

    def _cut(self, blob_sizes: list[int], raw_sizes: list[int], last_raw: Optional[Page],
             last_blob: Optional[Page]) -> list[Group]:
        """Rows per group; the first group (maybe empty) continues the last blob page."""
        page_size = self.header.page_size
        in_blob = last_blob.page_size if last_blob else 0
        in_raw = last_raw.page_size - _last_group(last_raw)[1] if last_raw else 0
        groups, start = [], 0
        for i, (blob, raw) in enumerate(zip(blob_sizes, raw_sizes)):
            if in_blob == 0 or in_blob + blob > page_size or in_raw + raw > page_size:
                groups.append((start, i))
                start, in_blob, in_raw = i, blob, raw
            else:
                in_blob, in_raw = in_blob + blob, in_raw + raw
        groups.append((start, len(blob_sizes)))
        return groups

    def _append_blobs(self, page: Page, group: Group, blobs: Sequence[bytes],
                      sizes: list[int]) -> None:
        start, end = group
        if start == end:
            return
        self._put(page, page.page_size, blobs[start:end])
        page.page_size += sum(sizes[start:end])
        page.end_row_id += end - start

    def _new_blob_pages(self, last_blob: Optional[Page], groups: Sequence[Group],
                        blobs: Sequence[bytes], sizes: list[int]) -> None:
        type_id = last_blob.page_type_id if last_blob else -1
        row = last_blob.end_row_id if last_blob else 0
        for start, end in groups:
            type_id += 1
            page = Page(len(self.pages), self.header.shard_id, BLOB, type_id, row,
                        row + end - start, [], sum(sizes[start:end]))
            self.pages.append(page)
            self._put(page, 0, blobs[start:end])
            row += end - start

    def _move_last_group_if_full(self, last_raw: Optional[Page], group: Group,
                                 sizes: list[int]) -> Optional[Page]:
        """When the rows continuing the last group do not fit its raw page, move the group's
        raw rows to a new raw page (copied; the old bytes stay, no longer listed)."""
        start, end = group
        if start == end or last_raw is None or \
                sum(sizes[start:end]) + last_raw.page_size <= self.header.page_size:
            return last_raw
        group_id, offset = last_raw.row_group_ids.pop()
        moved = self._get(last_raw, offset, last_raw.page_size - offset)
        last_raw.page_size = offset
        page = Page(len(self.pages), self.header.shard_id, RAW, last_raw.page_id + 1, 0, 0,
                    [(group_id, 0)], len(moved))
        self.pages.append(page)
        self._put_bytes(page, 0, moved)
        return page

    def _write_raws(self, last_raw: Optional[Page], groups: Sequence[Group],
                    raws: Sequence[bytes], sizes: list[int]) -> None:
        group_id = _last_group(last_raw)[0] if last_raw else -1
        for chunk, (start, end) in enumerate(groups):
            if start == end:
                continue
            size = sum(sizes[start:end])
            if last_raw is None or last_raw.page_size + size > self.header.page_size:
                last_raw = self._empty_raw_page(last_raw)
            self._put(last_raw, last_raw.page_size, raws[start:end])
            if chunk > 0:  # the first chunk continues the last group
                group_id += 1
                last_raw.row_group_ids.append((group_id, last_raw.page_size))
            last_raw.page_size += size

    def _empty_raw_page(self, previous: Optional[Page]) -> Page:
        # as MindSpore numbers raw pages: the previous raw page's page id + 1
        type_id = previous.page_id + 1 if previous else 0
        page = Page(len(self.pages), self.header.shard_id, RAW, type_id, 0, 0, [], 0)
        self.pages.append(page)
        return page

    def _put(self, page: Page, offset: int, rows: Sequence[bytes]) -> None:
        self._put_bytes(page, offset, b"".join(struct.pack("<Q", len(r)) + r for r in rows))

    def _put_bytes(self, page: Page, offset: int, data: bytes) -> None:
        self.file.seek(self.header.page_offset(page.page_id) + offset)
        self.file.write(data)

    def _get(self, page: Page, offset: int, size: int) -> bytes:
        self.file.seek(self.header.page_offset(page.page_id) + offset)
        return self.file.read(size)


def _last_group(page: Page) -> tuple[int, int]:
    return page.row_group_ids[-1] if page.row_group_ids else (0, 0)
