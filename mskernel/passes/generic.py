"""The generic, hardware-independent passes and the O0–O3 pipelines, registered as a
built-in plugin."""

from __future__ import annotations

from ..hooks.markers import hookimpl

PIPELINES: dict[str, tuple[str, ...]] = {"O0": (), "O1": (), "O2": (), "O3": ()}


@hookimpl
def mskernel_register_passes(passes) -> None:
    for name, names in PIPELINES.items():
        passes.register_pipeline(name, names)
