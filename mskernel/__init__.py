"""mskernel: an all-scenario AI computing framework built as a plugin-based microkernel.

The core defines the IR (:mod:`mskernel.ir`), the op registry (:mod:`mskernel.ops`), the pass
manager (:mod:`mskernel.passes`), the executor interfaces and the reference backend
(:mod:`mskernel.runtime`), and the plugin system (:mod:`mskernel.hooks`).  Everything else is a
plugin; ``mskernel.<name>`` resolves to the namespace a plugin registered under ``name``.
"""

from __future__ import annotations

from ._importer import install as _install_namespace_importer
from ._version import PLUGIN_API_VERSION as PLUGIN_API_VERSION, __version__ as __version__

_install_namespace_importer()

_SUBMODULES = {"ir", "ops", "passes", "runtime", "hooks", "errors", "cli", "frontend", "common",
               "context"}

#: Top-level names of the frontend and of MindSpore's API → (module, attribute) — imported
#: on first access, so ``import mskernel`` stays cheap.  An empty attribute means the module
#: itself.
_FRONTEND = {
    "Tensor": ("mskernel.frontend.tensor", "Tensor"),
    "tensor": ("mskernel.frontend.tensor", "tensor"),
    "Parameter": ("mskernel.frontend.parameter", "Parameter"),
    "ParameterTuple": ("mskernel.frontend.parameter", "ParameterTuple"),
    "jit": ("mskernel.frontend.jit", "jit"),
    "jit_class": ("mskernel.frontend.jit", "jit_class"),
    "mutable": ("mskernel.frontend.jit", "mutable"),
    "set_device": ("mskernel.frontend.device", "set_device"),
    "get_device": ("mskernel.frontend.device", "get_device"),
    "device": ("mskernel.frontend.device", "device"),
    "random": ("mskernel.frontend.random", ""),
    "dtype": ("mskernel.common.dtype", ""),
    "set_seed": ("mskernel.common.seed", "set_seed"),
    "get_seed": ("mskernel.common.seed", "get_seed"),
    **{name: ("mskernel.context", name) for name in (
        "set_context", "get_context", "GRAPH_MODE", "PYNATIVE_MODE", "STRICT", "COMPATIBLE",
        "LAX")},
}
_DTYPES = {
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
}


def __getattr__(name: str):
    from importlib import import_module

    if name in _SUBMODULES:
        return import_module(f"{__name__}.{name}")
    if name in _FRONTEND:
        module_name, attribute = _FRONTEND[name]
        module = import_module(module_name)
        return getattr(module, attribute) if attribute else module
    if name in _DTYPES:
        return getattr(import_module(f"{__name__}.ir.dtypes"), name)
    if name.startswith("_"):
        raise AttributeError(f"module 'mskernel' has no attribute {name!r}")
    from .hooks.host import host

    return host().namespace(name)
