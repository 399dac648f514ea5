"""ONNX's node test suite (the ``onnx`` wheel's backend tests, kind "node") run on mskernel's
ONNX backend and on onnxruntime's, side by side, in one process each after the other.

    python benchmarks/onnx/node_suite.py                 # both, the table of counts
    python benchmarks/onnx/node_suite.py --only mskernel --list failures.txt -k conv

Prints passed / failed / errored / skipped per backend and the wall time; ``--list`` writes
each test that did not pass with its first error line.
"""

from __future__ import annotations

import argparse
import importlib
import re
import time
import unittest
import warnings

import onnx.backend.test

BACKENDS = {"mskernel": "mskernel_onnx.backend", "onnxruntime": "onnxruntime.backend"}


def node_tests(backend_module, pattern: str = "") -> unittest.TestSuite:
    """The CPU node tests of ONNX's suite, as a unittest suite for ``backend_module``."""
    runner = onnx.backend.test.BackendTest(backend_module, __name__)
    cases = runner.test_cases["OnnxBackendNodeModelTest"]
    names = sorted(n for n in dir(cases) if n.startswith("test_") and n.endswith("_cpu")
                   and re.search(pattern, n))
    return unittest.TestSuite(cases(n) for n in names)


def run(backend: str, pattern: str = "") -> tuple[unittest.TestResult, float]:
    module = importlib.import_module(BACKENDS[backend])
    if backend == "onnxruntime":
        importlib.import_module("onnxruntime").set_default_logger_severity(3)  # errors only
    suite = node_tests(module, pattern)
    result = unittest.TestResult()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        suite.run(result)
    return result, time.perf_counter() - start


def counts(result: unittest.TestResult) -> dict[str, int]:
    failed = len(result.failures) + len(result.unexpectedSuccesses)
    errored, skipped = len(result.errors), len(result.skipped)
    passed = result.testsRun - failed - errored - skipped - len(result.expectedFailures)
    return {"passed": passed, "failed": failed + len(result.expectedFailures),
            "errored": errored, "skipped": skipped}


def not_passed(result: unittest.TestResult) -> list[str]:
    lines = []
    for kind, items in (("FAIL", result.failures), ("ERROR", result.errors),
                        ("XFAIL", result.expectedFailures)):
        for test, trace in items:
            last = [line for line in trace.strip().splitlines() if line.strip()][-1]
            lines.append(f"{kind} {test.id().rsplit('.', 1)[-1]}: {last[:300]}")
    lines += [f"SKIP {t.id().rsplit('.', 1)[-1]}: {why}" for t, why in result.skipped]
    return sorted(lines, key=lambda line: line.split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(BACKENDS))
    parser.add_argument("-k", default="", help="regular expression selecting tests by name")
    parser.add_argument("--list", help="write the tests that did not pass to this file")
    args = parser.parse_args()
    rows = []
    for backend in [args.only] if args.only else list(BACKENDS):
        result, seconds = run(backend, args.k)
        rows.append((backend, counts(result), seconds))
        if args.list:
            with open(args.list if len(rows) == 1 else f"{args.list}.{backend}", "w") as f:
                f.write("\n".join(not_passed(result)) + "\n")
    print(f"{'backend':<12} {'passed':>7} {'failed':>7} {'errored':>8} {'skipped':>8} {'seconds':>8}")
    for backend, c, seconds in rows:
        print(f"{backend:<12} {c['passed']:>7} {c['failed']:>7} {c['errored']:>8} "
              f"{c['skipped']:>8} {seconds:>8.1f}")


if __name__ == "__main__":
    main()
