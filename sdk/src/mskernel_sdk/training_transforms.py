"""The training-transform seam: how a plugin changes what a training API trains — mixed
precision, the Boost algorithms — without the training plugin knowing that plugin.

A plugin registers a *transform* under the rule kind :data:`TRAINING_TRANSFORM_RULE`, keyed by
the name of the option it serves (``"amp"`` for ``amp_level``, ``"boost"`` for
``boost_level``)::

    @hookimpl
    def mskernel_register_rules(rules):
        rules.register(TRAINING_TRANSFORM_RULE, "amp", transform)

``transform(setup, level)`` receives a :class:`TrainingSetup` and the level the user asked for
(``"O1"`` …; never ``"O0"``, which means "unchanged" and is not passed) and returns the setup
to train instead: a wrapped network, a loss computed in another precision, or a whole
training step of its own (``train_network``).  It reads its own options from
``setup.options`` and removes those it used; the training API rejects what no transform took.
mskernel-nn's ``Model(amp_level=..., boost_level=...)`` calls
:func:`apply_training_transforms` with ``amp=amp_level, boost=boost_level``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from mskernel.errors import MskernelError
from mskernel.hooks.distributions import known_provider
from mskernel.ops import rule_registry

#: The rule kind of training transforms.
TRAINING_TRANSFORM_RULE = "training_transform"


@dataclass
class TrainingSetup:
    """What a training API trains: the ``network``, its ``loss_fn`` (``None`` when the
    network computes its loss), the ``optimizer`` (``None`` when the network is the whole
    training step), ``train_network`` (``None``: the API builds its usual training step from
    the three; a transform that builds the step itself sets it) and the keyword ``options``
    given to the API that no transform has taken yet."""

    network: Any
    loss_fn: Any
    optimizer: Any
    train_network: Any = None
    options: dict[str, Any] = field(default_factory=dict)


def apply_training_transforms(setup: TrainingSetup, who: str,
                              **levels: Optional[str]) -> TrainingSetup:
    """``setup`` changed by the transform registered under each name of ``levels`` at its
    level, in order (``amp="O2", boost="O1"``); a level ``None`` or ``"O0"`` changes nothing.
    Without a provider any other level is an error naming the distribution to install;
    ``setup.options`` that no transform took are a ``TypeError`` naming ``who``."""
    rules = rule_registry()
    for name, level in levels.items():
        if level is None or level == "O0":
            continue
        if name not in rules.ops_with(TRAINING_TRANSFORM_RULE):
            dist = known_provider(name)
            remedy = f"install {dist}" if dist else "no installed plugin provides it"
            raise MskernelError(f"{who}: {name}_level={level!r} needs the '{name}' training "
                                f"transform: {remedy}")
        setup = rules.get(TRAINING_TRANSFORM_RULE, name)(setup, level)
    if setup.options:
        given = ", ".join(f"{name}_level={level!r}" for name, level in levels.items())
        raise TypeError(f"{who} got unexpected keyword arguments {sorted(setup.options)} "
                        f"({given})")
    return setup
