"""Availability: what of CANN the probe finds, and that nothing is ever shown as available
without pyACL, libascendcl.so and an NPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mskernel_ascend import probe
from mskernel_ascend.npu import AscendBackend

CANN_VARIABLES = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "LD_LIBRARY_PATH")


@pytest.fixture
def bare(monkeypatch: pytest.MonkeyPatch) -> None:
    """No CANN variable set."""
    for name in CANN_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_nothing_found_here_is_reported_item_by_item(bare: None) -> None:
    found = probe()
    assert {f.what for f in found.missing} >= {"acl", "libascendcl.so", "atc", "npu-smi",
                                              "NPU devices"}
    availability = AscendBackend().availability()
    assert not availability.available
    for what in ("$ASCEND_HOME_PATH (unset)", "acl: not found", "libascendcl.so: not found",
                 "npu-smi: not found", "/dev/davinci", "ascend-emulate"):
        assert what in availability.reason


def fake_toolkit(root: Path) -> Path:
    """A directory laid out as CANN's toolkit: the library and ATC, neither of them real."""
    (root / "lib64").mkdir(parents=True)
    (root / "lib64" / "libascendcl.so").write_bytes(b"")
    (root / "bin").mkdir()
    atc = root / "bin" / "atc"
    atc.write_text("#!/bin/sh\nexit 1\n")
    atc.chmod(0o755)
    return root


def test_a_toolkit_without_pyacl_or_an_npu_stays_unavailable(
        bare: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = fake_toolkit(tmp_path / "latest")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(root))
    found = probe()
    assert found.toolkit_root == root
    assert found.finding("libascendcl.so").found
    assert found.finding("atc").detail == str(root / "bin" / "atc")
    assert not found.runtime_ready
    availability = AscendBackend().availability()
    assert not availability.available
    assert "found: CANN toolkit, libascendcl.so, atc" in availability.reason
    assert "acl: not found" in availability.reason


def test_the_toolkit_variables_are_read_in_order(bare: None, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = fake_toolkit(tmp_path / "a"), fake_toolkit(tmp_path / "b")
    monkeypatch.setenv("ASCEND_TOOLKIT_HOME", str(second))
    assert probe().toolkit_root == second
    monkeypatch.setenv("ASCEND_HOME_PATH", str(first))
    assert probe().toolkit_root == first


def test_plugins_info_lists_what_was_probed(bare: None) -> None:
    done = subprocess.run([sys.executable, "-m", "mskernel.cli", "plugins", "info", "ascend"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "'ascend', priority 200, NOT available: no Ascend NPU runtime" in text
    assert "libascendcl.so: not found" in text and "npu-smi: not found" in text
    assert "'ascend-emulate', priority -2000, available" in text


def test_plugins_list_says_the_npu_backend_is_unavailable_and_why(bare: None) -> None:
    done = subprocess.run([sys.executable, "-m", "mskernel.cli", "plugins", "list"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("backend 'ascend'")]
    assert line.startswith("backend 'ascend' (mskernel-ascend) unavailable: no Ascend NPU "
                           "runtime: CANN toolkit, acl, libascendcl.so, atc, npu-smi, NPU "
                           "devices not found.")
