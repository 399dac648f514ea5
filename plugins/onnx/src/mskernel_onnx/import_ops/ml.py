"""Tensor ops of the ``ai.onnx.ml`` domain: ``Binarizer``, ``ArrayFeatureExtractor`` and
``TreeEnsemble``.

A tree ensemble is static data, so its translation needs no loop: every node's test is
evaluated for every row at once (a gather of the feature columns compared with the split
values), each leaf's path is a fixed list of node tests (or their negations) whose
conjunction says whether a row reaches it, and the reached leaves' weights are summed,
averaged or reduced per target.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from mskernel_sdk import Value

from .common import broadcast, check_table, normalize_indices, scalar, shape

if TYPE_CHECKING:
    from ..context import NodeContext

DOMAIN = "ai.onnx.ml"

Handler = Callable[["NodeContext"], object]


def _binarizer(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    above = ctx.op("greater", x, scalar(ctx, ctx.attr("threshold", 0.0), x))
    return ctx.op("where", above, scalar(ctx, 1, x), scalar(ctx, 0, x))


def _array_feature_extractor(ctx: "NodeContext") -> Value:
    """The last axis of ``X`` at ``Y``'s (flattened) indices."""
    x, idx = ctx.input(0), ctx.input(1)
    flat = ctx.op("reshape", idx, shape=(-1,))
    return ctx.op("gather", x, normalize_indices(ctx, flat, shape(x)[-1]), axis=len(shape(x)) - 1)


#: TreeEnsemble's node modes → the core comparison (MEMBER, 6, is set membership)
_TESTS = {0: "less_equal", 1: "less", 2: "greater_equal", 3: "greater", 4: "equal",
          5: "not_equal"}
_MEMBER = 6


def _leaf_paths(ctx: "NodeContext", roots: list[int], true_ids: list[int],
                false_ids: list[int], true_leaf: list[int], false_leaf: list[int]
                ) -> tuple[list[list[tuple[int, bool]]], list[int]]:
    """For each leaf reachable from a root: its path (node, branch taken) and its index."""
    paths: list[list[tuple[int, bool]]] = []
    leaves: list[int] = []
    for root in roots:
        if true_leaf[root] and false_leaf[root] and true_ids[root] == false_ids[root]:
            paths.append([])  # a tree that is a single leaf
            leaves.append(true_ids[root])
            continue
        stack: list[tuple[int, list[tuple[int, bool]]]] = [(root, [])]
        while stack:
            node, path = stack.pop()
            if len(path) > len(true_ids):
                ctx.fail("the trees have a cycle")
            for branch, target, is_leaf in ((True, true_ids[node], true_leaf[node]),
                                            (False, false_ids[node], false_leaf[node])):
                if is_leaf:
                    paths.append(path + [(node, branch)])
                    leaves.append(target)
                else:
                    stack.append((target, path + [(node, branch)]))
            check_table(ctx, (len(paths) + len(stack),), "the tree paths")
    return paths, leaves


def _node_tests(ctx: "NodeContext", x: Value, features: list[int], modes: list[int]) -> Value:
    """``[rows, nodes]``: whether each row passes each node's test."""
    columns = ctx.op("gather", x, ctx.constant(np.array(features, np.int64)), axis=1)
    splits = np.asarray(ctx.attr("nodes_splits"), np.float64)
    passed = None
    for mode, op in _TESTS.items():
        if mode not in modes:
            continue
        test = ctx.op(op, columns, ctx.constant(splits, ctx.input(0).type.dtype))
        chosen = ctx.constant(np.array(modes) == mode)
        passed = test if passed is None else ctx.op("where", chosen, test, passed)
    if _MEMBER in modes:
        members = list(np.asarray(ctx.attr("membership_values"), np.float64))
        sets, current = [], []
        for v in members:
            if np.isnan(v):
                sets.append(current)
                current = []
            else:
                current.append(v)
        widest = max((len(m) for m in sets), default=1) or 1
        table = np.full((len(modes), widest), np.nan)
        for node, values in zip([i for i, m in enumerate(modes) if m == _MEMBER], sets):
            table[node, :len(values)] = values
        hits = ctx.op("equal", ctx.op("expand_dims", columns, axes=(2,)),
                      ctx.constant(table, ctx.input(0).type.dtype))
        member = ctx.op("any", hits, axes=(2,))
        chosen = ctx.constant(np.array(modes) == _MEMBER)
        passed = member if passed is None else ctx.op("where", chosen, member, passed)
    assert passed is not None
    tracks = ctx.attr("nodes_missing_value_tracks_true", None)
    if tracks is not None and any(tracks):
        missing = ctx.op("logical_and", ctx.op("isnan", columns),
                         ctx.constant(np.array(tracks, bool)))
        passed = ctx.op("logical_or", passed, missing)
    return passed


def _tree_ensemble(ctx: "NodeContext") -> Value:
    x = ctx.input(0)
    rows = shape(x)[0]
    modes = [int(m) for m in np.asarray(ctx.attr("nodes_modes")).reshape(-1)]
    features = list(ctx.attr("nodes_featureids"))
    roots = list(ctx.attr("tree_roots"))
    paths, leaves = _leaf_paths(ctx, roots, list(ctx.attr("nodes_truenodeids")),
                                       list(ctx.attr("nodes_falsenodeids")),
                                       list(ctx.attr("nodes_trueleafs")),
                                       list(ctx.attr("nodes_falseleafs")))
    n_nodes, depth = len(modes), max((len(p) for p in paths), default=0) or 1
    check_table(ctx, (rows, len(paths), depth), "the leaf-path table")
    passed = _node_tests(ctx, x, features, modes)
    # columns: each node's test, then its negation, then a column of True for padding
    literals = ctx.op("concat", passed, ctx.op("logical_not", passed),
                      broadcast(ctx, ctx.constant(np.array(True)), (rows, 1)), axis=1)
    table = np.full((len(paths), depth), 2 * n_nodes, np.int64)
    for leaf, path in enumerate(paths):
        for step, (node, branch) in enumerate(path):
            table[leaf, step] = node if branch else node + n_nodes
    reached = ctx.op("all", ctx.op("gather", literals, ctx.constant(table), axis=1), axes=(2,))
    weights = np.asarray(ctx.attr("leaf_weights"), np.float64)[leaves]
    targets = np.asarray(ctx.attr("leaf_targetids"), np.int64)[leaves]
    n_targets = ctx.attr("n_targets")
    hits = targets[:, None] == np.arange(n_targets)[None, :]  # [leaves, targets]
    dt = x.type.dtype  # type: ignore[union-attr]
    aggregate = ctx.attr("aggregate_function", 1)
    if aggregate in (0, 1):
        share = weights[:, None] * hits / (len(roots) if aggregate == 0 else 1)
        return ctx.op("matmul", ctx.op("cast", reached, dtype=dt), ctx.constant(share, dt))
    if aggregate not in (2, 3):
        ctx.fail(f"aggregate_function {aggregate} is not one of AVERAGE, SUM, MIN, MAX")
    info = np.finfo(dt.storage)
    empty = info.max if aggregate == 2 else info.min
    candidates = ctx.op("where", ctx.op("logical_and", ctx.op("expand_dims", reached, axes=(2,)),
                                        ctx.constant(hits)),
                        ctx.constant(np.broadcast_to(weights[:, None], hits.shape), dt),
                        scalar(ctx, empty, x))
    return ctx.op("min" if aggregate == 2 else "max", candidates, axes=(1,))


OPS: dict[str, Handler] = {"Binarizer": _binarizer, "ArrayFeatureExtractor": _array_feature_extractor,
                           "TreeEnsemble": _tree_ensemble}
