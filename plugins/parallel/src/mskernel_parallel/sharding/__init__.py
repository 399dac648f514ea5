"""Operator parallelism: sharding strategies as data on the IR (:mod:`.layout`,
:mod:`.constraint`), per-op sharding rules (:mod:`.rules`), their propagation
(:mod:`.propagate`), the partition of a graph into one graph per rank with the
redistributing collectives inserted (:mod:`.partition`, :mod:`.redistribute`), and a
one-process simulation of every rank (:mod:`.simulate`)."""
