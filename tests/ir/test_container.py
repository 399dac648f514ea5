"""The tensor container trusts nothing: the prefix and the sizes are checked before more is
read (a 3 GiB foreign file costs a few bytes), the digest covers the header, the tensor
layout must be the writer's exactly, JSON hazards are errors, and format 1 files still load,
with a warning, under the same layout checks."""

import json
import os
import struct
import tracemalloc

import numpy as np
import pytest

from mskernel.errors import FileFormatError
from mskernel.ir import container
from mskernel.ir.container import (
    MAX_ELEMENTS, MAX_HEADER_NBYTES, MAX_INT_DIGITS, MAX_RANK, Kind, read_container,
    write_container,
)
from mskernel.testing.filefuzz import Parts, same_arrays, seal, seal_version_1

KIND = Kind(b"TESTFILE", 2, "test file", "mskernel-tests")
TENSORS = {"a": np.arange(3, dtype=np.uint8), "empty": np.zeros((0, 4), np.float32),
           "b": np.array([[1.5, -2.0], [0.25, 8.0]]), "s": np.array(7, np.int16)}


@pytest.fixture
def path(tmp_path):
    path = tmp_path / "tensors.bin"
    write_container(path, KIND, "tests 1.0", {"note": "x"}, TENSORS)
    return path


def read_error(path) -> str:
    with pytest.raises(FileFormatError) as info:
        read_container(path, KIND)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    return message[len(f"{path}: "):]


def test_round_trip_and_the_offsets_the_writer_uses(path):
    loaded = read_container(path, KIND, {"note": str})
    assert list(loaded.tensors) == list(TENSORS)
    assert all(same_arrays(loaded.tensors[n], a) for n, a in TENSORS.items())
    table = Parts.of(path.read_bytes()).header["tensors"]
    assert [(e["offset"], e["nbytes"]) for e in table.values()] == [(0, 3), (64, 0), (64, 32),
                                                                    (128, 2)]


# -- checks before reading ----------------------------------------------------------------------

def peak_bytes_while(fn) -> int:
    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def sparse(path, size, start=b""):
    with open(path, "wb") as f:
        f.write(start)
        f.truncate(size)


@pytest.mark.parametrize("start, message", [
    (b"PK\x03\x04", "not an mskernel test file (it does not start with b'TESTFILE')"),
    (struct.pack("<8sIQQ", b"TESTFILE", 2, 100, 10), f"corrupt: {3 * 2**30 - 170} unexpected "
                                                     "bytes after the payload"),
    (struct.pack("<8sIQQ", b"TESTFILE", 2, 100, 2**62), f"truncated: the file should hold "
                                                        f"{2**62 + 160} bytes, found {3 * 2**30}"),
    (struct.pack("<8sIQQ", b"TESTFILE", 2, 2**40, 10), f"corrupt: the prefix gives a header of "
                                                       f"{2**40} bytes, more than the "
                                                       f"{MAX_HEADER_NBYTES} a header may take"),
    (struct.pack("<8sIQ", b"TESTFILE", 1, 2**40), f"corrupt: the prefix gives a header of "
                                                  f"{2**40} bytes, more than the "
                                                  f"{MAX_HEADER_NBYTES} a header may take"),
], ids=["foreign", "too long", "too short", "header too long", "format 1 header too long"])
def test_a_3_gib_file_is_refused_after_a_few_bytes(tmp_path, start, message):
    path = tmp_path / "big.bin"
    sparse(path, 3 * 2**30, start)
    found = []
    assert peak_bytes_while(lambda: found.append(read_error(path))) < 64 * 1024
    assert found == [message]


def test_a_format_1_header_longer_than_the_file_is_not_read(tmp_path):
    path = tmp_path / "short.bin"
    sparse(path, 100, struct.pack("<8sIQ", b"TESTFILE", 1, 1000))
    assert read_error(path) == "truncated: the header needs 1020 bytes, found 100"


def test_a_header_beyond_the_limit_is_neither_written_nor_read(tmp_path, monkeypatch):
    monkeypatch.setattr(container, "MAX_HEADER_NBYTES", 1000)
    with pytest.raises(ValueError, match="header would take 1[0-9]{3} bytes, more than 1000; "
                                         "store large constants as tensors"):
        write_container(tmp_path / "f", KIND, "tests", {"note": "x" * 1000}, {})
    assert not os.listdir(tmp_path)
    (tmp_path / "f").write_bytes(seal(b"TESTFILE", 2, json.dumps(
        {"format_version": 2, "producer": "x" * 1000, "tensors": {}}).encode(), b""))
    assert read_error(tmp_path / "f").startswith("corrupt: the prefix gives a header of 10")


# -- the digest covers the header -----------------------------------------------------------------

def test_every_byte_is_covered_by_the_digest(path):
    data = path.read_bytes()
    for at in range(len(data)):
        damaged = bytearray(data)
        damaged[at] ^= 0x10
        path.write_bytes(bytes(damaged))
        with pytest.raises(FileFormatError):
            read_container(path, KIND)


# -- forged headers: the layout must be the writer's --------------------------------------------

def forge(path, edit=None, text=None, payload=None):
    """Re-seal the file at ``path`` with its header edited (or replaced by ``text``)."""
    parts = Parts.of(path.read_bytes())
    header = parts.header
    if edit:
        edit(header)
    text = text if text is not None else json.dumps(header)
    path.write_bytes(seal(b"TESTFILE", 2, text.encode(),
                          parts.payload if payload is None else payload))


def entry(name, **values):
    return lambda h: h["tensors"][name].update(values)


LAYOUT = "each tensor starts at the first 64-byte boundary after the one before it"


@pytest.mark.parametrize("edit, message", [
    (entry("b", offset=0), f"tensor 'b' is at payload offset 0; {LAYOUT} (here 64)"),
    (entry("b", offset=63), f"tensor 'b' is at payload offset 63; {LAYOUT} (here 64)"),
    (entry("b", offset=128), f"tensor 'b' is at payload offset 128; {LAYOUT} (here 64)"),
    (entry("a", offset=-64), f"tensor 'a' is at payload offset -64; {LAYOUT} (here 0)"),
    (lambda h: h.update(tensors=dict(reversed(h["tensors"].items()))),
     f"tensor 's' is at payload offset 128; {LAYOUT} (here 0)"),
    (lambda h: h["tensors"].pop("b"), f"tensor 's' is at payload offset 128; {LAYOUT} (here 64)"),
    (lambda h: h["tensors"].pop("s"), "the tensors end at payload byte 96, but the payload "
                                      "holds 130 bytes"),
    (entry("b", nbytes=16), "tensor 'b' is float64[2, 2] (32 bytes), but the header gives it "
                            "16 bytes"),
    (entry("b", shape=[4, 2]), "tensor 'b' is float64[4, 2] (64 bytes), but the header gives "
                               "it 32 bytes"),
    (entry("b", dtype="int64"), None),  # same size: a valid file with other values
    (entry("b", dtype="float32"), "tensor 'b' is float32[2, 2] (16 bytes), but the header"),
    (entry("b", dtype="float128"), "tensor 'b': unknown dtype 'float128'"),
    (entry("empty", shape=[0, 10**18]), f"tensor 'empty' has shape [0, {10**18}], beyond "
                                        f"{MAX_ELEMENTS} elements"),
    (entry("empty", shape=[0] * (MAX_RANK + 1)), f"tensor 'empty' has {MAX_RANK + 1} "
                                                 f"dimensions (at most {MAX_RANK})"),
    (entry("empty", shape=[0, -4]), "tensor 'empty' has shape [0, -4] (dimensions are "
                                    "non-negative integers)"),
    (entry("a", shape=[True, 3]), "tensor 'a' has shape [True, 3] (dimensions are"),
    (entry("a", shape=[3.0]), "tensor 'a' has shape [3.0] (dimensions are"),
    (entry("a", offset=0.0), "tensor 'a' field 'offset' is missing or not an integer"),
    (entry("a", nbytes="3"), "tensor 'a' field 'nbytes' is missing or not an integer"),
    (entry("a", strides=[1]), "tensor 'a' is not a JSON object with the fields dtype, shape, "
                              "offset, nbytes"),
    (lambda h: h["tensors"]["a"].pop("nbytes"), "tensor 'a' is not a JSON object with the"),
    (lambda h: h["tensors"].update(a=[0, 3]), "tensor 'a' is not a JSON object with the"),
    (lambda h: h.update(tensors=[]), "header field 'tensors' is missing or not a JSON object"),
    (lambda h: h.update(format_version=1), "the header says format 1, the file prefix says 2"),
    (lambda h: h.update(producer=None), "header field 'producer' is missing or not a string"),
], ids=lambda v: v.split(";")[0] if isinstance(v, str) else None)
def test_a_forged_layout_is_refused_before_any_tensor_is_built(path, edit, message):
    forge(path, edit)
    if message is None:
        assert read_container(path, KIND).tensors["b"].dtype == np.int64
    else:
        assert message in read_error(path)


def test_the_payload_must_end_where_the_tensors_end(path):
    payload = Parts.of(path.read_bytes()).payload
    forge(path, payload=payload + bytes(64))
    assert read_error(path) == ("invalid header: the tensors end at payload byte 130, but the "
                                "payload holds 194 bytes")
    forge(path, payload=payload[:-1])
    assert "the tensors end at payload byte 130, but the payload holds 129" in read_error(path)


@pytest.mark.parametrize("text, message", [
    ('{"format_version": 2, "producer": "a", "producer": "b", "tensors": {}}',
     "key 'producer' appears twice in one JSON object"),
    ('{"format_version": 2, "producer": "a", "tensors": {"t": {"dtype": "int8", "shape": [], '
     '"offset": 0, "nbytes": 1, "offset": 0}}}', "key 'offset' appears twice"),
    ('{"format_version": 2, "producer": "a", "tensors": {"t": {}, "t": {}}}',
     "key 't' appears twice"),
    ('{"format_version": 2, "producer": "a", "tensors": {}, "x": ' + "[" * 100_000 + "]" * 100_000
     + "}", "JSON nested too deeply"),
    ('{"format_version": 2, "producer": "a", "tensors": {}, "x": ' + "9" * 5000 + "}",
     f"an integer of 5000 digits (at most {MAX_INT_DIGITS})"),
    ('{"format_version": 2, "producer": "a", "tensors": {}, "x": -' + "9" * 4301 + "}",
     "an integer of 4301 digits"),
    ('["format_version", 2]', "not a JSON object"),
    ('{"format_version": 2, "producer": "\udcff"}', "not UTF-8 JSON"),
    ("", "not UTF-8 JSON"),
])
def test_json_hazards_are_file_format_errors(tmp_path, text, message):
    path = tmp_path / "f"
    path.write_bytes(seal(b"TESTFILE", 2, text.encode("utf-8", "surrogateescape"), b""))
    assert f"invalid header: {message}" in read_error(path)


def test_harmless_rewrites_load_the_same_tensors(path):
    forge(path, lambda h: h.update(producer="another writer 9", extra={"kept": [1, 2]}))
    loaded = read_container(path, KIND)
    assert loaded.producer == "another writer 9" and loaded.header["extra"] == {"kept": [1, 2]}
    assert all(same_arrays(loaded.tensors[n], a) for n, a in TENSORS.items())


def test_the_writer_refuses_what_the_reader_would(tmp_path):
    with pytest.raises(ValueError, match=r"tensor 'z' has shape \(0, 562949953421312\), beyond"):
        write_container(tmp_path / "f", KIND, "tests", {}, {"z": np.zeros((0, 2**49))})
    assert not os.listdir(tmp_path)


# -- format 1 ----------------------------------------------------------------------------------

def version_1(path, edit=None):
    parts = Parts.of(path.read_bytes())
    header = parts.header
    if edit:
        edit(header)
    path.write_bytes(seal_version_1(b"TESTFILE", header, parts.payload))


def test_format_1_files_load_with_a_warning_to_save_them_again(path):
    version_1(path)
    with pytest.warns(UserWarning, match=f"{path} is a format 1 test file: its checksum covers "
                                         "the tensors but not the header; save it again"):
        loaded = read_container(path, KIND, {"note": str})
    assert loaded.format_version == 1
    assert all(same_arrays(loaded.tensors[n], a) for n, a in TENSORS.items())


def test_format_1_files_get_the_same_checks(path):
    data = path.read_bytes()
    version_1(path, entry("b", offset=0))
    assert read_error(path).startswith("invalid header: tensor 'b' is at payload offset 0")
    path.write_bytes(data)
    version_1(path)
    one = path.read_bytes()
    path.write_bytes(one[:-1])
    assert read_error(path) == f"truncated: the file should hold {len(one)} bytes, found " \
                               f"{len(one) - 1}"
    damaged = bytearray(one)
    damaged[-1] ^= 1
    path.write_bytes(bytes(damaged))
    assert read_error(path).startswith("corrupt: the payload does not match its SHA-256")
    # a damaged offset digit in the (unprotected) header is caught by the layout checks
    path.write_bytes(one.replace(b'"offset": 64, "nbytes": 32', b'"offset": 74, "nbytes": 32'))
    assert read_error(path).startswith("invalid header: tensor 'b' is at payload offset 74")
