"""The plugin module named by the ``mskernel.plugins`` entry point ``data``: registers the
``mskernel.dataset`` namespace.  Importing it is cheap (no NumPy, no Pillow, no workers)."""

from __future__ import annotations

from mskernel_sdk import PluginInfo, hookimpl

from . import __version__


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(name="data", version=__version__, kind="library",
                      provides=["namespace:dataset"],
                      description="datasets, vision transforms and parallel input pipelines")


@hookimpl
def mskernel_register_namespaces(namespaces) -> None:
    namespaces.register("dataset", "mskernel_data.api")
