"""Effectful ops applied through the frontend: the trace threads its state token through them
in program order (no pass drops or reorders them), eager mode runs them at once in order, and
a plugin's host kernel runs them beside the backend with the token passed through."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel as ms
from mskernel.errors import InferError, MskernelError
from mskernel.frontend.dispatch import apply
from mskernel.hooks import hookimpl
from mskernel.ir import TOKEN, TokenType
from mskernel.ops import Attr, OpDef
from mskernel.runtime import HOST_KERNEL_RULE, TOKEN_VALUE, HostKernel
from mskernel_sdk import register_plugin

LOG: list[tuple[str, int]] = []


def _infer(x, token, *, tag):
    if not isinstance(token, TokenType):
        raise InferError("needs the state token last")
    return x, TOKEN


def _record(who):
    def fn(x, token, *, tag):
        assert token is TOKEN_VALUE
        LOG.append((who, tag))
        return x * 2, TOKEN_VALUE
    return fn


class effect_plugin:
    @hookimpl
    def mskernel_register_ops(registry):
        registry.define(OpDef("fx.log", ("x", "token"), _infer, _record("reference"),
                              attrs=(Attr("tag", "int"),), effectful=True))

    @hookimpl
    def mskernel_register_rules(rules):
        rules.register(HOST_KERNEL_RULE, "fx.log", HostKernel(_record("host")))


@pytest.fixture(scope="module", autouse=True)
def plugin():
    register_plugin(effect_plugin, "fx")


@pytest.fixture(autouse=True)
def clear():
    LOG.clear()


def test_eager_effects_run_at_once_in_order():
    x = ms.Tensor(np.arange(3, dtype=np.float32))
    y = apply("fx.log", x, tag=1)
    apply("fx.log", x, tag=2)  # result unused: it ran anyway
    np.testing.assert_array_equal(y.numpy(), 2 * np.arange(3))
    who = "host" if ms.get_device() != "reference" else "reference"
    assert LOG == [(who, 1), (who, 2)]


@pytest.mark.parametrize("opt_level", [0, 3])
def test_traced_effects_are_chained_by_the_token(opt_level):
    @ms.jit(opt_level=opt_level)
    def f(x):
        a = apply("fx.log", x, tag=1)
        apply("fx.log", x, tag=2)      # unused
        b = apply("fx.log", x, tag=2)  # identical to the previous one
        return a + b

    x = np.ones(2, np.float32)
    np.testing.assert_array_equal(f(x).numpy(), [4, 4])
    assert [tag for _, tag in LOG] == [1, 2, 2]
    graph = f.lower(x).optimized_graph
    nodes = [n for n in graph.nodes if n.op == "fx.log"]
    assert [n.attrs["tag"] for n in nodes] == [1, 2, 2]
    assert graph.inputs[-1].type == TOKEN and graph.outputs[-1].type == TOKEN
    assert nodes[0].inputs[-1] is graph.inputs[-1]
    for earlier, later in zip(nodes, nodes[1:]):
        assert later.inputs[-1] is earlier.outputs[-1]
    assert graph.outputs[-1] is nodes[-1].outputs[-1]


def test_an_effect_inside_a_branch_is_refused():
    @ms.jit
    def f(x):
        if x.sum() > 0:
            x = apply("fx.log", x, tag=1)
        return x

    where = r"'fx\.log' at .*test_effects\.py:\d+ has side effects"
    with pytest.raises(MskernelError, match=where):
        f(np.ones(2, np.float32))
