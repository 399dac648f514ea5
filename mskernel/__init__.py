"""mskernel: an all-scenario AI computing framework built as a plugin-based microkernel.

The core defines the IR (:mod:`mskernel.ir`), the op registry (:mod:`mskernel.ops`), the pass
manager (:mod:`mskernel.passes`), the executor interfaces and the reference backend
(:mod:`mskernel.runtime`), and the plugin system (:mod:`mskernel.hooks`).  Everything else is a
plugin; ``mskernel.<name>`` resolves to the namespace a plugin registered under ``name``.
"""

from __future__ import annotations

__version__ = "0.1.0"

#: The version of the plugin API: hookspecs, registries and the Backend interface.
PLUGIN_API_VERSION = "1.0"

_SUBMODULES = {"ir", "ops", "passes", "runtime", "hooks", "errors", "cli"}


def __getattr__(name: str):
    if name in _SUBMODULES:
        from importlib import import_module

        return import_module(f"{__name__}.{name}")
    if name.startswith("_"):
        raise AttributeError(f"module 'mskernel' has no attribute {name!r}")
    from .hooks.host import host

    return host().namespace(name)
