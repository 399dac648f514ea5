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


def pytest_collection_modifyitems(config, items):
    found = probe()
    if found.available:
        return
    if os.environ.get("MSKERNEL_REQUIRE_GPU") == "1":
        reason = f"MSKERNEL_REQUIRE_GPU=1 but the gpu backend is unavailable: {found.summary()}"
        fail = pytest.mark.usefixtures("_gpu_required")
        for item in items:
            if item.get_closest_marker("gpu") is not None:
                item.add_marker(fail)
        config._mskernel_gpu_missing = reason
        return
    skip = pytest.mark.skip(reason=f"no usable NVIDIA GPU: {'; '.join(found.missing)}")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


@pytest.fixture
def _gpu_required(request):
    pytest.fail(request.config._mskernel_gpu_missing)
