"""The module named by the ``mskernel.plugins`` entry point ``onnx``.  Importing it is cheap:
``onnx`` and the converters are imported only when a user calls them."""

from __future__ import annotations

from mskernel_sdk import PluginInfo, hookimpl

from . import __version__


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(name="onnx", version=__version__, kind="library", provides=[],
                      description="model export and load, ONNX import and export")
