"""``PluginHooks`` mirrors the hookspecs: the same hooks, parameters and types; a class plugin
built on it registers only the hooks it marks, and mypy holds its overrides to the contract."""

import inspect
import typing
from pathlib import Path

import mypy.api
import pytest

from mskernel.hooks import PluginInfo, hookimpl, hookspecs
from mskernel.hooks.host import fresh_host, host
from mskernel.hooks.protocol import PluginHooks
from mskernel.hooks.registries import CommandRegistry, ModelReaderRegistry, NamespaceRegistry
from mskernel.ops import OpDef, OpRegistry, RuleRegistry
from mskernel.passes import PassRegistry
from mskernel.runtime.registry import BackendRegistry

REPO = Path(__file__).resolve().parents[2]
TYPES = {cls.__name__: cls for cls in (
    PluginInfo, OpRegistry, RuleRegistry, PassRegistry, BackendRegistry, NamespaceRegistry,
    ModelReaderRegistry, CommandRegistry)}


def hooks(namespace: object) -> dict[str, typing.Callable[..., object]]:
    return {name: fn for name, fn in vars(namespace).items() if name.startswith("mskernel_")}


def contract(fn: typing.Callable[..., object]) -> tuple[list[tuple[str, object]], object]:
    """The parameters (name, resolved type) after ``self`` and the resolved return type."""
    hints = typing.get_type_hints(fn, localns=TYPES)
    params = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in params)
    return [(p.name, hints[p.name]) for p in params], hints["return"]


def test_the_protocol_has_every_hook_of_the_hookspecs_and_no_other():
    assert hooks(PluginHooks).keys() == hooks(hookspecs).keys()


@pytest.mark.parametrize("name", sorted(hooks(hookspecs)))
def test_each_hook_takes_and_returns_what_its_spec_says(name):
    assert contract(hooks(PluginHooks)[name]) == contract(hooks(hookspecs)[name])


class OneOpPlugin(PluginHooks):
    """Implements one hook; the others are inherited, unmarked, and must never be called."""

    @hookimpl
    def mskernel_register_ops(self, registry: OpRegistry) -> None:
        registry.define(OpDef("oneop.twice", ("x",), lambda x: x, lambda x: 2 * x))


def test_a_class_plugin_registers_only_the_hooks_it_marks():
    with fresh_host():
        record = host().register(OneOpPlugin(), name="oneop", distribution="mskernel-oneop",
                                 version="0.1.0")
        assert (record.status, record.reason) == ("ok", "")
        assert host().ops.get("oneop.twice").owner == "mskernel-oneop"


CHECKED = '''
from mskernel.hooks import hookimpl
from mskernel.hooks.protocol import PluginHooks
from mskernel.ops import OpRegistry


class Good(PluginHooks):
    @hookimpl
    def mskernel_register_ops(self, registry: OpRegistry) -> None:
        pass


class Bad(PluginHooks):
    @hookimpl
    def mskernel_register_ops(self, registry: int) -> None:
        pass
'''


def test_mypy_holds_a_class_plugins_hooks_to_the_contract(tmp_path, monkeypatch):
    source = tmp_path / "plugin.py"
    source.write_text(CHECKED)
    monkeypatch.setenv("MYPYPATH", str(REPO))
    stdout, _, status = mypy.api.run([str(source), "--cache-dir", str(tmp_path / "cache"),
                                      "--follow-imports", "silent", "--no-error-summary"])
    assert status == 1 and stdout.count(": error:") == 1, stdout
    bad_line = CHECKED.splitlines().index(
        "    def mskernel_register_ops(self, registry: int) -> None:") + 1
    assert f"{source}:{bad_line}: error" in stdout and "[override]" in stdout, stdout
