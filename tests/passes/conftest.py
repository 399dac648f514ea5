"""Fixtures of the pass tests: the op registry, a pass context, and a checker that runs a
pass and asserts it kept the graph valid and its results unchanged."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pytest

from mskernel.ir.builder import GraphBuilder
from mskernel.ir.graph import Graph, Value
from mskernel.ir.types import RefType, TensorType, TokenType, Type
from mskernel.ir.verify import verify
from mskernel.ops import op_registry
from mskernel.passes import Pass, PassContext, PassResult
from mskernel.runtime.interpreter import run_graph
from mskernel.runtime.state import TOKEN_VALUE, RefCell
from mskernel.testing import random_array


class PassChecker:
    """Runs passes and compares a graph's results before and after on random inputs.

    Results must be equal element by element (``np.testing.assert_array_equal``: NaN equals
    NaN; ``-0.0`` equals ``0.0``, the one difference ``x + 0 → x`` may make), with the same
    dtype and shape; refs passed to the graph must hold equal values afterwards.
    """

    def __init__(self, registry: Any) -> None:
        self.registry = registry
        self.context = PassContext(registry=registry)

    def apply(self, pass_: Pass, graph: Graph, *, seeds: Sequence[int] = (0, 1),
              context: PassContext | None = None) -> PassResult:
        result = pass_.run(graph, context or self.context)
        verify(result.graph, self.registry)
        assert result.changed == (result.graph is not graph), "changed must say if it did"
        for seed in seeds:
            self.assert_same_results(graph, result.graph, seed)
        return result

    def assert_same_results(self, before: Graph, after: Graph, seed: int = 0) -> None:
        assert after.input_types == before.input_types
        assert after.output_types == before.output_types
        args_before = self.arguments(before, seed)
        args_after = self.arguments(after, seed)
        expected = run_graph(before, args_before, self.registry)
        actual = run_graph(after, args_after, self.registry)
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_same_value(a, e, f"output {i}")
        for i, (e, a) in enumerate(zip(args_before, args_after)):
            if isinstance(e, RefCell):
                assert_same_value(a.value, e.value, f"ref input {i} after the run")

    def arguments(self, graph: Graph, seed: int) -> list[Any]:
        """Random arguments for ``graph``; the same seed gives equal (fresh) arguments."""
        rng = np.random.default_rng(seed)
        args: list[Any] = []
        for v in graph.inputs:
            if isinstance(v.type, TokenType):
                args.append(TOKEN_VALUE)
            elif isinstance(v.type, RefType):
                args.append(RefCell(v.type.value, self._array(rng, v.type.value)))
            else:
                args.append(self._array(rng, v.type))
        return args

    @staticmethod
    def _array(rng: np.random.Generator, t: TensorType) -> np.ndarray:
        return random_array(rng, t.shape, t.dtype, -3, 3)


def assert_same_value(actual: Any, expected: Any, what: str) -> None:
    if expected is TOKEN_VALUE:
        assert actual is TOKEN_VALUE, what
        return
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, what
    np.testing.assert_array_equal(actual, expected, err_msg=what)


def build_region(make: Callable[..., Sequence[Value]], *types: Type,
                 name: str = "region") -> Graph:
    """A region taking ``types``; ``make(builder, *inputs)`` adds its nodes and returns its
    outputs."""
    b = GraphBuilder(name)
    inputs = [b.input(t) for t in types]
    return b.build(list(make(b, *inputs)))


@pytest.fixture(scope="session")
def region():
    return build_region


@pytest.fixture(scope="session")
def ops():
    return op_registry()


@pytest.fixture(scope="session")
def context(ops) -> PassContext:
    return PassContext(registry=ops)


@pytest.fixture(scope="session")
def checker(ops) -> PassChecker:
    return PassChecker(ops)
