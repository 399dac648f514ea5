"""Random and state ops, declared not batchable.

A random op draws from one key: with an unbatched key it is applied as it is (every example
then sees the same draws, as a Python loop calling it with that key would), so only a batched
key — or ``random_categorical``'s batched logits, whose draws a single call would take from
other counters than a loop does — reaches the machinery.  Parameters are read as inputs of a
vmapped function and cannot be assigned inside it, so ``ref_load``/``ref_store`` never meet
a batch.
"""

from __future__ import annotations

_KEYED = ("random_split", "random_fold_in", "random_bits", "random_uniform", "random_normal",
          "random_truncated_normal", "random_bernoulli", "random_randint", "random_permutation")

_PER_KEY = ("draws from a batch of keys: draw for the whole batch outside vmap (a shape with "
            "the batch in front), or pass one key")

NOT_BATCHABLE: dict[str, str] = {op: _PER_KEY for op in _KEYED} | {
    "random_categorical": "each example's draw would come from other counters of the key than "
                          "a loop's: draw outside vmap from the batched logits instead",
    "ref_load": "parameters are inputs of a vmapped function, never loaded inside it",
    "ref_store": "parameters cannot be assigned inside a vmapped function",
}
BATCH: dict[str, object] = {}
