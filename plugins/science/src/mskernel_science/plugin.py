"""The module named by the ``mskernel.plugins`` entry point ``science``: registers the
``mskernel.science`` namespace.  Importing it is cheap (no SciPy, no model code)."""

from __future__ import annotations

from mskernel_sdk import PluginInfo, hookimpl

from . import __version__

#: ``mskernel.ops`` names this plugin defines in :mod:`.spectral` (numpy.fft's, MindSpore's)
FFT_FUNCTIONS = ("fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn", "rfft2",
                 "irfft2", "rfftn", "irfftn")


@hookimpl
def mskernel_plugin_info() -> PluginInfo:
    return PluginInfo(name="science", version=__version__, kind="library",
                      provides=["namespace:science",
                                *(f"namespace:ops.{name}" for name in FFT_FUNCTIONS)],
                      description="physics-informed networks, neural operators, molecular dynamics")


@hookimpl
def mskernel_register_namespaces(namespaces) -> None:
    namespaces.register("science", "mskernel_science.api")
    for name in FFT_FUNCTIONS:  # the core op fft under numpy.fft's names
        namespaces.register(f"ops.{name}", f"mskernel_science.spectral:{name}")
