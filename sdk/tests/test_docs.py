"""docs/plugins.md is executable: its Python examples run in order in one process, its TOML
examples are read as the tools read them, its hook reference is the hookspecs' docstrings,
and its one console block (the three commands) is run by test_three_commands.py."""

from __future__ import annotations

import json
import re
import sys
import tomllib

from mskernel_sdk.docs import with_hooks
from mskernel_sdk.kit.expectations import load_expectations
from sdk_testing import DOCS, SDK, environment, run

FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)

RUNNER = '''
import json, sys
blocks = json.load(open(sys.argv[1]))
namespace = {"__name__": "__docs__"}
for line, code in blocks:
    exec(compile("\\n" * (line - 1) + code, sys.argv[2], "exec"), namespace)
print(f"ran {len(blocks)} examples")
'''


def blocks(language: str) -> list[tuple[int, str]]:
    """``(first line of the code, code)`` of each fenced block of ``language``."""
    page = DOCS.read_text(encoding="utf-8")
    return [(page.count("\n", 0, m.start(2)) + 1, m.group(2)) for m in FENCE.finditer(page)
            if m.group(1) == language]


def test_every_block_is_python_toml_or_the_three_commands():
    page = DOCS.read_text(encoding="utf-8")
    languages = [m.group(1) for m in FENCE.finditer(page)]
    assert set(languages) == {"python", "toml", "console"} and languages.count("console") == 1


def test_python_examples_run_in_order(tmp_path):
    examples = blocks("python")
    assert len(examples) >= 5
    (tmp_path / "blocks.json").write_text(json.dumps(examples))
    (tmp_path / "runner.py").write_text(RUNNER)
    env = environment(tmp_path / "home", SDK / "src", MSKERNEL_DISABLE_PLUGINS="all")
    done = run([sys.executable, "runner.py", "blocks.json", str(DOCS)], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"ran {len(examples)} examples" in done.stdout
    assert "preference tiny > reference" in done.stdout  # the printed placement report


def test_toml_examples_are_what_the_tools_read(tmp_path):
    pyproject, expectations = (tomllib.loads(code) for _, code in blocks("toml"))
    assert pyproject["project"]["entry-points"]["mskernel.plugins"] == {
        "acme": "mskernel_acme.plugin"}
    path = tmp_path / "conformance.toml"
    path.write_text(blocks("toml")[1][1])
    loaded = load_expectations([path], "acme")
    assert loaded.lookup("op:erf") == ("xfail", expectations["acme"]["xfail"]["op:erf"])
    assert loaded.lookup("graph:cnn")[0] == "skip"


def test_hook_reference_is_rendered_from_the_hookspecs():
    page = DOCS.read_text(encoding="utf-8")
    assert with_hooks(page) == page, (
        "the hookspecs changed: run `python -m mskernel_sdk.docs docs/plugins.md`")
