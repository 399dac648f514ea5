"""Flattening nested Python containers of tensors (tuples, lists, dicts, None) into leaves and
a structure that rebuilds them — what jit arguments, control-flow state and results are."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class TreeDef:
    """The shape of a container: ``kind`` is "leaf", "none", "tuple", "list" or "dict"."""

    kind: str
    children: tuple["TreeDef", ...] = ()
    keys: tuple[Any, ...] = ()

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __str__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(
            f"{k!r}: {c}" for k, c in zip(self.keys, self.children)
        ) if self.kind == "dict" else ", ".join(str(c) for c in self.children)
        return {"tuple": f"({inner})", "list": f"[{inner}]", "dict": f"{{{inner}}}"}[self.kind]


LEAF = TreeDef("leaf")
NONE = TreeDef("none")


def flatten(tree: Any, is_leaf: Callable[[Any], bool] = lambda x: False) -> tuple[list[Any], TreeDef]:
    leaves: list[Any] = []

    def walk(node: Any) -> TreeDef:
        if is_leaf(node):
            leaves.append(node)
            return LEAF
        if node is None:
            return NONE
        if isinstance(node, tuple) and not hasattr(node, "_fields"):
            return TreeDef("tuple", tuple(walk(c) for c in node))
        if isinstance(node, list):
            return TreeDef("list", tuple(walk(c) for c in node))
        if isinstance(node, dict):
            keys = tuple(sorted(node, key=repr))
            return TreeDef("dict", tuple(walk(node[k]) for k in keys), keys)
        leaves.append(node)
        return LEAF

    return leaves, walk(tree)


def unflatten(treedef: TreeDef, leaves: list[Any]) -> Any:
    it = iter(leaves)

    def build(td: TreeDef) -> Any:
        if td.kind == "leaf":
            return next(it)
        if td.kind == "none":
            return None
        children = [build(c) for c in td.children]
        if td.kind == "tuple":
            return tuple(children)
        if td.kind == "list":
            return children
        return dict(zip(td.keys, children))

    out = build(treedef)
    if next(it, None) is not None:
        raise ValueError("too many leaves for the tree structure")
    return out
