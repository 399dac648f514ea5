"""Property tests: on random well-typed graphs, every generic pass and every pipeline keeps
the graph valid and its results unchanged (checked with the reference interpreter), and the
passes are idempotent.

The graphs mix what the passes look for: elementwise math, constants and fills (``x * 1``,
``0 + x`` included), reshape/transpose/squeeze chains, repeated and commuted subexpressions,
dead values, random draws, ``If`` and ``While`` with their own such code inside, and loads
and stores of a ref threaded by a token.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, given, note, settings
from hypothesis import strategies as st

from mskernel.errors import InferError
from mskernel.hooks.host import host
from mskernel.ir import TOKEN, Graph, GraphBuilder, RefType, Value, tensor_type
from mskernel.ir.dtypes import as_storage, dtype as to_dtype
from mskernel.ir.types import TensorType
from mskernel.ir.verify import verify
from mskernel.ops.rules import broadcast_shapes
from mskernel.passes import PassContext, PassManager
from mskernel.passes.rewrite import count_nodes
from mskernel.testing import random_array

SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

DTYPES = ("f32", "f64", "bf16", "f16", "i32", "i64")
SHAPES = ((2, 3), (4,), (2, 1, 3), ())
UNARY = {"f": ("neg", "abs", "exp", "sin", "tanh", "square", "sqrt", "log", "relu", "floor",
               "sigmoid"),
         "i": ("neg", "abs", "square", "sign", "relu")}
BINARY = {"f": ("add", "sub", "mul", "div", "maximum", "minimum", "pow"),
          "i": ("add", "sub", "mul", "maximum", "minimum")}
COMMUTATIVE = ("add", "mul", "maximum", "minimum")
EFFECTS = ("ref_load", "ref_store")


@dataclass
class Effects:
    """The ref a graph reads and writes, and its current token."""

    ref: Value
    token: Value


class NoCandidate(Exception):
    """No value of the pool fits what an action needs."""


class ProgramBuilder:
    """Draws the nodes of one graph scope (the top graph or a region) over one dtype."""

    def __init__(self, draw: Callable, b: GraphBuilder, dt: str, depth: int,
                 state: Effects | None = None) -> None:
        self.draw = draw
        self.b = b
        self.dt = dt
        self.kind = "f" if to_dtype(dt).is_floating else "i"
        self.depth = depth
        self.pool: list[Value] = []
        self.state = state

    # -- helpers ------------------------------------------------------------------------------

    def pick(self, fits: Callable[[Value], bool] = lambda v: True) -> Value:
        candidates = [v for v in self.pool if fits(v)]
        if not candidates:
            raise NoCandidate
        return candidates[self.draw(st.integers(0, len(candidates) - 1))]

    def add(self, value: Value) -> Value:
        self.pool.append(value)
        return value

    def splat(self, shape: tuple[int, ...], value: float) -> Value:
        if self.draw(st.booleans()):
            return self.b.op("full", shape=shape, value=value, dtype=self.dt)
        array = as_storage(np.full(shape, value), to_dtype(self.dt))
        return self.b.op("constant", value=array, dtype=self.dt)

    # -- actions ------------------------------------------------------------------------------

    def unary(self) -> None:
        op = self.draw(st.sampled_from(UNARY[self.kind]))
        self.add(self.b.op(op, self.pick()))

    def binary(self) -> None:
        x = self.pick()
        y = self.pick(lambda v: _broadcasts(v.type.shape, x.type.shape))
        op = self.draw(st.sampled_from(BINARY[self.kind]))
        self.add(self.b.op(op, x, y))

    def constant(self) -> None:
        shape = self.pick().type.shape
        fill = self.draw(st.sampled_from([0.0, 1.0, 2.0, -1.0, None]))
        if fill is None:
            rng = np.random.default_rng(self.draw(st.integers(0, 3)))
            array = random_array(rng, shape, self.dt, -3, 3)
            self.add(self.b.op("constant", value=array, dtype=self.dt))
        else:
            self.add(self.splat(shape, fill))

    def identity(self) -> None:
        """A pattern simplify removes: x*1, 1*x, x+0, 0+x, x-0, x/1, neg(neg(x)), ..."""
        x = self.pick()
        shape = x.type.shape
        choice = self.draw(st.integers(0, 7))
        b = self.b
        if choice == 0:
            self.add(b.op("mul", x, self.splat(shape, 1.0)))
        elif choice == 1:
            self.add(b.op("mul", self.splat((), 1.0), x))
        elif choice == 2:
            self.add(b.op("add", self.splat(shape[1:], 0.0), x))
        elif choice == 3:
            self.add(b.op("sub", x, self.splat((), 0.0)))
        elif choice == 4 and self.kind == "f":
            self.add(b.op("div", x, self.splat(shape, 1.0)))
        elif choice == 5:
            self.add(b.op("neg", b.op("neg", x)))
        elif choice == 6:
            self.add(b.op("cast", x, dtype=self.dt))
        else:
            self.add(b.op("broadcast_to", x, shape=shape))

    def reshape(self) -> None:
        x = self.pick(lambda v: v.type.size > 0)
        for _ in range(self.draw(st.integers(1, 3))):
            step = self.draw(st.sampled_from(["reshape", "expand", "squeeze"]))
            if step == "reshape":
                x = self.b.op("reshape", x, shape=self.draw(st.sampled_from(_shapes_of_size(
                    x.type.size))))
            elif step == "expand":
                x = self.b.op("expand_dims", x, axes=(self.draw(st.integers(0, x.type.rank)),))
            else:
                x = self.b.op("squeeze", x)
        self.add(x)

    def transpose(self) -> None:
        x = self.pick(lambda v: v.type.rank >= 2)
        for _ in range(self.draw(st.integers(1, 3))):
            perm = self.draw(st.permutations(range(x.type.rank)))
            x = self.b.op("transpose", x, perm=None if self.draw(st.booleans()) else tuple(perm))
        self.add(x)

    def duplicate(self) -> None:
        """Repeat an earlier pure node of this scope, commuting its inputs when allowed."""
        nodes = [n for n in self.b.nodes if not n.regions and n.op not in EFFECTS]
        if not nodes:
            raise NoCandidate
        node = nodes[self.draw(st.integers(0, len(nodes) - 1))]
        inputs = list(node.inputs)
        if node.op in COMMUTATIVE and self.draw(st.booleans()):
            inputs.reverse()
        out = self.b.op(node.op, *inputs, **dict(node.attrs))
        if isinstance(out, Value) and _is_ours(out, self.dt):
            self.add(out)

    def random(self) -> None:
        key = self.b.op("random_key", seed=self.draw(st.integers(0, 1)))
        self.add(self.b.op("random_uniform", key, shape=self.pick().type.shape, dtype=self.dt))

    def load(self) -> None:
        value, self.state.token = self.b.op("ref_load", self.state.ref, self.state.token)
        self.add(value)

    def store(self) -> None:
        value = self.pick(lambda v: v.type == self.state.ref.type.value)
        self.state.token = self.b.op("ref_store", self.state.ref, value, self.state.token)

    def if_(self) -> None:
        if self.draw(st.booleans()):
            pred = self.b.input(tensor_type("bool", ()), "pred")
        else:  # a condition known at compile time
            pred = self.b.op("constant", value=np.array(self.draw(st.booleans())))
        operands = [self.pick() for _ in range(self.draw(st.integers(1, 2)))]
        result = operands[0].type

        def branch(inner: ProgramBuilder, *inputs: Value) -> list[Value]:
            return [inner.pick(lambda v: v.type == result)]

        types = [v.type for v in operands]
        (out,) = self.b.op("If", pred, *operands,
                           regions=[self.region(types, branch), self.region(types, branch)])
        self.add(out)

    def while_(self) -> None:
        x = self.pick()
        limit = self.draw(st.integers(0, 3))

        def count(inner: ProgramBuilder, step: float) -> Value:
            return inner.b.op("full", shape=(), value=step, dtype="i32")

        def cond(inner: ProgramBuilder, i: Value, v: Value) -> list[Value]:
            return [inner.b.op("less", i, count(inner, limit))]

        def body(inner: ProgramBuilder, i: Value, v: Value) -> list[Value]:
            return [inner.b.op("add", i, count(inner, 1)), inner.pick(lambda w: w.type == v.type)]

        types = [tensor_type("i32", ()), x.type]
        _, out = self.b.op("While", count(self, 0), x,
                           regions=[self.region(types, cond), self.region(types, body)])
        self.add(out)

    def region(self, types: list, finish: Callable[..., list[Value]]) -> Graph:
        """A region over ``types`` with a few drawn nodes (dead ones too); its outputs are
        what ``finish(inner, *inputs)`` returns."""
        rb = GraphBuilder("region")
        inputs = [rb.input(t) for t in types]
        inner = ProgramBuilder(self.draw, rb, self.dt, self.depth + 1)
        inner.pool.extend(v for v in inputs if _is_ours(v, self.dt))
        inner.steps(self.draw(st.integers(0, 4)))
        return rb.build(finish(inner, *inputs))

    # -- driver -------------------------------------------------------------------------------

    def steps(self, count: int) -> None:
        actions = [self.unary, self.binary, self.constant, self.identity, self.reshape,
                   self.transpose, self.duplicate]
        if self.kind == "f":
            actions.append(self.random)
        if self.state is not None:
            actions += [self.load, self.store]
        if self.depth == 0:
            actions += [self.if_, self.while_]
        for _ in range(count):
            action = self.draw(st.sampled_from(actions))
            try:
                action()
            except NoCandidate:  # nothing in the pool fits this action
                continue


def _is_ours(v: Value, dt: str) -> bool:
    return isinstance(v.type, TensorType) and v.type.dtype is to_dtype(dt)


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        broadcast_shapes(a, b)
    except InferError:
        return False
    return True


def _shapes_of_size(n: int) -> list[tuple[int, ...]]:
    pairs = [(d, n // d) for d in range(1, n + 1) if n % d == 0]
    return [(n,), *pairs, (1, n, 1)]


@st.composite
def graphs(draw):
    dt = draw(st.sampled_from(DTYPES))
    b = GraphBuilder("random")
    state = None
    if draw(st.booleans()):
        shape = draw(st.sampled_from(SHAPES[:3]))
        state = Effects(b.input(RefType(tensor_type(dt, shape)), "ref"), b.input(TOKEN, "token"))
    program = ProgramBuilder(draw, b, dt, 0, state)
    for shape in draw(st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3)):
        program.add(b.input(tensor_type(dt, shape)))
    if state is not None:
        program.load()
    program.steps(draw(st.integers(1, 12)))
    chosen = draw(st.lists(st.integers(0, len(program.pool) - 1), min_size=1, max_size=3))
    outputs = [program.pool[i] for i in chosen]
    if state is not None:
        outputs.append(state.token)
    return b.build(outputs)


GENERIC_PASSES = ("simplify", "fold", "cse", "dce")
PIPELINES = ("O0", "O1", "O2", "O3")


@SETTINGS
@given(graph=graphs())
def test_generic_passes_keep_results_and_are_idempotent(checker, graph):
    note(str(graph))
    verify(graph, checker.registry)
    passes = host().passes
    for name in GENERIC_PASSES:
        pass_ = passes.get(name)
        result = checker.apply(pass_, graph)
        again = pass_.run(result.graph, checker.context)
        assert again.graph is result.graph and not again.changed, f"{name} is not idempotent"


@SETTINGS
@given(graph=graphs())
def test_pipelines_keep_results_and_reach_a_fixpoint(checker, graph):
    note(str(graph))
    for level in range(4):
        context = PassContext(checker.registry, opt_level=level)
        result = checker.apply(PassManager.from_pipeline(f"O{level}"), graph, context=context)
        report = result.report
        if level == 0:
            assert result.graph is graph
        if level >= 2:
            sweep = len(PassManager.from_pipeline(f"O{level}").passes)
            assert report.converged and len(report.records) == sweep * report.sweeps, report
        assert report.records == [] or report.records[-1].nodes_after <= count_nodes(graph)


@pytest.mark.parametrize("op", ["If", "While", "ref_store", "random_uniform", "transpose",
                                "reshape", "squeeze", "full", "constant", "neg"])
def test_the_generator_makes_the_code_the_passes_target(op):
    """Guard against a generator that silently stops producing what the passes work on."""
    graph = find(graphs(), lambda g: op in g.ops_used(),
                 settings=settings(max_examples=500, database=None, phases=[Phase.generate]))
    verify(graph)
