"""Model file readers: the registry plugins fill through ``mskernel_register_model_readers``,
found by a file's first bytes or its suffix, and what ``mskernel explain`` reads with it."""

import numpy as np
import pytest

from mskernel.cli import main
from mskernel.errors import FileFormatError, PluginError
from mskernel.hooks.host import host
from mskernel.hooks.registries import ModelReaderRegistry
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.ir.fileformat import load_model, save_model

pytest_plugins = ["plugin_sandbox"]

#: A plugin reading "toy" files: the text form of a graph, one input named x.
TOY_PLUGIN = '''
from mskernel.hooks import hookimpl
from mskernel.ir import parse_graph
from mskernel.ir.fileformat import Model
from mskernel.errors import FileFormatError

def read_toy(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if not text.startswith("graph"):
        raise FileFormatError(f"{path}: not a toy model")
    return Model(parse_graph(text), {}, 1, "toy", {}, {})

@hookimpl
def mskernel_register_model_readers(readers):
    readers.register("toy", read_toy, suffixes=(".toy",))
'''


def exp_graph():
    b = GraphBuilder("toy")
    x = b.input(tensor_type("f32", (2, 3)), name="x")
    return b.build([b.op("exp", x)])


def never(path):
    raise AssertionError("not this reader")


def test_the_core_reads_its_own_model_file_as_mindir(sandbox):
    reader = host().model_readers.readers["mindir"]
    assert reader.owner == "mskernel" and reader.read is load_model
    assert reader.suffixes == (".mindir", ".mskernel") and reader.magic == b"MSKERNEL"


def test_a_file_is_matched_by_its_magic_before_its_suffix(tmp_path):
    registry = ModelReaderRegistry()
    registry.register("magic", lambda path: ("magic", path), magic=b"MAGIC")
    registry.register("named", never, suffixes=(".Named",))
    path = tmp_path / "model.named"
    path.write_bytes(b"MAGIC and then data")
    assert registry.read(path) == ("magic", str(path))
    path.write_bytes(b"other bytes")
    assert registry.reader_for(path).format == "named"  # suffixes match in any case


def test_a_file_of_no_known_format_names_the_formats(tmp_path):
    registry = ModelReaderRegistry()
    registry.register("named", never, suffixes=(".named",), owner="mskernel-x")
    path = tmp_path / "model.bin"
    path.write_bytes(b"\x00" * 4)
    with pytest.raises(FileFormatError, match=r"model\.bin: not a model file of any installed "
                                              r"format \(named \(\.named, mskernel-x\)\)"):
        registry.read(path)


@pytest.mark.parametrize("call, message", [
    (lambda r: r.register("no-ident", never, suffixes=(".x",)), "not an identifier"),
    (lambda r: r.register("bare", never), "needs a magic prefix or a suffix"),
    (lambda r: r.register("dotless", never, suffixes=("x",)), "suffixes start with '.'"),
    (lambda r: r.register("first", never, suffixes=(".y",)), "already read by mskernel-a"),
    (lambda r: r.register("other", never, suffixes=(".X",)),
     r"suffix \.x is already read as 'first' by mskernel-a"),
])
def test_registration_mistakes_are_plugin_errors(call, message):
    registry = ModelReaderRegistry()
    registry.register("first", never, suffixes=(".x",), owner="mskernel-a")
    with pytest.raises(PluginError, match=message):
        call(registry)


def test_explain_reads_a_format_a_plugin_registered(sandbox, tmp_path, capsys):
    sandbox.install("mskernel-toy", {"toy": "mskernel_toy.plugin"},
                    modules={"mskernel_toy.plugin": TOY_PLUGIN})
    path = tmp_path / "model.toy"
    path.write_text(str(exp_graph()), encoding="utf-8")
    assert main(["explain", str(path), "--backends", "reference"]) == 0
    assert "graph @toy: 1 nodes on 1 backend(s) reference" in capsys.readouterr().out
    assert main(["plugins", "info", "toy"]) == 0
    assert "reads:          toy model files (.toy)" in capsys.readouterr().out.splitlines()


def test_explain_still_reads_the_core_model_file_whatever_its_name(sandbox, tmp_path, capsys):
    path = tmp_path / "model.toy"  # the magic wins over a suffix no reader claims
    save_model(path, exp_graph())
    assert main(["explain", str(path), "--backends", "reference"]) == 0
    assert "graph @toy" in capsys.readouterr().out


def test_explain_reports_a_file_it_cannot_read(sandbox, tmp_path, capsys):
    path = tmp_path / "weights.npy"
    np.save(path, np.zeros(3))
    assert main(["explain", str(path)]) == 1
    err = capsys.readouterr().err
    assert "mskernel explain:" in err and "not a model file of any installed format" in err


def test_a_plugin_that_fails_after_registering_a_reader_leaves_none(sandbox):
    failing = TOY_PLUGIN.replace(
        'readers.register("toy", read_toy, suffixes=(".toy",))',
        'readers.register("toy", read_toy, suffixes=(".toy",))\n'
        '    raise RuntimeError("half-installed")')
    sandbox.install("mskernel-toy", {"toy": "mskernel_toy.plugin"},
                    modules={"mskernel_toy.plugin": failing})
    record = host().record("toy")
    assert record.status == "broken" and "half-installed" in record.reason
    assert "toy" not in host().model_readers.readers
