"""``.onnx`` files as model files: ``mskernel.load``, ``nn.GraphCell``, ``mskernel convert``
and ``mskernel explain`` read them through the importer."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from onnx import helper

import mskernel
from mskernel.cli import main
from mskernel_onnx.migration import torch_to_onnx
from mskernel_sdk import FileFormatError, assert_close, dtype
from models import example, float32_tolerance
from onnx_models import model, tensor
from workloads import torch_models


@pytest.fixture(scope="module")
def lenet(tmp_path_factory):
    """A LeNet-5 exported by PyTorch to ``lenet.onnx``, its input and PyTorch's output."""
    folder = tmp_path_factory.mktemp("reader")
    torch.manual_seed(0)
    module = torch_models.LeNet5().eval()
    x = example("lenet", np.random.default_rng(0))
    with torch.no_grad():
        expected = module(torch.from_numpy(x)).numpy()
    path = folder / "lenet.onnx"
    path.write_bytes(torch_to_onnx(module, [torch.from_numpy(x)]).SerializeToString())
    return path, x, expected


def run_cell(loaded, x: np.ndarray) -> np.ndarray:
    return mskernel.nn.GraphCell(loaded)(mskernel.Tensor(x)).numpy()


def test_load_reads_an_onnx_file_for_graph_cell(lenet):
    path, x, expected = lenet
    loaded = mskernel.load(path)
    assert {"conv1.weight", "fc3.bias"} <= set(loaded.weights)
    assert loaded.producer.startswith("pytorch")
    assert_close(run_cell(loaded, x), expected, dtype("float32"),
                 **float32_tolerance("lenet", expected))


def test_convert_an_onnx_file_to_a_model_file_and_back(lenet, tmp_path, capsys):
    path, x, expected = lenet
    mindir, onnx_again = tmp_path / "lenet.mindir", tmp_path / "again.onnx"
    assert main(["convert", str(path), "-o", str(mindir)]) == 0
    assert main(["convert", str(mindir), "-o", str(onnx_again)]) == 0
    assert capsys.readouterr().out.count("wrote") == 2
    for converted in (mindir, onnx_again):
        assert_close(run_cell(mskernel.load(converted), x), expected, dtype("float32"),
                     what=str(converted), **float32_tolerance("lenet", expected))


def test_explain_reads_an_onnx_file(lenet, capsys):
    assert main(["explain", str(lenet[0]), "--backends", "reference"]) == 0
    assert "conv" in capsys.readouterr().out


def test_a_model_the_file_does_not_make_static_says_how_to_import_it(tmp_path):
    path = tmp_path / "open.onnx"
    path.write_bytes(model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", ["N", 3])],
                           [tensor("y", ["N", 3])]).SerializeToString())
    with pytest.raises(FileFormatError, match=r"open\.onnx: .*'N' .*input_types"):
        mskernel.load(path)


def test_a_damaged_onnx_file_is_a_file_format_error(lenet, tmp_path, capsys):
    damaged = tmp_path / "damaged.onnx"
    damaged.write_bytes(lenet[0].read_bytes()[:200])
    with pytest.raises(FileFormatError, match="damaged.onnx"):
        mskernel.load(damaged)
    assert main(["explain", str(damaged)]) == 1
    assert capsys.readouterr().err.startswith(f"mskernel explain: {damaged}")
