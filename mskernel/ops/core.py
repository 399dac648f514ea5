"""The core op set.  It registers through the same hooks as any plugin's ops and rules (core
features are plugins too): each family's op definitions, and the sample functions defined
beside them under :data:`~mskernel.ops.samples.SAMPLES_RULE`."""

from __future__ import annotations

from importlib import import_module

from ..hooks.markers import hookimpl
from .registry import OpRegistry, RuleRegistry
from .samples import SAMPLES_RULE

#: The modules of ``mskernel.ops`` that hold core op families, each exposing ``OPS`` and
#: ``SAMPLES`` (op name → sample function).
FAMILIES = (
    "elementwise", "reduction", "linalg", "nn", "conv", "shape", "indexing", "sorting",
    "random", "control", "state",
)


@hookimpl
def mskernel_register_ops(registry: OpRegistry) -> None:
    for family in FAMILIES:
        registry.define_all(import_module(f"{__package__}.{family}").OPS)


@hookimpl
def mskernel_register_rules(rules: RuleRegistry) -> None:
    for family in FAMILIES:
        for op, samples in import_module(f"{__package__}.{family}").SAMPLES.items():
            rules.register(SAMPLES_RULE, op, samples)
