"""Op samples: inputs that exercise an op, for plugin tests and the conformance kit.

Core ops take theirs from the core's op table (:mod:`mskernel.testing.samples`).  A plugin
gives samples to the ops it defines by attaching a sample function to each op under the rule
kind :data:`SAMPLES_RULE`, in its ``mskernel_register_rules`` hook::

    @hookimpl
    def mskernel_register_rules(rules):
        rules.register(SAMPLES_RULE, "acme.softsign", softsign_samples)

A sample function takes a seeded ``numpy.random.Generator`` and yields
:class:`~mskernel.testing.OpSample` objects: every dtype family the op accepts, broadcasting
where it applies, and edge shapes (size-0 and size-1 dims, scalars).  Keep them small: the
kit runs every sample on every backend that claims the op.
"""

from __future__ import annotations

import zlib

import numpy as np
from mskernel.ops import rule_registry
from mskernel.testing import OpSample
from mskernel.testing.samples import sample_functions

#: The rule kind under which a plugin attaches a sample function to an op.
SAMPLES_RULE = "samples"


def sample_rng(seed: int, subject: str) -> np.random.Generator:
    """The generator the kit uses for ``subject`` (an op or graph name) under ``seed``: the
    same on every machine and Python process, so a printed seed reproduces a failure."""
    return np.random.default_rng([seed, zlib.crc32(subject.encode())])


def samples_for(op: str, seed: int = 0) -> list[OpSample]:
    """The samples of ``op`` drawn with ``seed``: those of the core op table, then those a
    plugin attached under :data:`SAMPLES_RULE` (empty when there are none)."""
    rng = sample_rng(seed, op)
    sources = [sample_functions().get(op), rule_registry().get(SAMPLES_RULE, op)]
    return [sample for source in sources if source is not None for sample in source(rng)]
