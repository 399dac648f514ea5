"""Damaged and forged tensor-container files, for testing that a loader trusts nothing.

:func:`mutants` derives files from a valid container file (:mod:`mskernel.ir.container`,
format 2) with a fixed seed, in two families:

- ``damaged``: what storage, a transfer or a partial copy does to a file — flipped bits,
  changed bytes (anywhere, in the header's digits, in its names), truncation, extension,
  changed length fields.  The digest of the whole file must catch each one.
- ``forged``: the header rewritten on purpose and the file sealed again with a correct
  digest, as a buggy writer or an attacker would: shifted, aliased and reordered offsets,
  wrong sizes, odd dtypes and shapes (a huge dimension on an empty tensor), wrong field
  types, duplicate keys, deep nesting, overlong integers, a changed payload length, plus
  ``extra_forgeries`` of the file's kind.  Each is an invalid layout the loader must refuse,
  or a rewrite that changes nothing a loader returns (key order, spacing, the producer, an
  unknown field), which must load unchanged.

:func:`outcomes` loads every mutant and counts, per family, ``error`` (the loader's clear
:class:`~mskernel.errors.FileFormatError`: one line, naming the file), ``identical`` (a load
equal to the original's) and ``other`` (any other exception, or a load that differs), which
must stay zero.  :class:`Parts` and :func:`seal` take a file apart and put it together with a
correct digest, independently of the container's writer; :func:`seal_version_1` writes the
format 1 layout of mskernel 0.1.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Optional

import numpy as np

from ..errors import FileFormatError
from ..ir.dtypes import ALL_DTYPES

ALIGNMENT = 64
PREFIX = struct.Struct("<8sIQQ")  # magic, format version, header length, payload length
_ITEMSIZES = {dt.name: dt.itemsize for dt in ALL_DTYPES}

#: A forgery: (header as parsed, payload, rng) → (header text, payload) of the forged file.
Forgery = Callable[[dict[str, Any], bytes, np.random.Generator], tuple[str, bytes]]


@dataclass(frozen=True)
class Parts:
    """A format 2 container file taken apart (see :mod:`mskernel.ir.container`)."""

    magic: bytes
    version: int
    header_text: bytes
    payload: bytes

    @property
    def header(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.header_text)
        return parsed

    @classmethod
    def of(cls, data: bytes) -> "Parts":
        magic, version, header_nbytes, payload_nbytes = PREFIX.unpack_from(data)
        start = _aligned(PREFIX.size + header_nbytes)
        return cls(magic, version, data[PREFIX.size:PREFIX.size + header_nbytes],
                   data[start:start + payload_nbytes])


def seal(magic: bytes, version: int, header_text: bytes, payload: bytes) -> bytes:
    """A format 2 file of these parts with a correct digest, written independently of the
    container's writer (so that each checks the other)."""
    head = PREFIX.pack(magic, version, len(header_text), len(payload)) + header_text
    body = head + bytes(_aligned(len(head)) - len(head)) + payload
    return body + hashlib.sha256(body).digest()


def seal_version_1(magic: bytes, header: dict[str, Any], payload: bytes) -> bytes:
    """A format 1 file of these parts, as mskernel 0.1 wrote them: the header's ``payload``
    field holds the payload's length and digest, the prefix only the header's length."""
    header = {**header, "format_version": 1,
              "payload": {"nbytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}}
    text = json.dumps(header).encode()
    head = struct.pack("<8sIQ", magic, 1, len(text)) + text
    return head + bytes(_aligned(len(head)) - len(head)) + payload


@dataclass(frozen=True)
class Mutant:
    family: str  # "damaged" or "forged"
    what: str  # the operator, for a failure message
    data: bytes


def mutants(data: bytes, count: int, seed: int,
            extra_forgeries: Optional[dict[str, Forgery]] = None) -> Iterator[Mutant]:
    """``count`` mutants of the container file ``data``, half damaged and half forged,
    taking the operators in turn with random parameters from ``seed``."""
    rng = np.random.default_rng(seed)
    parts = Parts.of(data)
    forgeries = {**FORGERIES, **(extra_forgeries or {})}
    damages = list(DAMAGES.items())
    forged = list(forgeries.items())
    for i in range(count):
        if i % 2 == 0:
            what, damage = damages[i // 2 % len(damages)]
            mutated = damage(data, parts, rng)
            if mutated != data:
                yield Mutant("damaged", what, mutated)
        else:
            what, forge = forged[i // 2 % len(forged)]
            text, payload = forge(parts.header, parts.payload, rng)
            yield Mutant("forged", what, seal(parts.magic, parts.version, text.encode(),
                                              payload))


def outcomes(path: str, files: Iterable[Mutant], load: Callable[[str], Any],
             same: Callable[[Any], bool]) -> tuple[Counter[tuple[str, str]], list[str]]:
    """Write each mutant to ``path``, ``load(path)`` it and count ``(family, outcome)``;
    also return a description of every ``other`` outcome.  ``same(loaded)`` says whether a
    load equals the original's."""
    counts: Counter[tuple[str, str]] = Counter()
    others = []
    for mutant in files:
        with open(path, "wb") as f:
            f.write(mutant.data)
        try:
            loaded = load(path)
        except FileFormatError as exc:
            clear = str(exc).startswith(f"{path}: ") and "\n" not in str(exc)
            outcome = "error" if clear else "other"
            detail = f"unclear message {str(exc)!r}"
        except Exception as exc:  # noqa: BLE001 (what is being counted)
            outcome, detail = "other", f"{type(exc).__name__}: {exc}"
        else:
            outcome = "identical" if same(loaded) else "other"
            detail = "loaded different content"
        counts[mutant.family, outcome] += 1
        if outcome == "other":
            others.append(f"{mutant.family} {mutant.what}: {detail}")
    return counts, others


def same_arrays(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtype, shape and bytes (NaN payloads included)."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# -- damage: the digest catches it --------------------------------------------------------------

def _flip_bit(data: bytes, parts: Parts, rng: np.random.Generator) -> bytes:
    out = bytearray(data)
    out[int(rng.integers(len(out)))] ^= 1 << int(rng.integers(8))
    return bytes(out)


def _change_byte(data: bytes, parts: Parts, rng: np.random.Generator) -> bytes:
    out = bytearray(data)
    at = int(rng.integers(len(out)))
    out[at] = (out[at] + int(rng.integers(1, 256))) % 256
    return bytes(out)


def _change_in_header(chars: bytes) -> Callable[[bytes, Parts, np.random.Generator], bytes]:
    def damage(data: bytes, parts: Parts, rng: np.random.Generator) -> bytes:
        where = [PREFIX.size + i for i, c in enumerate(parts.header_text) if c in chars]
        out = bytearray(data)
        at = where[int(rng.integers(len(where)))]
        out[at] = chars[(chars.index(out[at]) + int(rng.integers(1, len(chars)))) % len(chars)]
        return bytes(out)
    return damage


def _change_name(data: bytes, parts: Parts, rng: np.random.Generator) -> bytes:
    names = list(parts.header["tensors"])
    name = json.dumps(names[int(rng.integers(len(names)))]).encode()
    at = PREFIX.size + parts.header_text.index(name) + 1 + int(rng.integers(len(name) - 2))
    out = bytearray(data)
    out[at] = int(rng.choice(list(b"abcxyz019._-")))
    return bytes(out)


def _truncate(data: bytes, parts: Parts, rng: np.random.Generator) -> bytes:
    return data[:int(rng.integers(len(data)))]


def _extend(data: bytes, parts: Parts, rng: np.random.Generator) -> bytes:
    return data + rng.integers(0, 256, int(rng.integers(1, 200)), np.uint8).tobytes()


def _change_length(data: bytes, parts: Parts, rng: np.random.Generator) -> bytes:
    out = bytearray(data)
    field = 12 + 8 * int(rng.integers(2))  # the header or the payload length
    old = struct.unpack_from("<Q", out, field)[0]
    new = int(rng.choice([old + 1, old - 1, old + 64, old * 2, 2**63, 2**64 - 1, 0]))
    struct.pack_into("<Q", out, field, new % 2**64)
    return bytes(out)


def _zero_range(data: bytes, parts: Parts, rng: np.random.Generator) -> bytes:
    start = int(rng.integers(len(data)))
    end = min(len(data), start + int(rng.integers(1, 100)))
    return data[:start] + bytes(end - start) + data[end:]


DAMAGES = {"bit flip": _flip_bit, "changed byte": _change_byte,
           "changed header digit": _change_in_header(b"0123456789"),
           "changed header punctuation": _change_in_header(b'{}[]:,"'),
           "changed name": _change_name, "truncation": _truncate, "extension": _extend,
           "changed length field": _change_length, "zeroed bytes": _zero_range}


# -- forgeries: sealed again, the layout checks catch them ----------------------------------------

def _pick(table: dict[str, Any], rng: np.random.Generator, nonempty: bool = False) -> str:
    names = [n for n, e in table.items() if not nonempty or e["nbytes"]]
    return names[int(rng.integers(len(names)))]


def _edit_entry(edit: Callable[[dict[str, Any], np.random.Generator], None],
                nonempty: bool = False) -> Forgery:
    def forge(header: dict[str, Any], payload: bytes,
              rng: np.random.Generator) -> tuple[str, bytes]:
        edit(header["tensors"][_pick(header["tensors"], rng, nonempty)], rng)
        return json.dumps(header), payload
    return forge


def _shift_offset(entry: dict[str, Any], rng: np.random.Generator) -> None:
    entry["offset"] += int(rng.choice([-64, -8, -1, 1, 3, 64, 4096, 2**62]))


def _change_nbytes(entry: dict[str, Any], rng: np.random.Generator) -> None:
    entry["nbytes"] += int(rng.choice([-1, 1, 2, 64, 2**40]))


def _change_dim(entry: dict[str, Any], rng: np.random.Generator) -> None:
    shape = entry["shape"] or [1]
    at = int(rng.integers(len(shape)))
    shape[at] = int(rng.choice([v for v in (0, 1, 2, 7, 2**31, 2**64) if v != shape[at]]))
    entry["shape"] = shape


def _odd_shape(entry: dict[str, Any], rng: np.random.Generator) -> None:
    entry["shape"] = [[0, 10**18], [10**18, 0], [0] * 40, [-1], [2.0], [True], "[2]",
                      None][int(rng.integers(8))]


def _resize_dtype(entry: dict[str, Any], rng: np.random.Generator) -> None:
    size = _ITEMSIZES[entry["dtype"]]
    entry["dtype"] = str(rng.choice(
        [d for d, s in _ITEMSIZES.items() if s != size] + ["float8", "", "f32x"]))


def _wrong_field_type(entry: dict[str, Any], rng: np.random.Generator) -> None:
    key = ("dtype", "shape", "offset", "nbytes")[int(rng.integers(4))]
    entry[key] = [float(entry[key]) if isinstance(entry[key], int) else 1.0, True,
                  str(entry[key]), None, {"v": entry[key]}][int(rng.integers(5))]


def _extra_field(entry: dict[str, Any], rng: np.random.Generator) -> None:
    entry["strides"] = [1]


def _missing_field(entry: dict[str, Any], rng: np.random.Generator) -> None:
    del entry[("dtype", "shape", "offset", "nbytes")[int(rng.integers(4))]]


def _alias(header: dict[str, Any], payload: bytes, rng: np.random.Generator) -> tuple[str, bytes]:
    """One tensor's offset set to another's: refused, or the same file when they share it
    (an empty tensor)."""
    table = header["tensors"]
    a, b = _pick(table, rng), _pick(table, rng, nonempty=True)
    table[a]["offset"] = table[b]["offset"]
    return json.dumps(header), payload


def _reorder(header: dict[str, Any], payload: bytes, rng: np.random.Generator) -> tuple[str, bytes]:
    names = list(header["tensors"])
    i, j = sorted(rng.choice(len(names), 2, replace=False))
    names[i], names[j] = names[j], names[i]
    header["tensors"] = {n: header["tensors"][n] for n in names}
    return json.dumps(header), payload


def _drop(header: dict[str, Any], payload: bytes, rng: np.random.Generator) -> tuple[str, bytes]:
    del header["tensors"][_pick(header["tensors"], rng, nonempty=True)]
    return json.dumps(header), payload


def _resize_payload(header: dict[str, Any], payload: bytes,
                    rng: np.random.Generator) -> tuple[str, bytes]:
    cut = int(rng.choice([-64, -1, 1, 64]))
    return json.dumps(header), payload[:cut] if cut < 0 else payload + bytes(cut)


def _duplicate_key(header: dict[str, Any], payload: bytes,
                   rng: np.random.Generator) -> tuple[str, bytes]:
    """A key given twice, the second time with another value (JSON keeps the last)."""
    name = _pick(header["tensors"], rng)
    entry = json.dumps({name: header["tensors"][name]})[1:-1]
    text = json.dumps(header)
    where = int(rng.integers(3))
    if where == 0:  # a tensor entry, as the first key of the table
        return text.replace('"tensors": {', '"tensors": {' + entry + ", ", 1), payload
    if where == 1:  # the format version
        return text.replace("{", '{"format_version": 99, ', 1), payload
    return text.replace('"offset": ', '"offset": 12345, "offset": ', 1), payload


def _deep_nesting(header: dict[str, Any], payload: bytes,
                  rng: np.random.Generator) -> tuple[str, bytes]:
    depth = int(rng.choice([50, 5000, 200_000]))
    entry = header["tensors"][_pick(header["tensors"], rng)]
    entry["shape"] = "@"
    return json.dumps(header).replace('"@"', "[" * depth + "]" * depth), payload


def _long_integer(header: dict[str, Any], payload: bytes,
                  rng: np.random.Generator) -> tuple[str, bytes]:
    entry = header["tensors"][_pick(header["tensors"], rng)]
    entry[str(rng.choice(["offset", "nbytes"]))] = "@"
    digits = int(rng.choice([4301, 5000, 100_000]))
    return json.dumps(header).replace('"@"', "1" * digits), payload


def _version_field(header: dict[str, Any], payload: bytes,
                   rng: np.random.Generator) -> tuple[str, bytes]:
    header["format_version"] = int(rng.choice([0, 1, 3, -2]))
    return json.dumps(header), payload


def _harmless(header: dict[str, Any], payload: bytes,
              rng: np.random.Generator) -> tuple[str, bytes]:
    """A rewrite that changes nothing a loader returns."""
    how = int(rng.integers(4))
    if how == 0:
        return json.dumps(dict(reversed(header.items()))), payload
    if how == 1:
        return json.dumps(header, indent=int(rng.integers(1, 4))), payload
    if how == 2:
        return json.dumps({**header, "producer": "someone else 9.9"}), payload
    return json.dumps({**header, "comment": [[1, {"a": None}], "unknown fields are kept"]}), payload


FORGERIES: dict[str, Forgery] = {
    "shifted offset": _edit_entry(_shift_offset), "aliased offset": _alias,
    "reordered tensors": _reorder, "dropped tensor": _drop,
    "changed nbytes": _edit_entry(_change_nbytes),
    "changed dimension": _edit_entry(_change_dim, nonempty=True),
    "odd shape": _edit_entry(_odd_shape),
    "dtype of another size": _edit_entry(_resize_dtype, nonempty=True),
    "wrong field type": _edit_entry(_wrong_field_type),
    "extra field": _edit_entry(_extra_field), "missing field": _edit_entry(_missing_field),
    "resized payload": _resize_payload, "duplicate key": _duplicate_key,
    "deep nesting": _deep_nesting, "overlong integer": _long_integer,
    "format_version field": _version_field, "harmless rewrite": _harmless,
}


def _aligned(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT

