"""The Boost algorithms behind ``Model(boost_level=...)`` and ``mskernel.boost.AutoBoost``:
the levels and their configuration (:mod:`.config`), LessBN (:mod:`.less_bn`), gradient
freezing (:mod:`.freeze`) and the training step that runs them with gradient accumulation
(:mod:`.step`)."""
