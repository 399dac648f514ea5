"""``mskernel sdk new-plugin``: what it writes, the names it refuses, and — installed for real —
that a generated library plugin loads and passes its own tests without edits (the backend
kind is exercised end to end by test_three_commands.py)."""

from __future__ import annotations

import json
import tomllib

import pytest

import mskernel_sdk.plugin
from mskernel.cli import main
from mskernel_sdk import core_requirement, register_plugin
from mskernel_sdk.template import KINDS, PluginNames, TemplateError, check_name, new_plugin
from sdk_testing import environment, mskernel, pip_install, pytest_argv, run

EXPECTED_FILES = {
    "backend": ["README.md", "conformance.toml", "pyproject.toml",
                "src/mskernel_acme_gpu/__init__.py", "src/mskernel_acme_gpu/backend.py",
                "src/mskernel_acme_gpu/plugin.py", "tests/test_backend.py"],
    "library": ["README.md", "pyproject.toml", "src/mskernel_acme_gpu/__init__.py",
                "src/mskernel_acme_gpu/api.py", "src/mskernel_acme_gpu/ops.py",
                "src/mskernel_acme_gpu/plugin.py", "tests/test_ops.py"],
}


@pytest.mark.parametrize("kind", KINDS)
def test_generates_a_complete_distribution(tmp_path, fresh_host, kind):
    root, written = new_plugin("acme_gpu", kind, tmp_path)
    assert root == tmp_path / "mskernel-acme-gpu"
    assert sorted(str(p) for p in written) == EXPECTED_FILES[kind]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert project["name"] == "mskernel-acme-gpu"
    assert project["entry-points"]["mskernel.plugins"] == {"acme_gpu": "mskernel_acme_gpu.plugin"}
    assert core_requirement() in project["dependencies"]
    for path in written:
        text = (root / path).read_text()
        assert "$" not in text, path  # every placeholder filled
        if path.suffix == ".py":
            compile(text, str(path), "exec")
    if kind == "backend":
        assert "[acme_gpu.xfail]" in (root / "conformance.toml").read_text()


def test_derived_names():
    names = PluginNames("acme_gpu")
    assert (names.distribution, names.package, names.class_prefix) == (
        "mskernel-acme-gpu", "mskernel_acme_gpu", "AcmeGpu")


@pytest.mark.parametrize("name, kind, message", [
    ("Acme", "backend", "must be lower case letters and digits"),
    ("acme-gpu", "backend", "words joined by '_'"),
    ("2acme", "library", "starting with a letter"),
    ("reference", "backend", "a backend named 'reference' is already registered by mskernel"),
    ("ir", "library", "namespace name 'ir' is taken by the core"),
    ("acme", "transform", "unknown kind 'transform'"),
])
def test_refuses_names_it_cannot_use(fresh_host, name, kind, message):
    with pytest.raises(TemplateError, match=message):
        check_name(name, kind)


def test_command_writes_the_plugin_and_never_overwrites(tmp_path, fresh_host, capsys):
    register_plugin(mskernel_sdk.plugin, "sdk", distribution="mskernel-sdk")
    assert main(["sdk", "new-plugin", "acme", "--kind", "library",
                 "--directory", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"created {tmp_path}/mskernel-acme/ (library plugin 'acme')" in out
    assert f"pip install {tmp_path}/mskernel-acme" in out
    assert main(["sdk", "new-plugin", "acme", "--directory", str(tmp_path)]) == 1
    assert "already exists" in capsys.readouterr().err


def test_generated_library_installs_loads_and_passes_its_tests(tmp_path, sdk_site):
    site = tmp_path / "site"
    # with the cpu backend, where installed: the op's host kernel runs beside it
    env = environment(tmp_path / "home", site, sdk_site, installs=["softy", "cpu"])
    run(mskernel("sdk", "new-plugin", "softy", "--kind", "library"), cwd=tmp_path, env=env,
        check=True)
    pip_install(tmp_path / "mskernel-softy", site, tmp_path)
    listing = run(mskernel("plugins", "list", "--json"), cwd=tmp_path, env=env, check=True)
    rows = {row["name"]: row for row in json.loads(listing.stdout)}
    assert (rows["softy"]["status"], rows["softy"]["kind"]) == ("ok", "library")
    tests = run(pytest_argv("-q", "tests"), cwd=tmp_path / "mskernel-softy", env=env)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "4 passed" in tests.stdout
