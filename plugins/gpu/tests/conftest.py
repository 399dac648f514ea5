"""Shared fixtures of the gpu backend's tests.

Tests marked ``gpu`` need an NVIDIA GPU with its driver.  Without one they are skipped —
and they are not what CI counts: the CPU-side tests (code generation compiled by NVRTC,
fusion decisions, planning, the kernels' array code on NumPy, the availability report) run
everywhere.  ``benchmarks/gpu/run_on_gpu.sh`` sets ``MSKERNEL_REQUIRE_GPU=1``, under which a
missing device fails every ``gpu`` test instead of skipping it.
"""

from __future__ import annotations

import os

import pytest

from mskernel_gpu.probe import probe


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU with its driver")


def _missing() -> str:
    found = probe()
    return "" if found.available else "; ".join(found.missing)


def pytest_runtest_setup(item):
    if item.get_closest_marker("gpu") is None:
        return
    missing = _missing()
    if not missing:
        return
    if os.environ.get("MSKERNEL_REQUIRE_GPU") == "1":
        pytest.fail(f"MSKERNEL_REQUIRE_GPU=1 but the gpu backend is unavailable: {missing}",
                    pytrace=False)
    pytest.skip(f"no usable NVIDIA GPU: {missing}")
