"""Sharding propagation (MindSpore's ``sharding_propagation``): from the layouts fixed on
some values, every op gets a strategy — which mesh axes split each of its letters
(:mod:`.rules`) — and so every value a layout.

Fixed layouts come from ``parallel.sharding_constraint`` nodes, from the layouts given for
graph inputs (parameters stored sharded) and from strategies fixed per node (the search,
:mod:`..search`).  Ops are visited breadth-first from those: an op takes the layouts known
around it — what its operands' producers give, what its results' consumers want — as hints,
in operand order, and keeps each hint that fits (an axis splits one letter, dimensions
divide, a contracted letter has a reduction).  Ops that no hint reaches run replicated.
Where what a producer gives differs from what a consumer wants, the partition inserts a
redistribution (:mod:`.redistribute`).

Tuple strategies (block counts) on a constraint are mapped onto the mesh together with the
other constrained operands of the op consuming them: each of its letters with a count takes
the first unused run of mesh axes of that size, so ``((2, 1), (1, 4))`` on a matmul of eight
ranks splits rows and columns over different axes.
"""

from __future__ import annotations

import weakref
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from mskernel_sdk import Graph, Node, TensorType, Value, rule_registry

from ..errors import ShardingError
from .constraint import CONSTRAINT, constraint_layout
from .layout import Axes, Mesh, TensorLayout
from .rules import SHARDING_RULE, OpSharding

Assignment = dict[str, Axes]


def _tensor(v: Value) -> bool:
    return isinstance(v.type, TensorType)


def op_sharding(node: Node) -> OpSharding:
    """The node's rule applied to its operand types (a replicated one when it has none)."""
    ins = [v.type for v in node.inputs if _tensor(v)]
    outs = [v.type for v in node.outputs if _tensor(v)]
    rule = rule_registry().get(SHARDING_RULE, node.op)
    sharding = None
    if rule is not None and not node.regions:
        try:
            sharding = rule(ins, node.attrs)
        except Exception as exc:
            raise ShardingError(f"the sharding rule of '{node.op}'"
                                f"{f' at {node.loc}' if node.loc else ''} failed on "
                                f"{[str(t) for t in ins]}: {exc}") from exc
    if sharding is None:
        return OpSharding(tuple((None,) * t.rank for t in ins),
                          tuple((None,) * t.rank for t in outs))
    return sharding


@dataclass
class NodeStrategy:
    """A node's letters and the mesh axes each split letter takes (never changed once made:
    its layouts are computed once)."""

    sharding: OpSharding
    assignment: Assignment = field(default_factory=dict)
    _layouts: dict[tuple[str, int], TensorLayout] = field(default_factory=dict, repr=False,
                                                          compare=False)

    def splits(self, mesh: Mesh) -> dict[str, int]:
        return {c: mesh.axes_size(a) for c, a in self.assignment.items()}

    def layout(self, letters: Sequence[Optional[str]], mesh: Mesh,
               partial: bool = False) -> TensorLayout:
        dims = tuple(self.assignment.get(c, ()) if c else () for c in letters)
        extra: tuple[tuple[str, str], ...] = ()
        if partial:
            extra = tuple((a, self.sharding.reductions[c]) for c, axes in self.assignment.items()
                          if c in self.sharding.reductions
                          and not any(c in out for out in self.sharding.outputs)
                          for a in axes)
        return TensorLayout(mesh, dims, extra)

    def input_layout(self, i: int, mesh: Mesh) -> TensorLayout:
        key = ("in", i)
        if key not in self._layouts:
            self._layouts[key] = self.layout(self.sharding.inputs[i], mesh)
        return self._layouts[key]

    def output_layout(self, j: int, mesh: Mesh) -> TensorLayout:
        key = ("out", j)
        if key not in self._layouts:
            self._layouts[key] = self.layout(self.sharding.outputs[j], mesh, partial=True)
        return self._layouts[key]


def fit(sharding: OpSharding, shapes: Mapping[str, list[int]], mesh: Mesh,
        hints: Sequence[tuple[Sequence[Optional[str]], TensorLayout]],
        start: Optional[Assignment] = None) -> Assignment:
    """The assignment taking each hint's axes for the letters where they fit."""
    assignment: Assignment = dict(start or {})
    used = {a for axes in assignment.values() for a in axes}
    for letters, layout in hints:
        for c, axes in zip(letters, layout.dims):
            axes = tuple(a for a in axes if mesh.axis_size(a) > 1)
            if c is None or not axes or c in assignment or used & set(axes):
                continue
            k = mesh.axes_size(axes)
            if not sharding.splittable(c) or any(n % k for n in shapes.get(c, ())):
                continue
            assignment[c] = tuple(axes)
            used |= set(axes)
    return assignment


def letter_shapes(sharding: OpSharding, node: Node) -> dict[str, list[int]]:
    """The sizes of the dimensions named by each letter."""
    sizes: dict[str, list[int]] = {}
    tensors = [v for v in node.inputs if _tensor(v)], [v for v in node.outputs if _tensor(v)]
    for letters_list, values in zip((sharding.inputs, sharding.outputs), tensors):
        for letters, v in zip(letters_list, values):
            for c, n in zip(letters, v.type.shape):
                if c is not None:
                    sizes.setdefault(c, []).append(n)
    return sizes


def allocate(counts: Mapping[str, int], mesh: Mesh) -> Assignment:
    """Mesh axes for block counts per letter: each takes the first run of consecutive unused
    axes (of size > 1) whose sizes multiply to its count."""
    taken: set[str] = set()
    out: Assignment = {}
    names = [n for n, s in zip(mesh.names, mesh.shape) if s > 1]
    for letter, count in counts.items():
        if count == 1:
            continue
        for i in range(len(names)):
            run: list[str] = []
            for a in names[i:]:
                if a in taken or mesh.axes_size(run) >= count:
                    break
                run.append(a)
            if run and mesh.axes_size(run) == count:
                out[letter] = tuple(run)
                taken |= set(run)
                break
        else:
            raise ShardingError(f"a strategy splits a dimension into {count} blocks; the mesh "
                                f"{dict(zip(mesh.names, mesh.shape))} has no free axes of that "
                                "size")
    return out


@dataclass
class Propagation:
    """The result: a strategy per node, the layout of each constraint and graph input."""

    graph: Graph
    mesh: Mesh
    strategies: dict[int, NodeStrategy]          # node index -> strategy (not constraints)
    constraints: dict[int, TensorLayout]         # constraint node index -> its layout
    input_layouts: list[TensorLayout]

    def produced(self, v: Value) -> TensorLayout:
        """The layout ``v`` has where it is defined."""
        return self._produced[v.uid]

    def __post_init__(self) -> None:
        self._produced: dict[int, TensorLayout] = {}
        for v, layout in zip(self.graph.inputs, self.input_layouts):
            self._produced[v.uid] = layout
        for index, node in enumerate(self.graph.nodes):
            if index in self.constraints:
                self._produced[node.outputs[0].uid] = self.constraints[index]
                continue
            strategy = self.strategies[index]
            for j, v in enumerate(v for v in node.outputs if _tensor(v)):
                self._produced[v.uid] = strategy.output_layout(j, self.mesh)


#: graph -> (its nodes' rules applied, their letters' sizes), made once per graph
_RULES: "weakref.WeakKeyDictionary[Graph, tuple[dict[int, OpSharding], dict[int, dict]]]" = \
    weakref.WeakKeyDictionary()


def _rules_of(graph: Graph) -> tuple[dict[int, OpSharding], dict[int, dict[str, list[int]]]]:
    if graph not in _RULES:
        shardings = {i: op_sharding(n) for i, n in enumerate(graph.nodes) if n.op != CONSTRAINT}
        shapes = {i: letter_shapes(s, graph.nodes[i]) for i, s in shardings.items()}
        _RULES[graph] = (shardings, shapes)
    return _RULES[graph]


class _Propagator:
    def __init__(self, graph: Graph, mesh: Mesh, input_layouts: Mapping[int, TensorLayout],
                 fixed: Mapping[int, Assignment]) -> None:
        self.graph, self.mesh = graph, mesh
        self.nodes = list(graph.nodes)
        self.producer: dict[int, tuple[int, int]] = {}
        self.consumers: dict[int, list[tuple[int, int]]] = {}
        self.shardings, self.shapes = _rules_of(graph)
        self.strategies: dict[int, NodeStrategy] = {}
        self.constraints: dict[int, TensorLayout] = {}
        self.inputs: dict[int, TensorLayout] = {}
        for i, v in enumerate(graph.inputs):
            if i in input_layouts:
                self.inputs[v.uid] = input_layouts[i]
        for index, node in enumerate(self.nodes):
            for j, v in enumerate(v for v in node.outputs if _tensor(v)):
                self.producer[v.uid] = (index, j)
            for i, v in enumerate(v for v in node.inputs if _tensor(v)):
                self.consumers.setdefault(v.uid, []).append((index, i))
        for index, assignment in fixed.items():
            self.strategies[index] = NodeStrategy(self.shardings[index], dict(assignment))
        self._resolve_constraints()

    # -- constraints -----------------------------------------------------------------------

    def _resolve_constraints(self) -> None:
        counted: dict[int, tuple[int, ...]] = {}
        for index, node in enumerate(self.nodes):
            if node.op != CONSTRAINT:
                continue
            layout = constraint_layout(node.attrs["mesh_shape"], node.attrs["mesh_names"],
                                       node.attrs["spec"])
            if layout is None:
                counted[index] = node.attrs["splits"]
            elif layout.mesh != self.mesh:
                raise ShardingError(
                    f"a strategy{f' at {node.loc}' if node.loc else ''} is on the mesh "
                    f"{dict(zip(layout.mesh.names, layout.mesh.shape))}, the graph is sharded "
                    f"over {dict(zip(self.mesh.names, self.mesh.shape))}")
            else:
                self.constraints[index] = layout
        for index, node in enumerate(self.nodes):  # jointly, by the consumer's letters
            if index not in self.shardings:
                continue
            tensor_inputs = [v for v in node.inputs if _tensor(v)]
            fed = [(i, self.producer[v.uid][0]) for i, v in enumerate(tensor_inputs)
                   if v.uid in self.producer and self.producer[v.uid][0] in counted]
            if not fed:
                continue
            sharding = self.shardings[index]
            counts: dict[str, int] = {}
            for i, source in fed:
                for c, k in zip(sharding.inputs[i], counted[source]):
                    if c is not None and k > 1:
                        if counts.get(c, k) != k:
                            raise ShardingError(
                                f"the strategies of '{node.op}'{f' at {node.loc}' if node.loc else ''}"
                                f" split its dimension '{c}' into {counts[c]} and {k} blocks")
                        counts[c] = k
                    elif k > 1:
                        raise ShardingError(
                            f"op '{node.op}'{f' at {node.loc}' if node.loc else ''} cannot split "
                            f"operand {i}'s dimension {sharding.inputs[i].index(c)} (its rule "
                            "keeps it whole)")
            assignment = allocate(counts, self.mesh)
            strategy = NodeStrategy(sharding, assignment)
            for i, source in fed:
                if source not in self.constraints:
                    self.constraints[source] = strategy.input_layout(i, self.mesh)
        for index, splits in counted.items():  # the rest, each on its own
            if index not in self.constraints:
                letters = tuple(f"d{i}" for i in range(len(splits)))
                assignment = allocate(dict(zip(letters, splits)), self.mesh)
                self.constraints[index] = TensorLayout(
                    self.mesh, tuple(assignment.get(c, ()) for c in letters))

    # -- hints -------------------------------------------------------------------------------

    def _given(self, v: Value) -> Optional[TensorLayout]:
        """The layout ``v`` is defined with, when known."""
        if v.uid in self.inputs:
            return self.inputs[v.uid]
        if v.uid not in self.producer:
            return None
        index, j = self.producer[v.uid]
        if index in self.constraints:
            return self.constraints[index]
        if index in self.strategies:
            return self.strategies[index].output_layout(j, self.mesh)
        return None

    def _wanted(self, v: Value) -> Optional[TensorLayout]:
        """The layout the first placed consumer of ``v`` wants."""
        for index, i in self.consumers.get(v.uid, ()):
            if index in self.constraints:
                return self.constraints[index]
            if index in self.strategies:
                return self.strategies[index].input_layout(i, self.mesh)
        return None

    def _neighbours(self, index: int) -> list[int]:
        node, out = self.nodes[index], []
        for v in node.inputs:
            if v.uid in self.producer:
                out.append(self.producer[v.uid][0])
            out += [c for c, _ in self.consumers.get(v.uid, ())]
        for v in node.outputs:
            out += [c for c, _ in self.consumers.get(v.uid, ())]
        return out

    def _hints(self, index: int) -> list[tuple[Sequence[Optional[str]], TensorLayout]]:
        node, sharding = self.nodes[index], self.shardings[index]
        ins = [v for v in node.inputs if _tensor(v)]
        outs = [v for v in node.outputs if _tensor(v)]
        hints = [(sharding.inputs[i], self._given(v)) for i, v in enumerate(ins)]
        hints += [(sharding.outputs[j], self._wanted(v)) for j, v in enumerate(outs)]
        return [(letters, layout) for letters, layout in hints if layout is not None]

    def _place(self, index: int) -> bool:
        """Give node ``index`` the axes its hints allow (keeping those it has); whether its
        strategy changed."""
        node, sharding = self.nodes[index], self.shardings[index]
        known = self._hints(index)
        old = self.strategies.get(index)
        if not known and old is None:
            return False
        assignment = fit(sharding, self.shapes[index], self.mesh, known,
                         old.assignment if old else None)
        if old is not None and assignment == old.assignment:
            return False
        self.strategies[index] = NodeStrategy(sharding, assignment)
        for i, v in enumerate(v for v in node.inputs if _tensor(v)):
            if v.uid not in self.producer and v.uid not in self.given_inputs:
                self.inputs.pop(v.uid, None)
                self.inputs[v.uid] = self._wanted(v) or self.strategies[index].input_layout(
                    i, self.mesh)
        return True

    def run(self) -> Propagation:
        self.given_inputs = set(self.inputs)
        queue = deque(n for index in [*self.constraints, *self.strategies]
                      for n in self._neighbours(index))
        for v in self.graph.inputs:
            if v.uid in self.inputs:
                queue.extend(c for c, _ in self.consumers.get(v.uid, ()))
        fixed = set(self.strategies)
        while queue:  # breadth-first from the fixed layouts
            index = queue.popleft()
            if index in self.strategies or index in self.constraints:
                continue
            if self._place(index):
                queue.extend(self._neighbours(index))
        free = [i for i in self.strategies if i not in fixed]
        for _ in range(len(self.nodes)):  # then what later ops want, until nothing changes
            if not any([self._place(i) for i in reversed(free)]):
                break
        for index in self.shardings:
            self.strategies.setdefault(index, NodeStrategy(self.shardings[index]))
        layouts = []
        for v in self.graph.inputs:
            layout = self.inputs.get(v.uid) or self._wanted(v) if _tensor(v) else None
            layouts.append(layout or TensorLayout.replicated(self.mesh, _rank(v)))
        return Propagation(self.graph, self.mesh, self.strategies, self.constraints, layouts)


def _rank(v: Value) -> int:
    return len(v.type.shape) if _tensor(v) else 0


def propagate(graph: Graph, mesh: Mesh, input_layouts: Optional[Mapping[int, TensorLayout]] = None,
              fixed: Optional[Mapping[int, Assignment]] = None) -> Propagation:
    """Strategies for every node of ``graph`` on ``mesh``: from its constraint nodes, the
    layouts of the graph inputs numbered in ``input_layouts`` and the strategies ``fixed``
    per node index."""
    return _Propagator(graph, mesh, input_layouts or {}, fixed or {}).run()
