"""Availability: without a driver or device the plugin imports, reports itself unavailable
with what is missing and what was probed, and nothing else breaks."""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys

import numpy as np

from mskernel.hooks.host import host
from mskernel_sdk import GraphBuilder, compile_graph, tensor_type

from mskernel_gpu import probe as probe_module
from mskernel_gpu.kernels import FALLBACK


def test_a_missing_driver_is_named_with_everything_probed(monkeypatch):
    real = ctypes.CDLL

    def no_driver(name, *args, **kwargs):
        if name == "libcuda.so.1":
            raise OSError("libcuda.so.1: cannot open shared object file")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(probe_module.ctypes, "CDLL", no_driver)
    found = probe_module.probe.__wrapped__()
    assert not found.available
    assert found.missing[0].startswith("no CUDA driver: libcuda.so.1 not found")
    summary = found.summary()
    for probed in ("driver: libcuda.so.1 not found", "devices: none", "CuPy: cupy-cuda12x 14.",
                   "nvrtc: NVRTC 12.", "cublas:", "cudnn:", "cuDNN frontend:"):
        assert probed in summary, probed


def test_a_driver_without_devices_is_named(monkeypatch):
    class NoDevices(probe_module._Driver):
        def __init__(self):
            pass

        def version(self):
            return "12.8"

        def devices(self):
            return ()

    monkeypatch.setattr(probe_module, "_Driver", NoDevices)
    found = probe_module.probe.__wrapped__()
    assert "no CUDA device (the driver, CUDA 12.8, counts 0)" in found.missing
    assert "driver: libcuda.so.1, CUDA 12.8" in found.summary()


def test_the_listing_shows_the_backend_and_what_falls_back():
    command = [sys.executable, "-c", "from mskernel.cli import main; main()", "plugins"]
    out = subprocess.run([*command, "list", "--json"], capture_output=True, text=True,
                         check=True).stdout
    (gpu,) = [p for p in json.loads(out) if p["name"] == "gpu"]
    info = subprocess.run([*command, "info", "gpu"], capture_output=True, text=True,
                          check=True).stdout
    found = probe_module.probe()
    if found.available:
        assert gpu["status"] == "ok"
    else:
        assert gpu["status"] == "unavailable"
        assert found.missing[0] in " ".join(info.split())
    for op in FALLBACK:
        assert op in info


def test_graphs_still_compile_and_run_on_the_other_backends():
    host().load_external()
    b = GraphBuilder("g")
    x = b.input(tensor_type("f32", (2, 3)), "x")
    graph = b.build([b.op("exp", b.op("neg", x))])
    arg = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    (out,) = compile_graph(graph)(arg)
    np.testing.assert_allclose(np.asarray(out), np.exp(-arg), rtol=1e-6)
