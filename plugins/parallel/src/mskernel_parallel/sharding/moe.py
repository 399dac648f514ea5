"""Expert parallelism: a mixture-of-experts layer whose experts are spread over the ranks,
tokens dispatched to them and combined back with ``all_to_all`` (GShard, Switch Transformer).

``moe(x, router, w_in, w_out, top_k=1, capacity_factor=1.25, group=None)`` on each rank's
tokens ``x`` (``T × d``): a router (``d × E``, every rank a copy) gives each token its
``top_k`` experts by softmax probability; each expert takes at most ``C = ceil(capacity_factor
· T · top_k / E)`` of a rank's tokens (first choices first, in token order; a token over
capacity skips that expert); ``w_in`` (``E/n × d × h``) and ``w_out`` (``E/n × h × d``) are
this rank's experts, ``gelu(x w_in) w_out`` each.  Returns the combined output (each token's
expert outputs weighted by their router probabilities) and Switch Transformer's
load-balancing loss ``E · Σ_e f_e · P_e`` (``f_e``: the share of tokens whose first choice is
``e``, ``P_e``: their mean probability for ``e``), both for this rank's tokens.

Differentiable with mskernel-autodiff: gradients reach the router through the combine
weights and the experts through the ``all_to_all``s (their derivative is the transposed
exchange).  Under the collectives' convention the ranks' objective is the sum of what each
computes: weight each rank's loss by ``1 / n`` and sum the router's gradient over the ranks;
the experts' gradients are complete on their ranks.  A group of one rank holds every expert
and computes the same layer alone.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
from mskernel_sdk import Tensor

from mskernel import ops

from .. import groups
from ..communication import all_to_all
from ..errors import ShardingError


def route(probs: np.ndarray, top_k: int, capacity: int) -> np.ndarray:
    """The dispatch mask ``T × E × C``: token ``t`` takes slot ``c`` of expert ``e``."""
    tokens, experts = probs.shape
    choices = np.argsort(-probs, axis=1, kind="stable")[:, :top_k]
    mask = np.zeros((tokens, experts, capacity), probs.dtype)
    filled = np.zeros(experts, np.int64)
    for j in range(top_k):  # every token's first choice before any second choice
        for t in range(tokens):
            e = choices[t, j]
            if filled[e] < capacity:
                mask[t, e, filled[e]] = 1
                filled[e] += 1
    return mask


def moe(x: Any, router: Any, w_in: Any, w_out: Any, top_k: int = 1,
        capacity_factor: float = 1.25, group: Optional[str] = None) -> tuple[Tensor, Tensor]:
    """See the module doc."""
    n = len(groups.group_ranks(group))
    tokens, _ = x.shape
    experts = router.shape[1]
    if experts % n or w_in.shape[0] != experts // n or w_out.shape[0] != experts // n:
        raise ShardingError(f"moe: {experts} experts over {n} ranks need {experts // n} per "
                            f"rank; w_in has {w_in.shape[0]}, w_out {w_out.shape[0]}")
    if not 1 <= top_k <= experts:
        raise ShardingError(f"moe: top_k must be 1 to {experts}, got {top_k}")
    capacity = max(1, math.ceil(capacity_factor * tokens * top_k / experts))
    probs = ops.softmax(ops.matmul(x, router), -1)
    dispatch = Tensor(route(probs.numpy(), top_k, capacity))
    combine = dispatch * ops.reshape(probs, (tokens, experts, 1))
    slots = ops.einsum("tec,td->ecd", dispatch, x)                       # E × C × d
    mine = all_to_all(slots, split_axis=0, concat_axis=1, group=group)   # E/n × nC × d
    hidden = ops.gelu(ops.einsum("ecd,edh->ech", mine, w_in))
    done = ops.einsum("ech,ehd->ecd", hidden, w_out)
    back = all_to_all(done, split_axis=1, concat_axis=0, group=group)    # E × C × d
    y = ops.einsum("tec,ecd->td", combine, back)
    first = np.argmax(probs.numpy(), axis=1)
    share = Tensor(np.bincount(first, minlength=experts).astype(probs.numpy().dtype) / tokens)
    balance = ops.sum(share * ops.mean(probs, 0)) * experts
    return y, balance
