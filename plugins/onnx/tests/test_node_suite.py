"""ONNX's own node test suite (``onnx.backend.test``, kind "node", the data shipped in the
onnx 1.22.0 wheel) on the import path: each test's model is imported, compiled and run by
``mskernel_onnx.backend`` against ONNX's expected outputs.

The suite runs on the reference backend (``backends=("reference",)``): it checks the import
and the ops' semantics for every dtype, without the cpu backend's kernel compilation, so all
~1770 CPU tests run in one process in well under a minute.  Tests that are expected to fail
are listed, with the reason, in ``node_suite_expected_failures.toml``; they run as expected
failures, so one that starts passing is reported.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import onnx.backend.test

from mskernel_onnx.backend import MskernelBackend

EXPECTED_FAILURES = Path(__file__).with_name("node_suite_expected_failures.toml")


class ReferenceBackend(MskernelBackend):
    backends = ("reference",)


def expected_failures() -> dict[str, str]:
    """Pattern → reason, over every table of the file."""
    tables = tomllib.loads(EXPECTED_FAILURES.read_text(encoding="utf-8"))
    return {pattern: reason for table in tables.values() for pattern, reason in table.items()}


def _node_tests() -> type:
    runner = onnx.backend.test.BackendTest(ReferenceBackend, __name__)
    for pattern in expected_failures():
        runner.xfail(pattern)
    cases = runner.test_cases["OnnxBackendNodeModelTest"]
    for name in [n for n in vars(cases) if n.startswith("test_") and not n.endswith("_cpu")]:
        delattr(cases, name)  # CUDA variants: the backend runs on CPU only
    return cases


OnnxBackendNodeModelTest = _node_tests()


def test_every_expected_failure_names_a_test():
    names = [n for n in vars(OnnxBackendNodeModelTest) if n.startswith("test_")]
    stale = [p for p in expected_failures() if not any(re.search(p, n) for n in names)]
    assert not stale, f"patterns matching no test: {stale}"
    assert len(names) > 1700
