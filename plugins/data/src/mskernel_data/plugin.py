"""The plugin module named by the ``mskernel.plugins`` entry point ``data``: registers the
``mskernel.dataset`` and ``mskernel.mindrecord`` namespaces.  Importing it is cheap (no
NumPy, no Pillow, no workers)."""

from __future__ import annotations

from mskernel_sdk import PluginInfo, hookimpl

from . import __version__


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(name="data", version=__version__, kind="library",
                      provides=["namespace:dataset", "namespace:mindrecord"],
                      description="datasets, vision and text transforms, parallel input "
                                  "pipelines and MindSpore's MindRecord format")


@hookimpl
def mskernel_register_namespaces(namespaces) -> None:
    namespaces.register("dataset", "mskernel_data.api")
    namespaces.register("mindrecord", "mskernel_data.mindrecord")
