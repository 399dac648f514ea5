"""MindSpore's functional ops that are neural-network building blocks — losses
(:mod:`.losses`), activations (:mod:`.activations`), resampling, patches and distances
(:mod:`.spatial`) — exposed with the primitive classes (:mod:`mskernel_nn.primitives`) as
members of ``mskernel.ops`` (``ops.cross_entropy``, ``ops.ReduceMean``)."""

from __future__ import annotations

from importlib import import_module

#: The modules whose ``__all__`` are members of ``mskernel.ops``.
OPS_MODULES = ("mskernel_nn.functional.losses", "mskernel_nn.functional.activations",
               "mskernel_nn.functional.spatial", "mskernel_nn.primitives")


def ops_members() -> dict[str, str]:
    """``mskernel.ops.<name>`` → ``"module:name"``, for the namespace registry."""
    return {name: f"{module}:{name}" for module in OPS_MODULES
            for name in import_module(module).__all__}
