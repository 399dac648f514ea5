"""The module named by the ``mskernel.plugins`` entry point ``science``: registers the
``mskernel.science`` namespace.  Importing it is cheap (no SciPy, no model code)."""

from __future__ import annotations

from mskernel_sdk import PluginInfo, hookimpl

from . import __version__


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(name="science", version=__version__, kind="library",
                      provides=["namespace:science", "namespace:ops.fft", "namespace:ops.ifft",
                                "namespace:ops.rfft", "namespace:ops.irfft"],
                      description="physics-informed networks, neural operators, molecular dynamics")


@hookimpl
def mskernel_register_namespaces(namespaces) -> None:
    from .spectral import FUNCTIONS

    namespaces.register("science", "mskernel_science.api")
    for name in FUNCTIONS:  # the core op fft under numpy.fft's names
        namespaces.register(f"ops.{name}", f"mskernel_science.spectral:{name}")
