"""``mskernel convert``: a model file read in any registered format, written in the format its
output suffix names."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import mskernel
from mskernel.cli import main
from mskernel_onnx.export import check_onnx
from mskernel_sdk import assert_close, dtype
from models import build, example, float32_tolerance
from onnx_checks import run_ort


@pytest.fixture(scope="module")
def lenet(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    net = build("lenet")
    x = example("lenet", np.random.default_rng(0))
    path = mskernel.export(net, mskernel.Tensor(x), file_name=folder / "lenet")
    return folder, path, x, net(mskernel.Tensor(x)).numpy()


@pytest.mark.parametrize("opset", [13, 18, 23])
def test_convert_a_model_file_to_onnx(lenet, opset, capsys):
    folder, path, x, expected = lenet
    out = folder / f"lenet{opset}.onnx"
    assert main(["convert", path, "-o", str(out), "--opset", str(opset)]) == 0
    assert capsys.readouterr().out == (f"wrote {out} (ONNX, opset {opset}, 22 nodes, "
                                       "10 weights)\n")
    check_onnx(out)
    model = onnx.load(str(out))
    assert model.opset_import[0].version == opset
    (got,) = run_ort(model, [x])
    assert_close(got, expected, dtype("float32"), **float32_tolerance("lenet", expected))


def test_convert_a_model_file_to_a_model_file(lenet, capsys):
    folder, path, x, expected = lenet
    out = folder / "copy.mindir"
    assert main(["convert", path, "-o", str(out)]) == 0
    copy = mskernel.load(out)
    assert str(copy.graph) == str(mskernel.load(path).graph)
    got = mskernel.nn.GraphCell(copy)(mskernel.Tensor(x)).numpy()
    np.testing.assert_array_equal(got, expected)


def test_an_output_suffix_of_no_known_format_is_a_usage_error(lenet, capsys):
    folder, path, *_ = lenet
    assert main(["convert", path, "-o", str(folder / "lenet.pt")]) == 2
    assert "cannot tell the format of" in capsys.readouterr().err


def test_an_unreadable_input_is_reported(tmp_path, capsys):
    bad = tmp_path / "bad.mindir"
    bad.write_bytes(b"MSKERNEL and not much else")
    assert main(["convert", str(bad), "-o", str(tmp_path / "out.onnx")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"mskernel convert: {bad}: ") and not (tmp_path / "out.onnx").exists()


def test_an_opset_out_of_range_is_refused(lenet, capsys):
    folder, path, *_ = lenet
    with pytest.raises(SystemExit) as exit_:
        main(["convert", path, "-o", str(folder / "x.onnx"), "--opset", "12"])
    assert exit_.value.code == 2
