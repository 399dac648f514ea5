"""sdk/examples/mskernel-npfuse, installed for real: its own tests and the conformance kit
pass on every op it claims, its fused op included, with the rest falling back."""

from __future__ import annotations

import json

from sdk_testing import SDK, environment, pip_install, pytest_argv, run

EXAMPLE = SDK / "examples" / "mskernel-npfuse"


def test_npfuse_passes_its_tests_and_the_kit(tmp_path, sdk_site):
    site = tmp_path / "site"
    pip_install(EXAMPLE, site, tmp_path)
    env = environment(tmp_path / "home", site, sdk_site, installs=["npfuse"])
    done = run(pytest_argv("-q", "--mskernel-backend", "npfuse", str(EXAMPLE)), cwd=tmp_path,
               env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "home" / "conformance" / "npfuse.json").read_text())
    assert report["status"] == "passed"
    ops = report["stages"]["ops"]
    assert "npfuse.dense" in ops["passed"] and "matmul" in ops["passed"]
    assert ops["checked"] == ops["passed"] and not ops["not_run"]
    assert report["stages"]["graphs"]["passed"] == ["mlp", "cnn", "control_flow"]
    assert 0 < report["core_ops"]["claimed"] < report["core_ops"]["total"]
