"""The three commands of docs/plugins.md, run as written in a fresh folder: a backend is
created, installed, listed as ok and certified, and ``mskernel plugins info`` shows the kit's
report.

The commands run in subprocesses of this interpreter: ``mskernel`` as ``python -m
mskernel.cli``, ``pytest`` as ``python -m pytest``, and ``pip install`` into a folder on
``PYTHONPATH`` (``--target``, no dependencies: the core and the SDK are already there).
"""

from __future__ import annotations

import json
import re
import shlex
import sys

from sdk_testing import DOCS, environment, mskernel, pytest_argv, run

MARKER = "<!-- the three commands: run by sdk/tests/test_three_commands.py -->"


def documented_commands() -> list[list[str]]:
    page = DOCS.read_text(encoding="utf-8")
    block = re.match(r"\s*```console\n(.*?)```", page[page.index(MARKER) + len(MARKER):], re.S)
    assert block, f"no console block after the marker in {DOCS}"
    return [shlex.split(line.removeprefix("$ ")) for line in block.group(1).splitlines()]


def as_subprocess(argv: list[str], site: str) -> list[str]:
    program, *args = argv
    if program == "mskernel":
        return mskernel(*args)
    if program == "pip":
        return [sys.executable, "-m", "pip", *args, "--quiet", "--no-deps",
                "--no-build-isolation", "--disable-pip-version-check", "--target", site]
    assert program == "pytest", argv
    return pytest_argv(*args)


def test_create_install_list_certify(tmp_path, sdk_site):
    commands = documented_commands()
    assert [c[0] for c in commands] == ["mskernel", "pip", "pytest"]
    site, home = tmp_path / "site", tmp_path / "home"
    env = environment(home, site, sdk_site, installs=["acme"])
    create, install, certify = (as_subprocess(c, str(site)) for c in commands)

    created = run(create, cwd=tmp_path, env=env, check=True)
    assert "created ./mskernel-acme/ (backend plugin 'acme')" in created.stdout
    run(install, cwd=tmp_path, env=env, check=True)

    listing = json.loads(run(mskernel("plugins", "list", "--json"), cwd=tmp_path, env=env,
                             check=True).stdout)
    acme = next(row for row in listing if row["name"] == "acme")
    assert (acme["distribution"], acme["kind"], acme["status"]) == (
        "mskernel-acme", "backend", "ok")

    certified = run(certify, cwd=tmp_path, env=env)
    assert certified.returncode == 0, certified.stdout + certified.stderr
    assert re.search(r"seed \d+ \(reproduce with --mskernel-seed \d+\)", certified.stdout)
    assert "backend 'acme': passed:" in certified.stdout

    report = json.loads((home / "conformance" / "acme.json").read_text())
    assert report["status"] == "passed" and report["distribution"] == "mskernel-acme"
    ops = report["stages"]["ops"]
    assert ops["checked"] == ops["passed"] == sorted(  # square: the template runs it as mul
        ["add", "sub", "mul", "div", "maximum", "neg", "exp", "tanh", "relu", "square"])
    assert report["stages"]["gradients"]["not_run"] == {
        "*": "no autodiff plugin installed (no op has a 'vjp' rule)"}
    assert report["stages"]["graphs"]["passed"] == ["mlp", "cnn", "control_flow"]
    own_tests, kit_checks = 2, len(report["stages"]["interface"]["passed"]) + len(ops["passed"]) + 3
    assert f"{own_tests + kit_checks} passed, 1 skipped" in certified.stdout  # grad: not run

    info = run(mskernel("plugins", "info", "acme"), cwd=tmp_path, env=env, check=True).stdout
    line = next(l for l in info.splitlines() if l.startswith("  conformance:"))
    assert line.split(None, 1)[1].startswith(f"passed: {report['summary'][:60]}")
    details = json.loads(run(mskernel("plugins", "info", "acme", "--json"), cwd=tmp_path,
                             env=env, check=True).stdout)
    assert details["backends"][0]["conformance"]["report"] == report
