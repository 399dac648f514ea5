"""The ``mskernel`` command line, in-process and once as a real subprocess."""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mskernel import PLUGIN_API_VERSION, __version__
from mskernel.cli import LIST_KEYS, build_parser, main, provides_summary
from mskernel.hooks.host import host
from mskernel.hooks.registries import CORE_COMMANDS

pytest_plugins = ["plugin_sandbox"]  # the `sandbox` fixture (tests/plugins/fixtures)
REPO = Path(__file__).resolve().parents[1]
BROKEN = 'raise ImportError("libfoo.so.1: cannot open shared object file")\n'


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    """Tables and wrapped text as a 200-column terminal shows them (tests that look at
    fitting set ``COLUMNS`` themselves)."""
    monkeypatch.setenv("COLUMNS", "200")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def install_broken(sandbox):
    sandbox.install("mskernel-broken", {"broken": "mskernel_broken.plugin"},
                    modules={"mskernel_broken.plugin": BROKEN})


def install_incompatible(sandbox):
    sandbox.install("mskernel-future", {"future": "mskernel_future.plugin"},
                    requires=["mskernel>=9"], modules={"mskernel_future.plugin": BROKEN})


def test_version(capsys, sandbox):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"mskernel {__version__} (plugin API {PLUGIN_API_VERSION})\n"


def test_core_commands_are_the_reserved_ones(sandbox):
    parser = build_parser(host())
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(commands.choices) == CORE_COMMANDS


def test_list_without_plugins_names_the_core(capsys, sandbox):
    code, out, _ = run(capsys, "plugins", "list")
    assert code == 0
    core_ops = sum(op.owner == "mskernel" for op in host().ops)
    assert out.rstrip().endswith(
        f"core: mskernel {__version__}, plugin API {PLUGIN_API_VERSION} "
        f"(reference backend, {core_ops} ops)")
    assert core_ops > 50


def test_list_table_is_aligned_and_shows_reasons_when_something_is_wrong(capsys, sandbox):
    sandbox.install_demo()
    install_broken(sandbox)
    code, out, _ = run(capsys, "plugins", "list")
    assert code == 0
    header, rule, *rows = out.split("\n\n")[0].splitlines()
    assert header.split() == list(LIST_KEYS)
    assert set(rule.replace(" ", "")) == {"-"}
    status_column = header.index("status")
    assert [row[status_column:].split()[0] for row in rows] == ["broken", "ok"]
    assert "import failed: ImportError: libfoo.so.1" in rows[0]
    assert rows[1].split()[:4] == ["demo", "mskernel-demo", "0.1.0", "library"]


def test_list_table_omits_the_reason_column_when_all_are_ok(capsys, sandbox):
    sandbox.install_demo()
    _, out, _ = run(capsys, "plugins", "list")
    assert out.splitlines()[0].split() == [k for k in LIST_KEYS if k != "reason"]


def test_list_json_has_exactly_the_documented_keys_even_with_broken_plugins(capsys, sandbox):
    sandbox.install_demo()
    install_broken(sandbox)
    install_incompatible(sandbox)
    code, out, _ = run(capsys, "plugins", "list", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [list(row) for row in rows] == [list(LIST_KEYS)] * 3
    assert {row["name"]: row["status"] for row in rows} == {
        "broken": "broken", "demo": "ok", "future": "incompatible"}
    demo = next(row for row in rows if row["name"] == "demo")
    assert demo["provides"] == ["ops:demo.*", "backend:demo", "namespace:demo"]


def install_wide(sandbox):
    """``mskernel-wide``: a plugin that provides 14 namespaces, a backend and two op families."""
    provides = [f"namespace:wide{i}" for i in range(14)] + ["backend:wide", "ops:wide.*",
                                                              "ops:wide_extra.*"]
    sandbox.install("mskernel-wide", {"wide": "mskernel_wide.plugin"}, modules={
        "mskernel_wide.plugin": f"""
            from mskernel.hooks import PluginInfo, hookimpl

            @hookimpl
            def mskernel_plugin_info():
                return PluginInfo(name="wide", version="0.1.0", kind="library",
                                  provides={provides!r})
        """})
    return provides


@pytest.mark.parametrize("columns", [80, 200])
def test_list_fits_the_terminal_summarising_what_each_plugin_provides(
        capsys, sandbox, monkeypatch, columns):
    provides = install_wide(sandbox)
    install_broken(sandbox)
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = run(capsys, "plugins", "list")
    assert code == 0
    table = out.split("\n\n")[0].splitlines()
    assert max(map(len, table)) <= columns
    header, _, broken, wide = table
    assert header.split() == list(LIST_KEYS)
    assert wide.split()[:4] == ["wide", "mskernel-wide", "0.1.0", "library"]
    summary = "namespaces: 14, backend: wide, ops: 2"
    reason = "import failed: ImportError: libfoo.so.1: cannot open shared object file"
    if columns == 200:
        assert f" {summary} " in wide
        assert broken.endswith(f" {reason}")
    else:  # cut short where the summary still does not fit
        cut = wide[header.index("provides"):header.index("status")].rstrip()
        assert cut.endswith("…") and summary.startswith(cut[:-1])
        cut = broken[header.index("reason"):]
        assert cut.endswith("…") and reason.startswith(cut[:-1]) and len(cut) > 12
    # the full lists stay in --json and info
    _, out, _ = run(capsys, "plugins", "list", "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    assert rows["wide"]["provides"] == provides
    assert rows["broken"]["reason"] == reason
    code, out, _ = run(capsys, "plugins", "info", "wide")
    assert "".join(out.split()).count("namespace:wide") == 14


NO_DEVICE = """
from mskernel.hooks import hookimpl
from mskernel.runtime import Availability
from mskernel.runtime.reference import ReferenceBackend


class Missing(ReferenceBackend):
    def availability(self):
        return Availability(available=False, reason="no driver: libfoo.so not found")


@hookimpl
def mskernel_register_backends(backends):
    backends.register("foo", Missing, priority=5)
"""


def test_list_names_each_unavailable_backend_with_its_reason(capsys, sandbox):
    sandbox.install("mskernel-foo", {"foo": "mskernel_foo.plugin"},
                    modules={"mskernel_foo.plugin": NO_DEVICE})
    code, out, _ = run(capsys, "plugins", "list")
    assert code == 0
    assert ("backend 'foo' (mskernel-foo) unavailable: no driver: libfoo.so not found"
            in out.splitlines())


def test_provides_summary_counts_each_kind_and_keeps_single_values():
    assert provides_summary([]) == "-"
    assert provides_summary(["backend:cpu", "ops:cpu.*", "passes:cpu.*"]) == (
        "backend: cpu, ops: cpu.*, passes: cpu.*")
    assert provides_summary(["namespace:nn", "namespace:train", "backend:x", "namespace:y",
                             "gadget"]) == "namespaces: 3, backend: x, gadget"
    assert provides_summary(["ops:a.*", "ops:b.*"]) == "ops: 2"


def test_check_exits_0_when_healthy_and_1_listing_each_problem(capsys, sandbox, monkeypatch):
    sandbox.install_demo()
    sandbox.install("mskernel-off", {"off": "mskernel_off.plugin"},
                    modules={"mskernel_off.plugin": BROKEN})
    monkeypatch.setenv("MSKERNEL_DISABLE_PLUGINS", "off")
    code, out, _ = run(capsys, "plugins", "check")
    assert (code, out) == (0, "2 plugin(s) checked: 1 disabled, 1 ok\n")


def test_check_reports_broken_and_incompatible_plugins(capsys, sandbox):
    sandbox.install_demo()
    install_broken(sandbox)
    install_incompatible(sandbox)
    code, out, _ = run(capsys, "plugins", "check")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == ("broken (mskernel-broken 0.1.0): broken: import failed: ImportError: "
                        "libfoo.so.1: cannot open shared object file")
    assert lines[1].startswith("future (mskernel-future 0.1.0): incompatible: "
                               "mskernel-future 0.1.0 requires mskernel >=9")
    assert lines[2] == "3 plugin(s) checked: 1 broken, 1 incompatible, 1 ok"


def test_info_shows_what_a_plugin_registered(capsys, sandbox):
    sandbox.install_demo()
    code, out, _ = run(capsys, "plugins", "info", "demo")
    assert code == 0
    lines = out.splitlines()
    for expected in ["distribution:   mskernel-demo", "entry point:    mskernel_demo.plugin",
                     "description:    Demonstrates every hook.", "status:         ok",
                     "ops (1):        demo.double", "rules 'vjp' (1): demo.double",
                     f"backend:        'demo', priority 10, available: NumPy {np.__version__} "
                     "on the host",
                     "  claims:       3 ops", "passes:         demo.keep",
                     "pipeline demo.O1: demo.keep",
                     "namespace:      mskernel.demo -> mskernel_demo.api",
                     "commands:       mskernel demo-fail, mskernel demo-hello"]:
        assert expected in lines, (expected, out)
    falls_back = next(line for line in lines if line.startswith("  falls back ("))
    assert "abs, " in falls_back and " add," not in out


def test_info_json_of_a_broken_plugin_carries_its_traceback(capsys, sandbox):
    install_broken(sandbox)
    code, out, _ = run(capsys, "plugins", "info", "broken", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["record"]["status"] == "broken"
    assert "raise ImportError" in report["traceback"]
    code, out, _ = run(capsys, "plugins", "info", "broken")
    assert "traceback:" in out.splitlines() and "  Traceback (most recent call last):" in out


def test_info_of_an_unknown_plugin_lists_the_known_ones(capsys, sandbox):
    sandbox.install_demo()
    install_broken(sandbox)
    code, out, err = run(capsys, "plugins", "info", "nope")
    assert code == 1 and out == ""
    assert err == "mskernel: no plugin named 'nope'; installed plugins: broken, demo\n"


def test_plugin_commands_run_and_a_failing_one_names_its_plugin(capsys, sandbox):
    sandbox.install_demo()
    assert run(capsys, "demo-hello", "--who", "tests") == (0, "hello, tests\n", "")
    code, out, err = run(capsys, "demo-fail")
    assert code == 1
    assert err.splitlines()[-1] == (
        "mskernel: command 'demo-fail' of plugin 'demo' (mskernel-demo 0.1.0) failed: "
        "RuntimeError: the demo command fails on purpose")


def test_plugin_command_whose_arguments_cannot_be_set_up_is_left_out(capsys, sandbox):
    sandbox.install("mskernel-knotty", {"knotty": "mskernel_knotty.plugin"}, modules={
        "mskernel_knotty.plugin": """
            from mskernel.hooks import hookimpl

            def configure(parser):
                parser.add_argument("--x")
                parser.add_argument("--x")

            @hookimpl
            def mskernel_add_cli(commands):
                commands.add("knotty", "cannot configure", configure, lambda args: 0)
        """})
    code, out, err = run(capsys, "plugins", "check")
    assert code == 0
    assert err.startswith("mskernel: command 'knotty' of plugin 'knotty' (mskernel-knotty 0.1.0) "
                          "could not be set up: ArgumentError")
    with pytest.raises(SystemExit):
        main(["knotty"])


def test_console_entry_in_a_subprocess_with_a_plugin_on_pythonpath(sandbox):
    sandbox.install_demo()
    install_broken(sandbox)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSKERNEL_")}
    env["PYTHONPATH"] = os.pathsep.join([str(sandbox.root), str(REPO)])

    def cli(*argv):
        return subprocess.run([sys.executable, "-m", "mskernel.cli", *argv], env=env,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)

    listing = cli("plugins", "list", "--json")
    assert listing.returncode == 0, listing.stderr
    statuses = {row["name"]: row["status"] for row in json.loads(listing.stdout)}
    assert (statuses["broken"], statuses["demo"]) == ("broken", "ok")
    assert cli("plugins", "check").returncode == 1
    hello = cli("demo-hello")
    assert (hello.returncode, hello.stdout) == (0, "hello, world\n")


def _conformance_text(out):
    """The ``conformance:`` field of ``plugins info`` without whitespace (it is wrapped, long
    paths anywhere)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  conformance:"))
    end = start + 1
    while end < len(lines) and lines[end].startswith(" " * 16):
        end += 1
    return "".join("".join(lines[start:end]).split()).removeprefix("conformance:")


def test_info_shows_the_conformance_report_the_kit_wrote(capsys, sandbox, tmp_path, monkeypatch):
    monkeypatch.setenv("MSKERNEL_HOME", str(tmp_path))
    sandbox.install_demo()
    code, out, _ = run(capsys, "plugins", "info", "demo")
    assert _conformance_text(out) == (
        "noreport;certifyitwith`pytest--mskernel-backenddemo`(mskernel-sdk)")
    path = tmp_path / "conformance" / "demo.json"
    path.parent.mkdir()
    report = {"status": "passed", "summary": "ops 3/3 passed; graphs 3/3 passed",
              "distribution": "mskernel-demo", "version": "0.1.0", "seed": 7,
              "created": "2025-01-01T00:00:00Z", "stages": {}}
    path.write_text(json.dumps(report))
    code, out, _ = run(capsys, "plugins", "info", "demo")
    assert _conformance_text(out) == "".join(
        f"passed: ops 3/3 passed; graphs 3/3 passed (mskernel-demo 0.1.0, seed 7, "
        f"2025-01-01T00:00:00Z; {path})".split())
    code, out, _ = run(capsys, "plugins", "info", "demo", "--json")
    assert json.loads(out)["backends"][0]["conformance"] == {
        "path": str(path), "report": report, "error": ""}
    path.write_text("{not json")
    code, out, _ = run(capsys, "plugins", "info", "demo")
    assert _conformance_text(out).startswith(f"unreadablereport{path}:JSONDecodeError")
