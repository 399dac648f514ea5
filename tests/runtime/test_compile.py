"""compile_graph: generic passes before partitioning, errors, and `mskernel explain`."""

import numpy as np
import pytest

from mskernel.cli import main
from mskernel.errors import MskernelError
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.ir.fileformat import save_model
from mskernel.runtime import CompileOptions, compile_graph, explain


def redundant_graph():
    b = GraphBuilder("redundant")
    x = b.input(tensor_type("f32", (2, 3)), "x")
    one = b.op("full", shape=(2, 3), value=1.0, dtype="f32")
    y = b.op("mul", b.op("exp", x), one)
    z = b.op("exp", x)  # a duplicate of the first exp
    b.op("sin", x)  # dead
    return b.build([b.op("add", y, z)])


def test_generic_pipeline_runs_before_placement():
    g = redundant_graph()
    assert len(compile_graph(g, options=CompileOptions(opt_level=0)).graph.nodes) == 6
    optimized = compile_graph(g, options=CompileOptions(opt_level=2)).graph
    assert sorted(n.op for n in optimized.nodes) == ["add", "exp"]
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    (out,) = compile_graph(g)(x)
    np.testing.assert_allclose(out, 2 * np.exp(x), rtol=1e-6)


def test_wrong_input_shape_is_named():
    compiled = compile_graph(redundant_graph())
    with pytest.raises(MskernelError, match=r"graph input x expects f32\[2,3\], got an array of shape \(3,\)"):
        compiled(np.zeros(3, np.float32))


def test_unknown_backend_lists_the_registered_ones():
    with pytest.raises(MskernelError, match=r"unknown backend 'tpu'; registered: .*reference"):
        compile_graph(redundant_graph(), backends=["tpu"])


def test_explain_api_and_cli_agree(tmp_path, capsys):
    g = redundant_graph()
    path = tmp_path / "model.mskernel"
    save_model(path, g)
    assert main(["explain", str(path), "--backends", "reference"]) == 0
    printed = capsys.readouterr().out
    assert printed == explain(g, backends=["reference"])
    assert "graph @redundant: 2 nodes on 1 backend(s) reference" in printed
    assert "transfers: 0 (0 B)" in printed


def test_explain_cli_reports_unreadable_files(tmp_path, capsys):
    bad = tmp_path / "bad.mskernel"
    bad.write_bytes(b"not a model")
    assert main(["explain", str(bad)]) == 1
    assert "mskernel explain:" in capsys.readouterr().err
