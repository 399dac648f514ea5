"""The model file: exact round trip of graph and weights, the documented layout, a clear error
for every kind of damaged or unreadable file, atomic writes, and the missing-plugin message."""

import hashlib
import json
import os
import struct

import numpy as np
import pytest

import mskernel
from mskernel.errors import FileFormatError
from mskernel.ir import ALL_DTYPES, GraphBuilder, bfloat16, tensor_type
from mskernel.ir.dtypes import bfloat16_to_bits
from mskernel.ir.fileformat import ALIGNMENT, FORMAT_VERSION, MAGIC, load_model, save_model
from mskernel.ir.printer import print_graph
from mskernel.ops import elementwise
from mskernel.ops.registry import OpDef, OpRegistry
from mskernel.testing import random_array

PREFIX = struct.Struct("<8sIQ")


def small_graph():
    b = GraphBuilder("net")
    x = b.input(tensor_type("f32", (2, 3)), name="x")
    w = b.input(tensor_type("bf16", (2, 3)), name="w")
    y = b.op("add", x, b.op("cast", w, dtype="f32"))
    return b.build([b.op("clip", y, min=-0.0, max=float("inf"))])


def every_dtype_weights():
    rng = np.random.default_rng(0)
    weights = {f"w.{dt.name}": random_array(rng, (3, 5), dt, -100, 100) for dt in ALL_DTYPES}
    weights["empty"] = np.zeros((0, 4), np.float64)
    weights["scalar"] = np.array(7, np.int16)
    weights["nan"] = np.array([0x7FC00001, 0xFF800000], np.uint32).view(np.float32)
    weights["transposed"] = np.arange(12, dtype=np.int32).reshape(3, 4).T
    weights["big-endian"] = np.array([1.5, -2.25], dtype=">f8")
    return weights


def test_graph_and_weights_of_every_dtype_round_trip_exactly(tmp_path):
    graph, weights = small_graph(), every_dtype_weights()
    path = tmp_path / "model.msk"
    save_model(path, graph, weights, dtypes={"w.bfloat16": "bf16"})
    model = load_model(path)
    assert print_graph(model.graph) == print_graph(graph)
    assert list(model.weights) == list(weights)
    for name, original in weights.items():
        loaded = model.weights[name]
        native = original.astype(original.dtype.newbyteorder("="))
        assert loaded.dtype == native.dtype and loaded.shape == native.shape, name
        assert loaded.tobytes() == np.ascontiguousarray(native).tobytes(), name
    assert model.weight_dtypes["w.bfloat16"] is bfloat16
    assert model.weight_dtypes["w.float32"].name == "float32"
    assert model.format_version == FORMAT_VERSION
    assert model.producer == f"mskernel {mskernel.__version__}"
    assert model.requires == {"mskernel": mskernel.__version__}


def read_parts(path):
    data = path.read_bytes()
    magic, version, nbytes = PREFIX.unpack_from(data)
    header = json.loads(data[PREFIX.size:PREFIX.size + nbytes])
    start = -(-(PREFIX.size + nbytes) // ALIGNMENT) * ALIGNMENT
    return data, magic, version, header, start


def test_layout_is_the_documented_one(tmp_path):
    path = tmp_path / "m.msk"
    bf16 = np.array([1.0, -2.5, 0.1], np.float32)
    save_model(path, small_graph(), {"a": np.arange(3, dtype=np.uint8), "b": bf16},
               dtypes={"b": bfloat16})
    data, magic, version, header, start = read_parts(path)
    assert (magic, version) == (MAGIC, FORMAT_VERSION) and start % ALIGNMENT == 0
    assert header["graph"] == print_graph(small_graph())
    assert header["op_owners"] == {"add": "mskernel", "cast": "mskernel", "clip": "mskernel"}
    a, b = header["tensors"]["a"], header["tensors"]["b"]
    assert a == {"dtype": "uint8", "shape": [3], "offset": 0, "nbytes": 3}
    assert b == {"dtype": "bfloat16", "shape": [3], "offset": 64, "nbytes": 6}
    payload = data[start:]
    assert header["payload"] == {"nbytes": len(payload),
                                 "sha256": hashlib.sha256(payload).hexdigest()}
    assert payload[:3] == b"\x00\x01\x02" and payload[3:64] == bytes(61)
    assert payload[64:70] == bfloat16_to_bits(bf16).astype("<u2").tobytes()


# -- damaged and unreadable files ----------------------------------------------------------------

@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "model.msk"
    save_model(path, small_graph(), {"w": np.arange(100, dtype=np.float32)})
    return path


def load_error(path, registry=None) -> str:
    with pytest.raises(FileFormatError) as info:
        load_model(path, registry)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    return message[len(f"{path}: "):]


def test_truncated_files_say_how_many_bytes_are_missing(saved):
    data, _, _, header, start = read_parts(saved)
    header_end = PREFIX.size + len(data[PREFIX.size:start].rstrip(b"\0"))
    cuts = {0: f"expected at least {PREFIX.size} bytes, found 0",
            5: f"expected at least {PREFIX.size} bytes, found 5",
            PREFIX.size - 1: f"expected at least {PREFIX.size} bytes, found {PREFIX.size - 1}",
            PREFIX.size + 10: f"the header needs {header_end} bytes, found {PREFIX.size + 10}",
            header_end - 1: f"the header needs {header_end} bytes, found {header_end - 1}"}
    for cut in (header_end, start, start + 200, len(data) - 1):
        cuts[cut] = f"the header says the file holds {len(data)} bytes, found {cut}"
    for cut, detail in cuts.items():
        saved.write_bytes(data[:cut])
        assert load_error(saved) == f"truncated: {detail}", cut


def test_flipped_payload_byte_is_reported_as_corruption(saved):
    data, *_, start = read_parts(saved)
    damaged = bytearray(data)
    damaged[start + 17] ^= 0x40
    saved.write_bytes(bytes(damaged))
    assert load_error(saved).startswith("corrupt: the payload does not match its SHA-256")
    saved.write_bytes(data + b"\0")
    assert load_error(saved) == "corrupt: 1 unexpected bytes after the payload"


def test_files_of_a_newer_format_ask_for_an_upgrade(saved):
    data = bytearray(saved.read_bytes())
    struct.pack_into("<I", data, len(MAGIC), FORMAT_VERSION + 1)
    saved.write_bytes(bytes(data))
    assert load_error(saved) == (f"written by a newer mskernel (format {FORMAT_VERSION + 1}); "
                                 f"this mskernel reads up to {FORMAT_VERSION}; upgrade mskernel")


@pytest.mark.parametrize("content", [
    b"", b"PK\x03\x04 a zip file", b"\x80\x04\x95 pickle", b"MSKERNAL" + bytes(40)])
def test_other_files_are_not_mskernel_files(tmp_path, content):
    path = tmp_path / "garbage"
    path.write_bytes(content)
    if content:
        assert load_error(path) == ("not an mskernel model file (it does not start with "
                                    "b'MSKERNEL')")
    else:
        assert load_error(path).startswith("truncated")


def rewrite_header(path, edit, version=None):
    """Re-write the file at ``path`` with its JSON header changed by ``edit(header)``."""
    data, _, file_version, header, start = read_parts(path)
    edit(header)
    text = json.dumps(header).encode()
    head = PREFIX.pack(MAGIC, file_version if version is None else version, len(text)) + text
    head += bytes(-len(head) % ALIGNMENT)
    path.write_bytes(head + data[start:])


def test_invalid_headers_are_reported(saved):
    data, *_ = read_parts(saved)
    damaged = bytearray(data)
    damaged[PREFIX.size] = ord("[")
    saved.write_bytes(bytes(damaged))
    assert load_error(saved).startswith("invalid header: not UTF-8 JSON")

    saved.write_bytes(data)
    rewrite_header(saved, lambda h: h.pop("graph"))
    assert load_error(saved) == "invalid header: header field 'graph' is missing or not a string"

    saved.write_bytes(data)
    rewrite_header(saved, lambda h: h["tensors"]["w"].update(nbytes=4000))
    assert load_error(saved).startswith("invalid header: tensor 'w' (float32[100], 4000 bytes")

    saved.write_bytes(data)
    rewrite_header(saved, lambda h: h["tensors"]["w"].update(dtype="float8"))
    assert load_error(saved).startswith("invalid header: tensor 'w': unknown dtype 'float8'")

    saved.write_bytes(data)
    rewrite_header(saved, lambda h: None, version=0)
    assert load_error(saved) == "corrupt: format version 0 does not exist"

    saved.write_bytes(data)
    rewrite_header(saved, lambda h: h.update(graph=h["graph"].replace("add(", "add (%9, ")))
    assert load_error(saved).startswith(
        "the stored graph does not parse: 3:13: value %9 is not defined before this use\n")


# -- plugins the model needs ---------------------------------------------------------------------

def _expectation_infer(x):
    return tensor_type(x.dtype, ())


FAKE_OP = OpDef("fake.expectation", ("x",), _expectation_infer, lambda x: x.mean(dtype=x.dtype),
                owner="mskernel-fakeplugin")


@pytest.fixture
def plugin_model(tmp_path):
    registry = OpRegistry()
    registry.define_all(elementwise.OPS)
    registry.define(FAKE_OP)
    b = GraphBuilder("circuit", registry)
    x = b.input(tensor_type("f64", (4,)))
    graph = b.build([b.op("fake.expectation", b.op("cos", x))])
    path = tmp_path / "circuit.msk"
    save_model(path, graph, {"theta": np.ones(4)}, registry=registry)
    return path, registry


def test_ops_registered_in_process_record_no_version(plugin_model):
    path, registry = plugin_model
    model = load_model(path, registry)
    assert model.requires == {"mskernel": mskernel.__version__, "mskernel-fakeplugin": None}
    assert model.graph.nodes[1].op == "fake.expectation"


def test_missing_plugin_is_named_with_the_install_command(plugin_model):
    path, _ = plugin_model
    assert load_error(path) == (
        "this model needs mskernel-fakeplugin for op 'fake.expectation'; "
        "install it with `pip install mskernel-fakeplugin`")
    rewrite_header(path, lambda h: h["requires"].update({"mskernel-fakeplugin": "0.3.1"}))
    assert load_error(path) == (
        "this model needs mskernel-fakeplugin (>= 0.3.1) for op 'fake.expectation'; "
        "install it with `pip install mskernel-fakeplugin`")


def test_an_older_installed_distribution_asks_for_an_upgrade(saved):
    rewrite_header(saved, lambda h: h["requires"].update(mskernel="99.0"))
    assert load_error(saved) == (
        f"this model needs mskernel >= 99.0 for ops 'add', 'cast', 'clip', but "
        f"{mskernel.__version__} is installed; upgrade it with `pip install -U mskernel`")


# -- atomic writes ------------------------------------------------------------------------------

class FailingWrites:
    """A file object whose writes fail once ``budget`` bytes are written (a full disk)."""

    def __init__(self, f, budget):
        self.f, self.budget = f, budget

    def write(self, chunk):
        self.budget -= memoryview(chunk).nbytes
        if self.budget < 0:
            raise OSError(28, "No space left on device")
        return self.f.write(chunk)

    def __getattr__(self, name):
        return getattr(self.f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self.f.__exit__(*exc)


@pytest.mark.parametrize("failure", ["write", "fsync", "replace"])
def test_a_failed_write_leaves_the_previous_file_intact(saved, monkeypatch, failure):
    before = saved.read_bytes()
    real_fdopen = os.fdopen
    if failure == "write":
        monkeypatch.setattr(os, "fdopen", lambda *a, **k: FailingWrites(real_fdopen(*a, **k), 100))
    else:
        def fail(*args):
            raise OSError(5, f"simulated {failure} failure")
        monkeypatch.setattr(os, failure, fail)
    with pytest.raises(OSError):
        save_model(saved, small_graph(), {"w": np.zeros(1000, np.float32)})
    monkeypatch.undo()
    assert saved.read_bytes() == before
    assert os.listdir(saved.parent) == [saved.name]
    assert load_model(saved).weights["w"].shape == (100,)


def test_saving_replaces_the_file_in_place(saved):
    save_model(saved, small_graph(), {"v": np.zeros(2, np.int8)})
    assert list(load_model(saved).weights) == ["v"]
    assert os.listdir(saved.parent) == [saved.name]


def test_weights_must_be_stored_as_their_dtype_says(tmp_path):
    with pytest.raises(TypeError, match="tensor 'w' is a float64 array, but a bfloat16 tensor "
                                        "is stored as float32"):
        save_model(tmp_path / "m", small_graph(), {"w": np.ones(2)}, dtypes={"w": "bf16"})
    with pytest.raises(ValueError, match="dtypes names tensors that are not given: q"):
        save_model(tmp_path / "m", small_graph(), {}, dtypes={"q": "bf16"})
    assert not os.listdir(tmp_path)
