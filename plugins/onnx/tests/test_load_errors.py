"""``mskernel.load`` of a file that is not a sound model file: a truncated, damaged or forged
file, one that needs a plugin that is not installed, or no model at all, is a clear one-line
``FileFormatError`` naming the file (the core's checks, reached through the public load
path) — never another exception, never a model that differs from what was saved."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mskernel
from mskernel.ir.fileformat import FORMAT_VERSION, MAGIC
from mskernel.testing.filefuzz import Parts, mutants, outcomes, same_arrays, seal
from mskernel_sdk import FileFormatError
from models import build, example


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("load")
    net = build("lenet")
    x = mskernel.Tensor(example("lenet", np.random.default_rng(0)))
    path = mskernel.export(net, x, file_name=folder / "lenet")
    return folder, path, mskernel.load(path)


def same(model, original) -> bool:
    return (str(model.graph) == str(original.graph)
            and model.weights.keys() == original.weights.keys()
            and all(same_arrays(a, original.weights[n]) for n, a in model.weights.items()))


def test_damaged_and_forged_files_are_clear_errors(exported):
    folder, path, original = exported
    with open(path, "rb") as f:
        data = f.read()
    counts, others = outcomes(str(folder / "mutant.mindir"), mutants(data, 120, seed=3),
                              mskernel.load, lambda m: same(m, original))
    assert others == []
    assert counts["damaged", "error"] > 50 and counts["forged", "error"] > 30


@pytest.mark.parametrize("cut", [0, 7, 8, 30, 100, -1])
def test_a_truncated_file_names_itself(exported, cut):
    folder, path, _ = exported
    with open(path, "rb") as f:
        data = f.read()
    target = folder / "cut.mindir"
    target.write_bytes(data[:cut] if cut >= 0 else data[:len(data) // 2])
    with pytest.raises(FileFormatError) as error:
        mskernel.load(target)
    assert str(error.value).startswith(f"{target}: ") and "\n" not in str(error.value)


def _forge(path, target, edit):
    with open(path, "rb") as f:
        parts = Parts.of(f.read())
    header = parts.header
    edit(header)
    target.write_bytes(seal(MAGIC, FORMAT_VERSION, json.dumps(header).encode(), parts.payload))


def test_a_model_needing_a_missing_plugin_says_what_to_install(exported):
    folder, path, _ = exported
    target = folder / "needs.mindir"

    def edit(header):
        header["requires"]["mskernel-warp"] = "2.0"
        header["op_owners"]["conv"] = "mskernel-warp"

    _forge(path, target, edit)
    with pytest.raises(FileFormatError, match=r"needs mskernel-warp \(>= 2.0\) for op 'conv'; "
                                              r"install it with `pip install mskernel-warp`"):
        mskernel.load(target)


def test_graph_text_that_is_not_a_graph_is_refused_without_running_it(exported):
    folder, path, _ = exported
    target = folder / "code.mindir"
    marker = folder / "pwned"
    _forge(path, target, lambda h: h.update(graph=f"__import__('os').system('touch {marker}')"))
    with pytest.raises(FileFormatError, match="the stored graph does not parse"):
        mskernel.load(target)
    assert not marker.exists()


def test_no_model_file_and_no_file(tmp_path):
    target = tmp_path / "weights.npy"
    np.save(target, np.zeros(3))
    with pytest.raises(FileFormatError, match="not a model file of any installed format"):
        mskernel.load(target)
    with pytest.raises(FileNotFoundError):
        mskernel.load(tmp_path / "missing.mindir")
