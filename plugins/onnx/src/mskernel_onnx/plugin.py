"""The module named by the ``mskernel.plugins`` entry point ``onnx``: registers
``mskernel.export`` and ``mskernel.load`` and the ``mskernel convert`` command.  Importing it
is cheap: ``onnx`` and the converters are imported only when a user calls them."""

from __future__ import annotations

from mskernel_sdk import PluginInfo, hookimpl

from . import __version__

#: ``mskernel.<name>`` → ``mskernel_onnx.api:<name>``
API_NAMES = ("export", "load")
#: The passes run on a network before it is written: the generic ones that keep its ops as
#: the user wrote them (batch-norm folding is left to whoever compiles the file).
EXPORT_PIPELINE = ("onnx.export", ("simplify", "fold", "cse", "dce"))


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(name="onnx", version=__version__, kind="library",
                      provides=[*(f"namespace:{name}" for name in API_NAMES),
                                f"pipeline:{EXPORT_PIPELINE[0]}", "command:convert"],
                      description="model export and load, ONNX import and export")


@hookimpl
def mskernel_register_passes(passes) -> None:
    passes.register_pipeline(*EXPORT_PIPELINE)


@hookimpl
def mskernel_register_namespaces(namespaces) -> None:
    for name in API_NAMES:
        namespaces.register(name, f"mskernel_onnx.api:{name}")


@hookimpl
def mskernel_add_cli(commands) -> None:
    from . import cli

    commands.add("convert", "convert a model file between formats (.mindir, .onnx)",
                 cli.configure, cli.run)
