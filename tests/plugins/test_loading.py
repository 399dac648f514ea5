"""Loading plugins through real entry points: what a healthy plugin registers, and how each
kind of failure is recorded without breaking the core or the other plugins."""

import importlib
import sys

import numpy as np
import pytest

import mskernel
from mskernel.errors import BackendError, MissingPluginError, PluginError
from mskernel.hooks.host import host
from mskernel.hooks.report import plugin_report
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.runtime import FallbackWarning, compile_graph

pytest_plugins = ["plugin_sandbox"]  # the `sandbox` fixture (tests/plugins/fixtures)

RAISES_ON_IMPORT = 'raise ImportError("libfoo.so.1: cannot open shared object file")\n'


def plugin_source(*hooks: str) -> str:
    """A plugin module importing the usual names, followed by ``hooks``."""
    header = (
        "from mskernel.hooks import hookimpl\n"
        "from mskernel.ops import OpDef\n"
        "from mskernel.runtime import Availability\n"
        "from mskernel.runtime.reference import ReferenceBackend\n"
    )
    return header + "\n".join(hooks)


def install_plugin(sandbox, name, *hooks, requires=("mskernel>=0.1,<1",)):
    """Install ``mskernel-<name>`` whose entry point ``<name>`` is ``mskernel_<name>.plugin``."""
    module = f"mskernel_{name}.plugin"
    sandbox.install(f"mskernel-{name}", {name: module}, requires=requires,
                    modules={module: plugin_source(*hooks)})


def records():
    return {r.name: r for r in host().plugin_records()}


def run_add(x, y):
    b = GraphBuilder("add")
    a = b.input(tensor_type("f32", x.shape), name="a")
    c = b.input(tensor_type("f32", y.shape), name="c")
    return compile_graph(b.build([b.op("add", a, c)]))(x, y)[0]


# -- a healthy plugin --------------------------------------------------------------------------


def test_healthy_plugin_is_recorded_from_its_metadata_and_info(sandbox):
    sandbox.install_demo()
    rec = records()["demo"]
    assert (rec.status, rec.reason) == ("ok", "")
    assert (rec.distribution, rec.version, rec.kind) == ("mskernel-demo", "0.1.0", "library")
    assert rec.entry_point == "mskernel_demo.plugin"
    assert rec.provides == ["ops:demo.*", "backend:demo", "namespace:demo"]


def test_ops_and_rules_are_owned_by_the_plugins_distribution(sandbox):
    sandbox.install_demo()
    assert mskernel.ops.op_registry().get("demo.double").owner == "mskernel-demo"
    assert mskernel.ops.op_registry().get("add").owner == "mskernel"
    assert host().rules.get("vjp", "demo.double")(3.0) == 6.0
    assert host().rules_registered_by("demo") == [("vjp", "demo.double")]


def test_an_unknown_op_name_loads_the_plugins(sandbox):
    sandbox.install_demo()
    assert sandbox.imported() == []
    assert mskernel.ops.op_registry().find("demo.double") is not None
    assert "mskernel_demo.plugin" in sandbox.imported()


def test_plugin_backend_runs_what_it_claims_and_the_rest_falls_back(sandbox):
    sandbox.install_demo()
    host().load_external()
    entry = host().backends.entries["demo"]
    assert entry.owner == "mskernel-demo"
    assert entry.availability().available
    assert host().backends.order() == ["demo", "reference"]
    b = GraphBuilder("f")
    x = b.input(tensor_type("f32", (2, 3)), name="x")
    graph = b.build([b.op("exp", b.op("demo.double", x))])
    with pytest.warns(FallbackWarning, match=rf"'exp' at {__file__}:\d+ → reference"):
        compiled = compile_graph(graph, backends=["demo"])
    placement = [s.backend for s in compiled.plan.segments]
    assert placement == ["demo", "reference"]
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(compiled(data)[0], np.exp(2 * data), rtol=1e-6)


def test_passes_pipelines_and_commands_carry_the_owner(sandbox):
    sandbox.install_demo()
    h = host()
    h.load_external()
    assert h.passes.passes["demo.keep"][1] == "mskernel-demo"
    assert h.passes.pipelines["demo.O1"].owner == "mskernel-demo"
    commands = h.commands().commands
    assert sorted(commands) == ["demo-fail", "demo-hello"]
    assert {c.owner for c in commands.values()} == {"mskernel-demo"}


def test_namespace_is_imported_on_first_access_only(sandbox):
    sandbox.install_demo()
    host().load_external()
    assert "mskernel_demo.plugin" in sys.modules
    assert "mskernel_demo.api" not in sys.modules
    api = mskernel.demo
    assert api is sys.modules["mskernel_demo.api"]
    assert api.double_graph(tensor_type("i32", (2,))).nodes[0].op == "demo.double"


def test_namespaces_import_like_submodules(sandbox):
    sandbox.install_demo()
    try:
        from mskernel.demo import double_graph  # noqa: PLC0415 - the import is the test
        import mskernel.demo as demo  # noqa: PLC0415

        assert demo is sys.modules["mskernel_demo.api"]
        assert double_graph is demo.double_graph
        with pytest.raises(ModuleNotFoundError, match="No module named 'mskernel.nothere'"):
            import mskernel.nothere  # noqa: F401, PLC0415
    finally:
        sys.modules.pop("mskernel.demo", None)


def test_namespace_members_import_like_submodules_without_a_second_copy(sandbox):
    sandbox.install("mskernel-deep", {"deep": "mskernel_deep.plugin"}, modules={
        "mskernel_deep.plugin": (
            "from mskernel.hooks import hookimpl\n"
            "@hookimpl\n"
            "def mskernel_register_namespaces(namespaces):\n"
            "    namespaces.register('deep', 'mskernel_deep.api')\n"),
        "mskernel_deep.api": "from . import kinds, tools\n",
        "mskernel_deep.tools": "VALUE = 1\n",
        "mskernel_deep.kinds.second": "VALUE = 2\n",  # a module the package does not import
    })
    try:
        import mskernel.deep.tools as tools  # noqa: PLC0415 - the imports are the test
        from mskernel.deep.tools import VALUE  # noqa: PLC0415
        import mskernel.deep.kinds.second as second  # noqa: PLC0415

        assert tools is sys.modules["mskernel_deep.tools"] and VALUE == 1
        assert second is sys.modules["mskernel_deep.kinds.second"] and second.VALUE == 2
        assert sys.modules["mskernel.deep.kinds"] is sys.modules["mskernel_deep.kinds"]
        with pytest.raises(ModuleNotFoundError, match="No module named 'mskernel.deep.nothere'"):
            import mskernel.deep.nothere  # noqa: F401, PLC0415
        with pytest.raises(ModuleNotFoundError, match="'mskernel.ir.nothere'"):
            import mskernel.ir.nothere  # noqa: F401, PLC0415 - core packages import as usual
    finally:
        for name in [n for n in sys.modules if n == "mskernel.deep" or
                     n.startswith("mskernel.deep.")]:
            del sys.modules[name]


def test_dotted_namespaces_add_modules_to_namespaces_and_open_core_packages(sandbox):
    sandbox.install("mskernel-extra", {"extra": "mskernel_extra.plugin"}, modules={
        "mskernel_extra.plugin": (
            "from mskernel.hooks import hookimpl\n"
            "@hookimpl\n"
            "def mskernel_register_namespaces(namespaces):\n"
            "    namespaces.register('extra', 'mskernel_extra.api')\n"
            "    namespaces.register('extra.more', 'mskernel_extra.more')\n"
            "    namespaces.register('common.extras', 'mskernel_extra.more')\n"),
        "mskernel_extra.api": "VALUE = 0\n",
        "mskernel_extra.more": "VALUE = 3\n",
    })
    try:
        import mskernel.common.extras as extras  # noqa: PLC0415 - the imports are the test
        import mskernel.extra.more as more  # noqa: PLC0415

        assert more is extras is sys.modules["mskernel_extra.more"]
        assert mskernel.common.extras is more and mskernel.extra.more is more
        with pytest.raises(ModuleNotFoundError, match="'mskernel.common.nothere'"):
            importlib.import_module("mskernel.common.nothere")
        with pytest.raises(MissingPluginError, match="no installed plugin provides "
                                                     "mskernel.common.nothere"):
            mskernel.common.nothere
    finally:
        for name in [n for n in sys.modules if n.startswith(("mskernel.extra", "mskernel.common."))
                     and not n.startswith(("mskernel.common.dtype", "mskernel.common.seed"))]:
            del sys.modules[name]
        vars(mskernel.common).pop("extras", None)


@pytest.mark.parametrize("name, reason", [
    ("ir.extra", "the core takes plugin members only as 'common.<member>'"),
    ("common.two.levels", "the core takes plugin members only as 'common.<member>'"),
    ("ops.two.levels", "the core takes plugin members only as 'common.<member>', 'ops.<member>'"),
    ("common.dtype", "namespace name 'common.dtype' is taken by the core"),
    ("fizz._hidden", "is not a public Python identifier"),
])
def test_dotted_namespaces_keep_off_the_core(sandbox, name, reason):
    install_plugin(sandbox, "squat", f"""
@hookimpl
def mskernel_register_namespaces(namespaces):
    namespaces.register({name!r}, "mskernel_squat.plugin")
""")
    rec = records()["squat"]
    assert rec.status == "broken" and reason in rec.reason


def test_report_lists_everything_the_plugin_registered(sandbox):
    sandbox.install_demo()
    report = plugin_report(host(), "demo")
    assert report.ops == ["demo.double"]
    assert report.rules == {"vjp": ["demo.double"]}
    assert report.passes == ["demo.keep"]
    assert report.pipelines == {"demo.O1": ["demo.keep"]}
    assert report.namespaces == {"demo": "mskernel_demo.api"}
    assert report.commands == ["demo-fail", "demo-hello"]
    (backend,) = report.backends
    assert (backend.name, backend.priority, backend.available) == ("demo", 10, True)
    assert backend.ops_claimed == 3
    core = [op.name for op in host().ops if op.owner == "mskernel"]
    assert backend.falls_back == [op for op in core if op not in ("add", "mul")]
    assert plugin_report(host(), "nonexistent") is None


# -- failures ------------------------------------------------------------------------------------


def test_plugin_whose_import_raises_is_broken_and_the_rest_works(sandbox):
    sandbox.install("mskernel-broken", {"broken": "mskernel_broken.plugin"},
                    modules={"mskernel_broken.plugin": RAISES_ON_IMPORT})
    sandbox.install_demo()
    found = records()
    broken = found["broken"]
    assert broken.status == "broken"
    assert broken.reason == (
        "import failed: ImportError: libfoo.so.1: cannot open shared object file")
    assert broken.detail.splitlines()[:3] == [
        "Traceback (most recent call last):",
        f'  File "{sandbox.root / "mskernel_broken" / "plugin.py"}", line 1, in <module>',
        '    raise ImportError("libfoo.so.1: cannot open shared object file")',
    ]  # the plugin's own frames only: none of the host's or importlib's
    assert plugin_report(host(), "broken").traceback == broken.detail
    assert found["demo"].status == "ok"
    np.testing.assert_array_equal(run_add(np.ones(3, np.float32), np.ones(3, np.float32)), 2)


def test_hook_that_raises_marks_broken_and_withdraws_what_it_registered(sandbox):
    install_plugin(sandbox, "half", """
@hookimpl
def mskernel_register_ops(registry):
    registry.define(OpDef("half.first", ("x",), lambda x: x, lambda x: x))

@hookimpl
def mskernel_register_rules(rules):
    rules.register("vjp", "half.first", lambda g: g)
    raise ValueError("bad rule table")

@hookimpl
def mskernel_register_backends(backends):
    backends.register("half", ReferenceBackend)
""")
    rec = records()["half"]
    assert rec.status == "broken"
    assert rec.reason == "mskernel_register_rules raised ValueError: bad rule table"
    assert "bad rule table" in rec.detail
    assert "half.first" not in host().ops
    assert not host().rules.has("vjp", "half.first")
    assert host().rules_registered_by("half") == []
    assert "half" not in host().backends.entries  # hooks after the failing one are not called


def test_plugin_info_that_is_invalid_marks_broken(sandbox):
    install_plugin(sandbox, "vague", """
@hookimpl
def mskernel_plugin_info():
    return {"name": "vague", "version": "1", "kind": "gadget"}
""")
    rec = records()["vague"]
    assert rec.status == "broken"
    assert rec.reason.startswith("mskernel_plugin_info raised ValidationError")


def test_hookimpl_with_an_argument_the_spec_lacks_is_broken(sandbox):
    install_plugin(sandbox, "badsig", """
@hookimpl
def mskernel_register_ops(registry, device):
    raise AssertionError("never called")
""")
    rec = records()["badsig"]
    assert rec.status == "broken"
    assert rec.reason.startswith("invalid hook implementation: PluginValidationError")
    assert "mskernel_register_ops" in rec.reason
    assert host().pm.get_plugin("badsig") is None


def test_misspelt_hook_is_broken_with_a_suggestion(sandbox):
    install_plugin(sandbox, "typo", """
@hookimpl
def mskernel_register_op(registry):
    raise AssertionError("never called")
""")
    rec = records()["typo"]
    assert rec.status == "broken"
    assert rec.reason.endswith(
        "unknown hook(s) mskernel_register_op (did you mean mskernel_register_ops?)")


def test_incompatible_core_requirement_is_reported_and_never_imported(sandbox):
    sandbox.install("mskernel-future", {"future": "mskernel_future.plugin"},
                    version="3.0.0", requires=["numpy", "mskernel>=9"],
                    modules={"mskernel_future.plugin": RAISES_ON_IMPORT})
    rec = records()["future"]
    assert rec.status == "incompatible"
    assert "mskernel-future 3.0.0 requires mskernel >=9" in rec.reason
    assert "mskernel 0.1.0 is installed" in rec.reason
    assert rec.detail is None
    assert sandbox.imported() == []


@pytest.mark.parametrize("switch", ["explosive", "mskernel_explosive", "other, mskernel-explosive",
                                    "all"])
def test_disabled_plugin_is_reported_and_never_imported(sandbox, monkeypatch, switch):
    sandbox.install("mskernel-explosive", {"explosive": "mskernel_explosive.plugin"},
                    modules={"mskernel_explosive.plugin": RAISES_ON_IMPORT})
    monkeypatch.setenv("MSKERNEL_DISABLE_PLUGINS", switch)
    rec = records()["explosive"]
    assert (rec.status, rec.reason) == ("disabled", "switched off by MSKERNEL_DISABLE_PLUGINS")
    assert sandbox.imported() == []


def test_backend_that_cannot_run_here_makes_its_plugin_unavailable(sandbox):
    install_plugin(sandbox, "ghost", """
class GhostBackend(ReferenceBackend):
    def availability(self):
        return Availability(available=False, reason="no ghost device found")

    def capabilities(self):
        raise RuntimeError("driver not loaded")

@hookimpl
def mskernel_register_backends(backends):
    backends.register("ghost", GhostBackend, priority=5)
""")
    rec = records()["ghost"]
    assert (rec.status, rec.reason) == ("unavailable", "backend 'ghost': no ghost device found")
    assert [b.name for b in host().backends.available()] == ["reference"]
    with pytest.raises(BackendError, match="backend 'ghost' .mskernel-ghost. is not available"):
        host().backends.get("ghost")
    (backend,) = plugin_report(host(), "ghost").backends
    assert (backend.available, backend.reason) == (False, "no ghost device found")
    assert backend.error == "capabilities() raised RuntimeError: driver not loaded"


def test_plugin_availability_is_not_probed_while_loading(sandbox):
    install_plugin(sandbox, "shy", """
class ShyBackend(ReferenceBackend):
    def __init__(self):
        raise AssertionError("instantiated while loading")

@hookimpl
def mskernel_register_backends(backends):
    backends.register("shy", ShyBackend)
""")
    host().load_external()
    assert host().records["shy"].status == "ok"
    rec = records()["shy"]  # listing probes: the factory's failure is the reason
    assert rec.status == "unavailable"
    assert "factory raised AssertionError: instantiated while loading" in rec.reason
    (backend,) = plugin_report(host(), "shy").backends
    assert backend.error == "factory raised AssertionError: instantiated while loading"


def test_second_plugin_registering_a_backend_name_is_broken_naming_both(sandbox):
    hook = """
@hookimpl
def mskernel_register_backends(backends):
    backends.register("shared", ReferenceBackend)
"""
    install_plugin(sandbox, "alpha", hook)
    install_plugin(sandbox, "beta", hook)
    found = records()
    assert found["alpha"].status == "ok"
    assert found["beta"].status == "broken"
    assert "backend 'shared' is already registered by mskernel-alpha" in found["beta"].reason
    assert "mskernel-beta cannot register it again" in found["beta"].reason
    assert host().backends.entries["shared"].owner == "mskernel-alpha"


def test_redefining_a_core_op_without_override_is_broken(sandbox):
    install_plugin(sandbox, "clash", """
@hookimpl
def mskernel_register_ops(registry):
    registry.define(OpDef("exp", ("x",), lambda x: x, lambda x: x))
""")
    rec = records()["clash"]
    assert rec.status == "broken"
    assert "op 'exp' is already defined by mskernel; mskernel-clash must pass override=True" \
        in rec.reason
    assert host().ops.get("exp").owner == "mskernel"
    assert host().ops.overrides == {}


def test_overriding_a_core_op_is_recorded(sandbox):
    install_plugin(sandbox, "swap", """
import numpy as np

@hookimpl
def mskernel_register_ops(registry):
    registry.define(OpDef("exp", ("x",), lambda x: x, lambda x: np.exp2(x)), override=True)
""")
    assert records()["swap"].status == "ok"
    assert host().ops.overrides == {"exp": ("mskernel", "mskernel-swap")}
    assert host().ops.get("exp").owner == "mskernel-swap"
    assert plugin_report(host(), "swap").overrides == {"exp": "mskernel"}


# -- namespaces ------------------------------------------------------------------------------


def test_missing_namespace_names_the_distribution_to_install(sandbox):
    with pytest.raises(MissingPluginError, match=r"no installed plugin provides mskernel.Model; "
                                                 r"install it with `pip install mskernel-nn`"):
        mskernel.Model
    with pytest.raises(MissingPluginError, match=r"mskernel.common.initializer; install it with "
                                                 r"`pip install mskernel-nn`"):
        mskernel.common.initializer
    with pytest.raises(MissingPluginError, match=r"pip install mskernel-onnx"):
        mskernel.export


def test_a_name_no_distribution_provides_names_none(sandbox):
    with pytest.raises(MissingPluginError) as caught:
        mskernel.quantumfoam
    assert "no installed plugin provides mskernel.quantumfoam, and no mskernel distribution " \
           "is known to" in str(caught.value)
    assert "pip install" not in str(caught.value)
    assert not hasattr(mskernel, "quantumfoam")


def test_a_missing_top_level_function_names_the_plugin_that_provides_it(sandbox):
    with pytest.raises(MissingPluginError, match=r"mskernel.export; install it with "
                                                 r"`pip install mskernel-onnx`"):
        mskernel.export


def test_namespace_of_a_broken_plugin_says_it_is_installed_but_broken(sandbox):
    sandbox.install("mskernel-foam", {"foam": "mskernel_foam.plugin"},
                    modules={"mskernel_foam.plugin": RAISES_ON_IMPORT})
    with pytest.raises(MissingPluginError) as caught:
        mskernel.foam
    message = str(caught.value)
    assert "mskernel.foam is provided by mskernel-foam, which is installed but broken" in message
    assert "import failed: ImportError: libfoo.so.1" in message
    assert "`mskernel plugins info foam`" in message


def test_namespace_module_that_fails_to_import_names_its_provider(sandbox):
    sandbox.install("mskernel-fizz", {"fizz": "mskernel_fizz.plugin"}, modules={
        "mskernel_fizz.plugin": plugin_source("""
@hookimpl
def mskernel_register_namespaces(namespaces):
    namespaces.register("fizz", "mskernel_fizz.api")
"""),
        "mskernel_fizz.api": "1 / 0\n",
    })
    with pytest.raises(PluginError, match=r"mskernel.fizz \(provided by mskernel-fizz\) failed "
                                          r"to load mskernel_fizz.api: ZeroDivisionError"):
        mskernel.fizz


def test_namespace_cannot_take_a_core_name(sandbox):
    install_plugin(sandbox, "squat", """
@hookimpl
def mskernel_register_namespaces(namespaces):
    namespaces.register("ir", "mskernel_squat.plugin")
""")
    rec = records()["squat"]
    assert rec.status == "broken"
    assert "namespace name 'ir' is taken by the core (mskernel.ir)" in rec.reason
    assert mskernel.ir.GraphBuilder is GraphBuilder


def test_a_plugin_adds_members_to_mskernel_ops_after_the_cores(sandbox):
    sandbox.install("mskernel-opsx", {"opsx": "mskernel_opsx.plugin"}, modules={
        "mskernel_opsx.plugin": plugin_source("""
@hookimpl
def mskernel_register_namespaces(namespaces):
    namespaces.register("ops.triple", "mskernel_opsx.api:triple")
    namespaces.register("ops.exp", "mskernel_opsx.api:triple")
"""),
        "mskernel_opsx.api": "def triple(x):\n    return 3 * x\n",
    })
    assert mskernel.ops.triple(2) == 6
    assert mskernel.ops.exp.__module__ == "mskernel.frontend.functional.elementwise"
    with pytest.raises(AttributeError, match=r"no installed plugin provides mskernel.ops.quadruple"):
        mskernel.ops.quadruple  # noqa: B018


def test_cli_hook_that_raises_marks_broken_and_withdraws_its_commands(sandbox):
    install_plugin(sandbox, "noisy", """
@hookimpl
def mskernel_add_cli(commands):
    commands.add("noisy-one", "first", lambda parser: None, lambda args: 0)
    commands.add("plugins", "takes a core name", lambda parser: None, lambda args: 0)
""")
    host().load_external()
    assert host().records["noisy"].status == "ok"  # the CLI hook runs only for the CLI
    assert list(host().commands().commands) == []
    rec = records()["noisy"]
    assert rec.status == "broken"
    assert "command 'mskernel plugins' is defined by the core" in rec.reason
