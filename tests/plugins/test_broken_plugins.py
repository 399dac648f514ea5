"""A plugin that fails cannot poison the host: what its hooks registered is taken out again
(overridden ops included), and ``sys.exit()`` or a stray ``KeyboardInterrupt`` in its import
or hooks makes it ``broken`` instead of ending the program — only a real Ctrl-C does that."""

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import mskernel
from mskernel.cli import main
from mskernel.errors import MissingPluginError, PluginError
from mskernel.hooks.host import host
from mskernel.hooks.report import plugin_report

pytest_plugins = ["plugin_sandbox"]  # the `sandbox` fixture (tests/plugins/fixtures)
REPO = Path(__file__).resolve().parents[2]

HEADER = """\
import sys

from mskernel.hooks import hookimpl
from mskernel.ops import OpDef
from mskernel.passes import Pass, PassResult
from mskernel.runtime.reference import ReferenceBackend


class Keep(Pass):
    name = "{name}.keep"

    def run(self, graph, context):
        return PassResult(graph, changed=False)
"""

#: Each hook of a plugin named ``{name}``: (its argument, statements, the return statement).
#: Every registration hook registers something; relu becomes the identity.
HOOKS = {
    "mskernel_plugin_info": ("", [], 'return dict(name="{name}", version="0.1.0", kind="library")'),
    "mskernel_register_ops": ("registry", [
        'registry.define(OpDef("{name}.op", ("x",), lambda x: x, lambda x: x))',
        'registry.define(OpDef("relu", ("x",), lambda x: x, lambda x: x), override=True)'], ""),
    "mskernel_register_rules": ("rules", [
        'rules.register("vjp", "{name}.op", lambda g: g)',
        'rules.register("vjp", "relu", lambda g: g, override=True)'], ""),
    "mskernel_register_backends": ("backends", ['backends.register("{name}", ReferenceBackend)'],
                                   ""),
    "mskernel_register_passes": ("passes", [
        "passes.register(Keep())", 'passes.register_pipeline("{name}.O1", ["{name}.keep"])'], ""),
    "mskernel_register_namespaces": ("namespaces", [
        'namespaces.register("{name}", "mskernel_{name}.plugin")'], ""),
}


def hooks(fail_in="", raising='raise RuntimeError("late failure")'):
    """The source of every hook in ``HOOKS``; ``fail_in`` ends with ``raising`` after what it
    registered."""
    source = ""
    for hook, (argument, statements, result) in HOOKS.items():
        body = [*statements, *([raising] if hook == fail_in else []), *filter(None, [result])]
        source += f"\n@hookimpl\ndef {hook}({argument}):\n" + "".join(f"    {s}\n" for s in body)
    return source


def install(sandbox, name, *sources, prelude=""):
    """``mskernel-<name>`` whose module runs ``prelude`` at import, then defines ``sources``."""
    source = (HEADER + prelude + "".join(sources)).replace("{name}", name)
    sandbox.install(f"mskernel-{name}", {name: f"mskernel_{name}.plugin"},
                    modules={f"mskernel_{name}.plugin": source})


def relu(values):
    return mskernel.ops.relu(mskernel.Tensor(np.array(values, np.float32))).numpy()


def records():
    return {r.name: r for r in host().plugin_records()}


def assert_nothing_registered_by(name):
    h = host()
    owner = f"mskernel-{name}"
    assert [op.name for op in h.ops if op.owner == owner] == []
    assert h.ops.get("relu").owner == "mskernel"
    assert owner not in {new for _, new in h.ops.overrides.values()}
    assert not h.rules.has("vjp", f"{name}.op")
    assert name not in h.backends.entries
    assert f"{name}.keep" not in h.passes.passes
    assert f"{name}.O1" not in h.passes.pipelines
    assert name not in h.namespaces.modules
    assert h.rules_registered_by(name) == []
    assert h.pm.get_plugin(name) is None
    report = plugin_report(h, name)
    assert (report.ops, report.overrides, report.rules, report.backends, report.passes,
            report.pipelines, report.namespaces) == ([], {}, {}, [], [], {}, {})


# -- what a failing plugin registered is taken out -------------------------------------------


def test_a_plugin_that_overrides_relu_and_then_raises_leaves_the_core_relu(sandbox):
    install(sandbox, "shadow", hooks(fail_in="mskernel_register_ops"))
    rec = records()["shadow"]
    assert rec.status == "broken"
    assert rec.reason == "mskernel_register_ops raised RuntimeError: late failure"
    np.testing.assert_array_equal(relu([-1, 2]), [0, 2])
    assert host().ops.overrides == {}
    assert not host().rules.has("vjp", "relu")  # the hooks after the failing one never ran
    assert_nothing_registered_by("shadow")


@pytest.mark.parametrize("hook", ["mskernel_register_rules", "mskernel_register_backends",
                                  "mskernel_register_passes", "mskernel_register_namespaces"])
def test_everything_registered_before_a_later_hook_raises_is_gone(sandbox, hook):
    install(sandbox, "half", hooks(fail_in=hook))
    rec = records()["half"]
    assert (rec.status, rec.reason) == ("broken", f"{hook} raised RuntimeError: late failure")
    np.testing.assert_array_equal(relu([-1, 2]), [0, 2])
    assert_nothing_registered_by("half")
    with pytest.raises(MissingPluginError, match="installed but broken: mskernel_register"):
        mskernel.half


@pytest.mark.filterwarnings("ignore::mskernel.runtime.FallbackWarning")  # relu on 'early'
def test_the_other_plugins_keep_what_they_registered(sandbox):
    # loaded in name order: "early" before the failing "middle", "zdemo" after it
    install(sandbox, "early", hooks())
    install(sandbox, "middle", hooks(fail_in="mskernel_register_namespaces"))
    sandbox.install("mskernel-demo", {"zdemo": "mskernel_demo.plugin"}, packages=["mskernel_demo"])
    found = records()
    assert {n: r.status for n, r in found.items()} == {
        "early": "ok", "middle": "broken", "zdemo": "ok"}
    h = host()
    assert h.ops.get("early.op").owner == "mskernel-early"
    assert h.ops.get("demo.double").owner == "mskernel-demo"
    assert sorted(h.backends.entries) == ["demo", "early", "reference"]
    assert h.namespaces.modules["early"] == ("mskernel_early.plugin", "mskernel-early")
    assert "middle" not in h.namespaces.modules
    # the override of the plugin loaded before is in force again, not the core's relu
    assert h.ops.overrides == {"relu": ("mskernel", "mskernel-early")}
    assert h.ops.get("relu").owner == "mskernel-early"
    np.testing.assert_array_equal(relu([-1, 2]), [-1, 2])
    assert h.rules_registered_by("early") == [("vjp", "early.op"), ("vjp", "relu")]


# -- sys.exit(), KeyboardInterrupt and other BaseExceptions --------------------------------------


@pytest.mark.parametrize("statement, reason", [
    ("sys.exit(3)", "SystemExit: the plugin called sys.exit(3)"),
    ("sys.exit()", "SystemExit: the plugin called sys.exit()"),
    ("sys.exit('no licence')", "SystemExit: the plugin called sys.exit('no licence')"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    ("raise GeneratorExit('odd')", "GeneratorExit: odd"),
])
def test_a_plugin_exiting_while_imported_is_broken_and_the_program_goes_on(
        sandbox, capsys, statement, reason):
    install(sandbox, "quitter", hooks(), prelude=f"\n{statement}\n")
    rec = records()["quitter"]
    assert (rec.status, rec.reason) == ("broken", f"import failed: {reason}")
    assert statement in rec.detail
    np.testing.assert_array_equal(relu([-1, 2]), [0, 2])
    assert main(["plugins", "check"]) == 1
    out = capsys.readouterr().out
    assert f"quitter (mskernel-quitter 0.1.0): broken: import failed: {reason}" in out
    assert main(["plugins", "list"]) == 0
    assert "import failed: " in capsys.readouterr().out


@pytest.mark.parametrize("hook", ["mskernel_plugin_info", "mskernel_register_ops",
                                  "mskernel_register_passes"])
def test_a_plugin_exiting_in_a_hook_is_broken_and_withdrawn(sandbox, hook):
    install(sandbox, "leaver", hooks(fail_in=hook, raising="sys.exit(2)"))
    rec = records()["leaver"]
    assert (rec.status, rec.reason) == (
        "broken", f"{hook} raised SystemExit: the plugin called sys.exit(2)")
    assert "sys.exit(2)" in rec.detail
    np.testing.assert_array_equal(relu([-1, 2]), [0, 2])
    assert_nothing_registered_by("leaver")


def test_a_backend_factory_that_exits_makes_its_plugin_unavailable(sandbox):
    install(sandbox, "gone", """
class Gone(ReferenceBackend):
    def __init__(self):
        sys.exit("no device")

@hookimpl
def mskernel_register_backends(backends):
    backends.register("gone", Gone, priority=50)
""")
    rec = records()["gone"]
    assert rec.status == "unavailable"
    assert rec.reason == (
        "backend 'gone': factory raised SystemExit: the plugin called sys.exit('no device')")
    assert [b.name for b in host().backends.available()] == ["reference"]


def test_a_namespace_module_that_exits_is_a_plugin_error(sandbox):
    sandbox.install("mskernel-brief", {"brief": "mskernel_brief.plugin"}, modules={
        "mskernel_brief.plugin": """
            from mskernel.hooks import hookimpl

            @hookimpl
            def mskernel_register_namespaces(namespaces):
                namespaces.register("brief", "mskernel_brief.api")
        """,
        "mskernel_brief.api": "import sys\nsys.exit(1)\n",
    })
    with pytest.raises(PluginError, match=r"mskernel.brief \(provided by mskernel-brief\) failed "
                                          r"to load mskernel_brief.api: SystemExit: the plugin "
                                          r"called sys.exit\(1\)"):
        mskernel.brief


def test_a_real_ctrl_c_while_a_plugin_imports_still_stops_the_program(sandbox):
    install(sandbox, "slow", hooks(), prelude="""
import signal
signal.raise_signal(signal.SIGINT)  # as if the user pressed Ctrl-C during a slow import
""")
    handler = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        host().load_external()
    assert signal.getsignal(signal.SIGINT) is handler


def test_a_keyboard_interrupt_raised_in_another_thread_is_the_plugins_own(sandbox):
    install(sandbox, "worker", hooks(), prelude="\nraise KeyboardInterrupt('from a thread')\n")
    loader = threading.Thread(target=host().load_external)
    loader.start()
    loader.join(timeout=120)
    assert records()["worker"].reason == "import failed: KeyboardInterrupt: from a thread"


def test_a_plugin_that_exits_does_not_end_a_program_or_the_cli(sandbox):
    install(sandbox, "quitter", hooks(), prelude="\nsys.exit(0)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSKERNEL_")}
    env["PYTHONPATH"] = os.pathsep.join([str(sandbox.root), str(REPO)])

    def python(*argv):
        return subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=300)

    program = python("-c", "import mskernel, numpy as np\n"
                           "x = mskernel.Tensor(np.array([-1.0, 2.0], np.float32))\n"
                           "print(mskernel.ops.relu(x).numpy().tolist())")
    assert (program.returncode, program.stdout) == (0, "[0.0, 2.0]\n"), program.stderr
    check = python("-m", "mskernel.cli", "plugins", "check")
    assert check.returncode == 1
    assert ("quitter (mskernel-quitter 0.1.0): broken: import failed: SystemExit: the plugin "
            "called sys.exit(0)") in check.stdout.splitlines()
    listing = python("-m", "mskernel.cli", "plugins", "list")
    assert listing.returncode == 0
    assert any(line.startswith("quitter ") and " broken " in line
               for line in listing.stdout.splitlines())
