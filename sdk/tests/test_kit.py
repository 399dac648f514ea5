"""The conformance kit end to end — ``pytest --mskernel-backend NAME`` in a subprocess on
backends that are right, wrong, or wrong in expected ways — and its parts in this process."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mskernel.ir import dtype
from mskernel.testing import OpSample
from mskernel_sdk.kit.compare import mismatch
from mskernel_sdk.kit.expectations import ExpectationsError, load_expectations
from mskernel_sdk.kit.op_checks import op_samples
from mskernel_sdk.kit.report import UNRUN, Result, build_report
from mskernel_sdk.kit.shapes import reshaped
from mskernel_sdk.kit.subject import KitUsageError, resolve
from sdk_testing import REPO, SDK, environment, pip_install, pytest_argv, run

AUTODIFF = REPO / "plugins" / "autodiff"

#: A backend with three deliberate bugs: exp computes e**x - 1, neg overwrites its input,
#: and it claims an op nobody defines.  add is right.
FAULTY = '''
import numpy as np
from mskernel_sdk import (
    Availability, Backend, Capabilities, DeviceArray, Executable, OpSupport, dtype, hookimpl,
    register_plugin,
)

KERNELS = {"add": np.add, "exp": np.expm1, "neg": lambda x: np.negative(x, out=x)}
FLOATS = OpSupport(dtypes=frozenset({dtype("f32"), dtype("f64")}))


class Run(Executable):
    def __init__(self, backend, graph):
        super().__init__(graph)
        self.backend = backend

    def run(self, args):
        env = {v: a.data for v, a in zip(self.graph.inputs, args)}
        for node in self.graph.nodes:
            env[node.outputs[0]] = np.asarray(KERNELS[node.op](*(env[v] for v in node.inputs)))
        return [DeviceArray(self.backend, v.type, env[v]) for v in self.graph.outputs]


class Faulty(Backend):
    def availability(self):
        return Availability(available=True)

    def capabilities(self):
        return Capabilities({**{op: FLOATS for op in KERNELS}, "no_such_op": FLOATS})

    def to_device(self, host, type):
        return DeviceArray(self, type, host)

    def to_host(self, array):
        return array.data

    def compile(self, graph, options):
        return Run(self, graph)


class plugin:
    @hookimpl
    def mskernel_register_backends(backends):
        backends.register("faulty", Faulty)


register_plugin(plugin, "faulty")
'''

#: A toy autodiff for one-node graphs (the convention of docs/plugins.md): right rules for
#: exp and tanh, a wrong one for neg (d(-x) = ct instead of -ct).
TOY_AUTODIFF = '''
import pytest
from mskernel_sdk import GraphBuilder, hookimpl, register_plugin, rule_registry


def vjp_of_one_node(graph):
    (node,) = graph.nodes
    b = GraphBuilder(graph.name + ".vjp")
    inputs = [b.input(v.type) for v in graph.inputs]
    cotangent = b.input(graph.outputs[0].type)
    return b.build(list(rule_registry().get("vjp", node.op)(b, inputs, cotangent)))


@pytest.hookimpl(optionalhook=True)
def pytest_mskernel_vjp_builder(config):
    return vjp_of_one_node


class rules:
    @hookimpl
    def mskernel_register_rules(rules):
        rules.register("vjp", "exp", lambda b, x, ct: [b.op("mul", ct, b.op("exp", x[0]))])
        rules.register("vjp", "tanh", lambda b, x, ct: [b.op("mul", ct, b.op(
            "sub", b.op("full", shape=(), value=1, dtype=x[0].type.dtype),
            b.op("square", b.op("tanh", x[0]))))])
        rules.register("vjp", "neg", lambda b, x, ct: [ct])


register_plugin(rules, "toy_autodiff")
'''


def kit(tmp_path: Path, *argv: str, conftest: str = "", files: dict[str, str] | None = None,
        site: Path | None = None, installs: tuple[str, ...] = ()):
    """Run pytest with the kit (from the source tree) in an empty project folder; ``site``
    holds the plugins ``installs`` names."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "conftest.py").write_text(textwrap.dedent(conftest))
    for name, text in (files or {}).items():
        (project / name).write_text(textwrap.dedent(text))
    paths = [SDK / "src", *([site] if site else [])]
    env = environment(tmp_path / "home", *paths, installs=installs,
                      PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    done = run(pytest_argv("-p", "mskernel_sdk_pytest", *argv), cwd=project, env=env)
    return done, done.stdout + done.stderr


def report_of(tmp_path: Path, backend: str) -> dict:
    return json.loads((tmp_path / "home" / "conformance" / f"{backend}.json").read_text())


#: The reference semantics under another name, claiming only the primitive ops.
PRIMITIVES_ONLY = '''
from mskernel_sdk import Capabilities, hookimpl, op_registry, register_plugin
from mskernel.runtime.reference import ReferenceBackend


class PrimitivesOnly(ReferenceBackend):
    def capabilities(self):
        ops = super().capabilities().ops
        return Capabilities({op: s for op, s in ops.items() if op_registry().get(op).primitive})


class plugin:
    @hookimpl
    def mskernel_register_backends(backends):
        backends.register("prims", PrimitivesOnly)


register_plugin(plugin, "prims")
'''


def test_a_backend_claiming_the_primitives_covers_every_core_op(tmp_path):
    done, out = kit(tmp_path, "--mskernel-backend", "prims", "--mskernel-core-coverage", "100",
                    "-k", "op or coverage", conftest=PRIMITIVES_ONLY)
    assert done.returncode == 0, out
    report = report_of(tmp_path, "prims")
    assert report["core_ops"]["passed"] == report["core_ops"]["total"]
    assert report["core_ops"]["claimed"] < report["core_ops"]["total"]
    assert "softmax" in report["stages"]["ops"]["passed"]


def test_reference_backend_passes_on_every_core_op(tmp_path):
    done, out = kit(tmp_path, "--mskernel-backend", "reference", "--mskernel-core-coverage",
                    "100", "--mskernel-report", str(tmp_path / "copy.json"))
    assert done.returncode == 0, out
    report = report_of(tmp_path, "reference")
    assert report["status"] == "passed"
    assert report["core_ops"]["total"] == report["core_ops"]["passed"] > 100
    assert report["stages"]["coverage"]["passed"] == ["core"]
    assert report["stages"]["gradients"]["not_run"] == {
        "*": "no autodiff plugin installed (no op has a 'vjp' rule)"}
    assert json.loads((tmp_path / "copy.json").read_text()) == report


def test_faulty_backend_fails_with_reasons_and_seeds(tmp_path):
    done, out = kit(tmp_path, "--mskernel-backend", "faulty", "--mskernel-seed", "11",
                    "--mskernel-core-coverage", "50", conftest=FAULTY)
    assert done.returncode == 1, out
    assert "reproduce with: pytest --mskernel-backend faulty --mskernel-seed 11" in out
    report = report_of(tmp_path, "faulty")
    assert (report["status"], report["seed"]) == ("failed", 11)
    ops = report["stages"]["ops"]
    # sub is a composite the backend runs as add(x, neg(y)), and its neg writes to y
    assert ops["checked"] == ["add", "exp", "neg", "sub"] and ops["passed"] == ["add"]
    assert "input 1 was written to" in ops["failed"]["sub"]
    exp = ops["failed"]["exp"]
    assert "samples disagree with the reference semantics of 'exp' (seed 11)" in exp
    assert "exp(f32[" in exp and "elements differ (rtol 1e-05" in out
    assert "input 0 was written to" in ops["failed"]["neg"]
    assert "claims ops no installed plugin defines: no_such_op" in \
        report["stages"]["interface"]["failed"]["capabilities"]
    assert report["stages"]["coverage"]["failed"]["core"].startswith("passes 1 of ")


def test_expectations_mark_expected_failures_skips_and_stale_entries(tmp_path):
    expectations = '''
        [faulty.xfail]
        "op:exp" = "exp is off by one, issue 1"
        "op:add" = "thought to be broken"
        "interface:*" = "claims an op it does not define yet"
        [faulty.skip]
        "op:neg" = "in-place kernels, issue 2"
        "op:sub" = "runs neg, issue 2"
        "graph:resnet" = "no such graph"
    '''
    done, out = kit(tmp_path, "--mskernel-backend", "faulty", "--mskernel-expectations",
                    "expect.toml", conftest=FAULTY, files={"expect.toml": expectations})
    assert done.returncode == 1, out  # add passes although it is expected to fail
    report = report_of(tmp_path, "faulty")
    ops = report["stages"]["ops"]
    assert ops["xfailed"] == {"exp": "exp is off by one, issue 1"}
    assert ops["not_run"] == {"neg": "in-place kernels, issue 2", "sub": "runs neg, issue 2"}
    assert ops["failed"] == {"add": "passed, but is listed as expected to fail "
                                    "(thought to be broken); remove its entry"}
    assert report["stages"]["interface"]["xfailed"] == {
        "capabilities": "claims an op it does not define yet"}
    assert "interface:*" not in out.split("stale")[-1]
    assert "expectation matches no check (stale or misspelt): skip 'graph:resnet'" in out


def test_unknown_backend_is_a_usage_error_naming_the_registered_ones(tmp_path):
    done, out = kit(tmp_path, "--mskernel-backend", "nope")
    assert done.returncode == 4
    assert "no backend named 'nope' is registered; registered: reference" in out


def test_gradients_run_through_the_installed_autodiff(tmp_path):
    done, out = kit(tmp_path, "--mskernel-backend", "reference", "-k", "grad",
                    conftest=TOY_AUTODIFF)
    assert done.returncode == 1, out
    grads = report_of(tmp_path, "reference")["stages"]["gradients"]
    assert grads["passed"] == ["exp", "tanh"]
    assert list(grads["failed"]) == ["neg"]
    assert "the VJP of 'neg' disagrees with finite differences" in grads["failed"]["neg"]


@pytest.mark.skipif(not AUTODIFF.is_dir(), reason="this checkout has no plugins/autodiff")
def test_gradients_run_through_mskernel_vjp_of_the_autodiff_plugin(tmp_path):
    site = tmp_path / "site"
    pip_install(AUTODIFF, site, tmp_path)
    ops = ("exp", "matmul", "sum", "sort")
    done, out = kit(tmp_path, "--mskernel-backend", "reference", "-k",
                    " or ".join(f"grad[{op}]" for op in ops), site=site, installs=("autodiff",))
    assert done.returncode == 0, out
    grads = report_of(tmp_path, "reference")["stages"]["gradients"]
    assert grads["passed"] == sorted(ops) and not grads["failed"]


# -- the kit's parts -------------------------------------------------------------------------


def test_mismatch_is_exact_for_integers_and_tolerant_for_floats():
    f32 = dtype("f32")
    assert mismatch(np.float32([1, np.nan]), np.float32([1 + 1e-7, np.nan]), f32) is None
    assert "1 of 2 elements differ" in mismatch(np.float32([1, 2]), np.float32([1, 2.1]), f32)
    assert "exact" in mismatch(np.int32([1, 2]), np.int32([1, 3]), dtype("i32"))
    assert mismatch(np.bool_([True]), np.bool_([True]), dtype("bool")) is None
    assert mismatch(np.zeros(2), np.zeros(3), dtype("f64")) == "shape (2,), expected (3,)"


def test_reshaped_samples_broadcast_and_keep_values_and_dtypes():
    rng = np.random.default_rng(0)
    sample = OpSample("pow", (np.float32([0.5, 1.5]), np.float32([[2.0], [3.0]])))
    for _ in range(20):
        new = reshaped(sample, rng)
        shapes = [a.shape for a in new.args]
        result = np.broadcast_shapes(*shapes)
        assert result in shapes and new.label == "random-shape"
        assert set(new.args[0].ravel()) <= {0.5, 1.5} and new.args[0].dtype == np.float32
    assert reshaped(OpSample("neg", (np.zeros((0, 2), np.float32),)), rng) is None


def test_op_samples_depend_on_the_seed_only():
    def values(seed):
        return [a.tobytes() for s in op_samples("exp", seed) for a in s.args]

    assert values(3) == values(3) != values(4)
    assert any(s.label == "random-shape" for s in op_samples("exp", 3))


def test_expectations_files_are_validated(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[acme.xfial]\n"op:exp" = "typo"\n')
    with pytest.raises(ExpectationsError, match=r"unknown key\(s\) xfial"):
        load_expectations([bad], "acme")
    empty = tmp_path / "empty.toml"
    empty.write_text('[acme.skip]\n"op:exp" = ""\n')
    with pytest.raises(ExpectationsError, match="non-empty reasons"):
        load_expectations([empty], "acme")
    good = tmp_path / "good.toml"
    good.write_text('[acme.xfail]\n"op:random_*" = "bits differ"\n[other.skip]\n"op:exp" = "x"\n')
    expectations = load_expectations([good], "acme")
    assert expectations.lookup("op:random_normal") == ("xfail", "bits differ")
    assert expectations.lookup("op:exp") is None


def test_report_of_a_run_cut_short_is_partial(fresh_host):
    subject = resolve("reference")
    results = [("op", "add", Result("passed", detail="12 samples")),
               ("op", "exp", UNRUN),
               ("grad", "*", Result("not run", "no autodiff plugin installed"))]
    report = build_report(subject, 5, "0.1.0", results)
    assert report.status == "partial"
    assert report.summary.startswith("ops 1/2 passed (1 not run); gradients not run: no "
                                     "autodiff plugin installed; core ops 1/")
    assert report.stages["ops"].details == {"add": "12 samples"}


def test_resolving_an_unavailable_backend_says_why(fresh_host):
    from mskernel.hooks import plugin_host
    from mskernel.runtime import Availability
    from mskernel.runtime.reference import ReferenceBackend

    class Absent(ReferenceBackend):
        def availability(self):
            return Availability(available=False, reason="no device found")

    plugin_host().backends.register("absent", Absent, owner="mskernel-absent")
    with pytest.raises(KitUsageError, match=r"'absent' \(mskernel-absent\) cannot run here: "
                                            r"no device found"):
        resolve("absent")
