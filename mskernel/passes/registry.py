"""Passes and named pipelines, by open-string name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ..errors import PluginError
from .base import Pass


@dataclass(frozen=True)
class Pipeline:
    name: str
    passes: tuple[str, ...]
    owner: str


@dataclass
class PassRegistry:
    """``mskernel_register_passes`` receives a view of this registry scoped to its plugin.

    Pipelines named ``O0`` … ``O3`` are the generic pipelines run before partitioning at that
    optimisation level; a backend names its own (``"cpu.O2"``) and runs it in ``compile``.
    """

    passes: dict[str, tuple[Pass, str]] = field(default_factory=dict)  # name → (pass, owner)
    pipelines: dict[str, Pipeline] = field(default_factory=dict)

    def register(self, pass_: Pass, *, owner: str = "unknown") -> None:
        if not isinstance(pass_, Pass):
            raise PluginError(f"{owner}: {pass_!r} does not implement the Pass contract (name, run)")
        existing = self.passes.get(pass_.name)
        if existing is not None:
            raise PluginError(f"pass '{pass_.name}' is already registered by {existing[1]}")
        self.passes[pass_.name] = (pass_, owner)

    def register_pipeline(self, name: str, passes: Sequence[str], *, owner: str = "unknown",
                          override: bool = False) -> None:
        existing = self.pipelines.get(name)
        if existing is not None and not override:
            raise PluginError(f"pipeline '{name}' is already registered by {existing.owner}")
        self.pipelines[name] = Pipeline(name, tuple(passes), owner)

    def get(self, name: str) -> Pass:
        try:
            return self.passes[name][0]
        except KeyError:
            raise PluginError(
                f"unknown pass '{name}'; registered: {', '.join(sorted(self.passes)) or 'none'}"
            ) from None

    def pipeline(self, name: str) -> list[Pass]:
        try:
            spec = self.pipelines[name]
        except KeyError:
            raise PluginError(
                f"unknown pipeline '{name}'; registered: {', '.join(sorted(self.pipelines)) or 'none'}"
            ) from None
        return [self.get(p) for p in spec.passes]

    def snapshot(self) -> Any:
        """The passes and pipelines as they are now, for :meth:`restore`."""
        return dict(self.passes), dict(self.pipelines)

    def restore(self, state: Any) -> None:
        """Go back to a :meth:`snapshot`."""
        passes, pipelines = state
        self.passes.clear()
        self.passes.update(passes)
        self.pipelines.clear()
        self.pipelines.update(pipelines)
