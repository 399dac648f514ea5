"""The plugin is discovered through its entry point and registers cleanly; importing it loads
no converter code."""

import subprocess
import sys

import mskernel
from mskernel.hooks import plugin_host
from mskernel_onnx import api


def test_plugin_is_discovered_and_healthy():
    record = plugin_host().record("onnx")
    assert record is not None
    assert record.distribution == "mskernel-onnx"
    assert record.status == "ok", record


def test_export_and_load_are_top_level_names():
    assert mskernel.export is api.export and mskernel.load is api.load


def test_convert_is_a_command():
    assert plugin_host().commands().commands["convert"].owner == "mskernel-onnx"


def test_importing_the_plugin_module_loads_no_onnx():
    code = "import sys, mskernel_onnx.plugin; print('onnx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
