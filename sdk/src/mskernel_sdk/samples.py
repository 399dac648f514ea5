"""Op samples: inputs that exercise an op, for plugin tests and the conformance kit.

Every op's samples are attached to it under the rule kind :data:`SAMPLES_RULE` — the core's
by the core's own ``mskernel_register_rules`` hook, beside their op definitions, a plugin's
the same way::

    @hookimpl
    def mskernel_register_rules(rules):
        rules.register(SAMPLES_RULE, "acme.softsign", softsign_samples)

A sample function takes a seeded ``numpy.random.Generator`` and yields
:class:`~mskernel.testing.OpSample` objects: every dtype family the op accepts, broadcasting
where it applies, and edge shapes (size-0 and size-1 dims, scalars).  Keep them small: the
kit runs every sample on every backend that claims the op.  :func:`samples_for` draws an op's
samples from the rule registry with the kit's generator (:func:`sample_rng`).
"""

from __future__ import annotations

from mskernel.testing import SAMPLES_RULE, sample_rng, samples_for

__all__ = ["SAMPLES_RULE", "sample_rng", "samples_for"]
