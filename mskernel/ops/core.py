"""The core op set.  It registers through the same hook as any plugin's ops: core features
are plugins too."""

from __future__ import annotations

from importlib import import_module

from ..hooks.markers import hookimpl
from .registry import OpRegistry

#: The modules of ``mskernel.ops`` that hold core op families, each exposing ``OPS``.
FAMILIES = (
    "elementwise", "reduction", "linalg", "nn", "conv", "shape", "indexing", "sorting",
    "random", "control", "state",
)


@hookimpl
def mskernel_register_ops(registry: OpRegistry) -> None:
    for family in FAMILIES:
        registry.define_all(import_module(f"{__package__}.{family}").OPS)
