"""The ``.mindrecord.db`` index beside each shard file: an SQLite database that MindSpore's
reader needs (it finds rows and checks the shard's name through it).

``SHARD_NAME`` holds the file's name; ``INDEXES`` has one record per row — its row id and
group, where its raw and blob bytes start and end in their pages — and the values of the
index fields (``<field>_0``, each after an ``INC_<k>`` column that is always 0).  The tables
are created with MindSpore's own statements, so the schema reads the same.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from .schema import SQL_TYPES
from .shard import ShardFile

_BASE_COLUMNS = (
    "  ROW_ID               INT  NOT NULL, PAGE_ID_RAW          INT  NOT NULL"
    ", PAGE_OFFSET_RAW      INT  NOT NULL, PAGE_OFFSET_RAW_END  INT  NOT NULL"
    ", ROW_GROUP_ID         INT  NOT NULL, PAGE_ID_BLOB         INT  NOT NULL"
    ", PAGE_OFFSET_BLOB     INT  NOT NULL, PAGE_OFFSET_BLOB_END INT  NOT NULL")
_BASE_NAMES = ("ROW_ID", "ROW_GROUP_ID", "PAGE_ID_RAW", "PAGE_OFFSET_RAW",
               "PAGE_OFFSET_RAW_END", "PAGE_ID_BLOB", "PAGE_OFFSET_BLOB",
               "PAGE_OFFSET_BLOB_END")


def write_index(shard: ShardFile, db_path: Path) -> None:
    """Write the index of ``shard`` to ``db_path`` (replacing it atomically)."""
    fields = shard.header.index_fields
    schema = shard.schema
    create = "CREATE TABLE INDEXES(" + _BASE_COLUMNS + "".join(
        f",INC_{k} INT, {name}_0 {SQL_TYPES[schema.fields[name].type]}"
        for k, name in enumerate(fields))
    create += ", PRIMARY KEY(ROW_ID" + "".join(f",INC_{k}" for k in range(len(fields))) + "));"
    names = list(_BASE_NAMES) + [n for k, name in enumerate(fields)
                                 for n in (f"INC_{k}", f"{name}_0")]
    insert = (f"INSERT INTO INDEXES ({','.join(names)}) "
              f"VALUES ({','.join('?' * len(names))})")
    tmp = db_path.with_name(db_path.name + f".tmp-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    db = sqlite3.connect(tmp)
    try:
        db.execute(create)
        db.execute("CREATE TABLE SHARD_NAME(NAME TEXT NOT NULL);")
        db.execute("INSERT INTO SHARD_NAME (NAME) VALUES (?)", (Path(shard.path).name,))
        db.executemany(insert, _records(shard, fields))
        db.commit()
    finally:
        db.close()
    os.replace(tmp, db_path)


def _records(shard: ShardFile, fields: list[str]):
    rows = shard.rows
    for row in range(len(rows)):
        values = shard.raw_values(row) if fields else {}
        raw_at, blob_at = int(rows.raw_offset[row]), int(rows.blob_offset[row])
        yield (row, int(rows.group[row]), int(rows.raw_page[row]), raw_at,
               raw_at + 8 + int(rows.raw_length[row]), int(rows.blob_page[row]), blob_at,
               blob_at + 8 + int(rows.blob_length[row]),
               *(v for name in fields for v in (0, values[name])))
