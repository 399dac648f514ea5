"""Sharding as data: strategies recorded on the traced graph, per-op rules, propagation and
redistribution.  Every check runs each rank's graph in one process (``simulate``: the
reference semantics of every op, collectives exchanged between the ranks' threads) and
compares what the ranks computed with the whole function run alone; the real runs on 2 and
4 ranks are in ``test_operator_parallel.py``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from mskernel_sdk import TOKEN_VALUE, GraphBuilder, run_reference, tensor_type, trace_function

import mskernel
from mskernel import nn
from mskernel.parallel import Layout, Mesh, TensorLayout, simulate
from mskernel_parallel.errors import ShardingError
from mskernel_parallel.ops import TOKEN
from mskernel_parallel.sharding import redistribute
from mskernel_parallel.sharding.layout import assemble
from mskernel_parallel.sharding.partition import partition, shard_inputs
from mskernel_parallel.sharding.program import ShardedProgram
from mskernel_parallel.sharding.propagate import propagate

TOL = {"rtol": 2e-5, "atol": 2e-5}


def run_sharded(fn, args, mesh=None):
    """Every rank's result of ``fn`` sharded (simulated), the whole result, and rank 0's
    program."""
    program = ShardedProgram(fn, *args, mesh=mesh, rank=0)
    parts = [program.for_rank(r) for r in range(program.mesh.size)]
    whole_args = [np.asarray(a) for a in args] + [p.numpy() for p in program.parameters]
    ranks = simulate([p.graph for p in parts],
                     [shard_inputs(p, whole_args) + [TOKEN_VALUE] for p in parts], program.mesh)
    want = run_reference(program.whole, whole_args)
    return [r[:-1] for r in ranks], want, program


def check(fn, *args, mesh=None, collectives=None):
    ranks, want, program = run_sharded(fn, args, mesh)
    for got in ranks:
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, **TOL)
    if collectives is not None:
        ops = sorted(n.op.split(".")[1] for n in program.graph.nodes if n.op.startswith("parallel."))
        assert ops == sorted(collectives), ops
    return program


# -- layouts ------------------------------------------------------------------------------------

def test_layout_is_mindspores_device_matrix():
    layout = Layout((2, 4), ("dp", "mp"))
    t = layout("dp", ("mp",))
    assert t.dims == (("dp",), ("mp",)) and layout("None", "mp").dims == ((), ("mp",))
    assert layout.mesh.coords(5) == {"dp": 1, "mp": 1}      # the last axis varies fastest
    assert layout.mesh.group(5, "mp") == [4, 5, 6, 7] and layout.mesh.group(5, "dp") == [1, 5]
    x = np.arange(64.0).reshape(8, 8)
    assert np.array_equal(assemble([t.shard(x, r) for r in range(8)], t, x.shape), x)
    with pytest.raises(ShardingError, match="more than one dimension"):
        layout("dp", "dp")
    with pytest.raises(ShardingError, match="not divisible"):
        t.local_shape((6, 6))


# -- redistribution: any pair of layouts gives the same values ----------------------------------

@st.composite
def layout_pairs(draw):
    sizes = draw(st.lists(st.sampled_from([1, 2, 3]), min_size=1, max_size=3).filter(
        lambda s: np.prod(s) <= 8))
    mesh = Mesh(tuple(sizes), tuple(f"a{i}" for i in range(len(sizes))))
    rank = draw(st.integers(1, 3))

    def layout(partial_ok):
        dims = [[] for _ in range(rank)]
        partial = []
        for axis in draw(st.permutations(mesh.names)):
            where = draw(st.integers(-2 if partial_ok else -1, rank - 1))
            if where >= 0:
                dims[where].append(axis)
            elif where == -2:
                partial.append(axis)
        reduction = draw(st.sampled_from(["sum", "max", "mean"]))
        return TensorLayout(mesh, tuple(map(tuple, dims)), tuple((a, reduction) for a in partial))

    src, dst = layout(True), layout(False)
    shape = tuple(int(np.lcm(s, d)) * draw(st.integers(1, 2))
                  for s, d in zip(src.splits(), dst.splits()))
    return mesh, src, dst, shape


@settings(max_examples=60, deadline=None)
@given(layout_pairs())
def test_redistribution_of_any_pair_keeps_the_values(case):
    mesh, src, dst, shape = case
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    graphs = []
    for rank in range(mesh.size):
        b = GraphBuilder("move")
        local = b.input(tensor_type("f32", src.local_shape(shape)))
        emit = redistribute.Emitter(b, b.input(TOKEN), mesh, rank)
        graphs.append(b.build([emit(local, src, dst), emit.token]))
    args = [[src.shard(x, r), TOKEN_VALUE] for r in range(mesh.size)]
    out = simulate(graphs, args, mesh)
    np.testing.assert_allclose(assemble([o[0] for o in out], dst, shape), x, rtol=1e-6,
                               atol=1e-6)


def test_redistribution_picks_the_cheap_collectives():
    layout = Layout((2, 2), ("dp", "mp"))
    plan = redistribute.plan
    kinds = lambda src, dst: [s.kind for s in plan(src, dst)]
    partial = TensorLayout(layout.mesh, ((), ()), (("mp", "sum"),))
    assert kinds(partial, layout("None", "None")) == ["all_reduce"]
    assert kinds(partial, layout("mp", "None")) == ["reduce_scatter"]
    assert kinds(layout("mp", "None"), layout("None", "mp")) == ["all_to_all"]
    assert kinds(layout("dp", "mp"), layout("dp", "None")) == ["all_gather"]
    assert kinds(layout("None", "None"), layout("dp", "mp")) == ["slice", "slice"]
    assert kinds(layout(("dp", "mp"), "None"), layout("dp", "None")) == ["all_gather"]


# -- the rules of each op family ----------------------------------------------------------------

L = Layout((2, 2), ("dp", "mp"))
R = np.random.default_rng(7)


def arr(*shape):
    return R.standard_normal(shape).astype(np.float32)


def sh(fn, *strategies):
    return mskernel.shard(fn, list(strategies))


def test_matmul_column_then_row_parallel_needs_one_all_reduce():
    def mlp(x, w1, w2):
        h = sh(lambda a, b: a @ b, L("dp", "None"), L("None", "mp"))(x, w1)
        return sh(lambda a, b: a @ b, L("dp", "mp"), L("mp", "None"))(mskernel.ops.relu(h), w2)
    check(mlp, arr(4, 6), arr(6, 8), arr(8, 6), collectives=["all_gather", "all_reduce"])


def test_batch_matmul_and_broadcast_batch():
    check(lambda a, b: sh(lambda a, b: a @ b, L("dp", "None", "mp"), L("dp", "mp", "None"))(a, b),
          arr(2, 3, 4), arr(2, 4, 5))
    check(lambda a, b: sh(lambda a, b: a @ b, L("None", "dp", "None"), L("None", "mp"))(a, b),
          arr(3, 4, 6), arr(6, 4))


def test_dense_cell_shard_propagates_to_its_weight():
    dense = nn.Dense(6, 8)
    dense.shard(in_strategy=(L("dp", "None"),), out_strategy=(L("dp", "mp"),))
    program = check(lambda x: dense(x).sum(), arr(4, 6))
    weight = program.parameters.index(dense.weight)
    assert program.input_layouts[1 + weight].dims == (("mp",), ())  # stored split


def test_tuple_strategies_map_letters_onto_the_mesh():
    program = check(lambda x, w: mskernel.shard(lambda a, b: a @ b, ((2, 1), (1, 4)))(x, w),
                    arr(4, 6), arr(6, 8), mesh=Mesh((2, 2, 2), ("d0", "d1", "d2")))
    assert program.input_layouts[0].dims == (("d0",), ())
    assert program.input_layouts[1].dims == ((), ("d1", "d2"))
    with pytest.raises(ShardingError, match="no free axes"):
        ShardedProgram(lambda x, w: mskernel.shard(lambda a, b: a @ b, ((3, 1), (1, 1)))(x, w),
                       arr(6, 6), arr(6, 8), mesh=Mesh((2, 2, 2), ("d0", "d1", "d2")), rank=0)


def test_conv_splits_batch_and_output_channels():
    from mskernel_sdk import apply
    check(lambda x, w: apply("conv", *sh(lambda a, b: (a, b), L("dp", "None", "None", "None"),
                                         L("mp", "None", "None", "None"))(x, w)),
          arr(4, 3, 6, 6), arr(4, 3, 3, 3))
    check(lambda x, w: apply("conv", *sh(lambda a, b: (a, b), L("None", "mp", "None", "None"),
                                         L("None", "mp", "None", "None"))(x, w)),
          arr(2, 4, 5, 5), arr(3, 4, 3, 3), collectives=["all_reduce"])


@pytest.mark.parametrize("op", ["add", "mul", "sub", "maximum", "where"])
def test_elementwise_and_broadcast(op):
    from mskernel_sdk import apply
    if op == "where":
        fn = lambda x, y: apply("where", apply("greater", x, y), x, y)
    else:
        fn = lambda x, y: apply(op, x, y)
    check(lambda x, y: fn(sh(lambda a: a, L("dp", "mp"))(x), y), arr(4, 6), arr(6))
    check(lambda x, y: fn(sh(lambda a: a, L("dp", "mp"))(x), y), arr(4, 6), arr(4, 1))


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "prod", "logsumexp", "var"])
@pytest.mark.parametrize("axes", [(1,), (0, 1), None])
def test_reductions_combine_partial_results(op, axes):
    from mskernel_sdk import apply
    check(lambda x: apply(op, sh(lambda a: a, L("dp", "mp"))(x), axes=axes),
          arr(4, 6) * 0.5 + 1)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_keeps_its_axis_whole(op):
    from mskernel_sdk import apply
    check(lambda x: apply(op, sh(lambda a: a, L("dp", "mp"))(x), axis=-1), arr(4, 6))
    check(lambda x: apply(op, sh(lambda a: a, L("dp", "mp"))(x), axis=0), arr(4, 6))


def test_layer_norm_embedding_gather():
    from mskernel_sdk import apply
    check(lambda x, s, b: apply("layer_norm", sh(lambda a: a, L("dp", "mp", "None"))(x), s, b,
                                axis=-1)[0], arr(2, 4, 6), arr(6), arr(6))
    ids = np.array([[1, 0, 3, 2], [4, 4, 0, 1]], np.int32)
    check(lambda t, i: apply("embedding", sh(lambda a: a, L("None", "mp"))(t),
                             sh(lambda a: a, L("dp", "None"))(i)), arr(5, 6), ids)
    check(lambda x, i: apply("gather", sh(lambda a: a, L("dp", "mp"))(x), i, axis=1),
          arr(4, 6), np.array([5, 0, 2], np.int32))


def test_reshape_and_transpose_move_the_split():
    from mskernel_sdk import apply
    check(lambda x: apply("reshape", sh(lambda a: a, L("dp", "None", "mp"))(x), shape=(8, 6)),
          arr(4, 2, 6))
    check(lambda x: apply("reshape", sh(lambda a: a, L("dp", "mp"))(x), shape=(2, 2, 3, 2)),
          arr(4, 6))
    check(lambda x: apply("transpose", sh(lambda a: a, L("dp", "mp", "None"))(x),
                          perm=(2, 0, 1)) * 2, arr(2, 4, 3))


def test_a_strategy_that_does_not_fit_is_a_clear_error():
    with pytest.raises(Exception, match="not divisible|does not fit"):
        ShardedProgram(lambda x: sh(lambda a: a, L("dp", "mp"))(x) * 2, arr(3, 4), rank=0)


def test_propagation_reaches_ops_without_strategies():
    def fn(x, w):
        h = sh(lambda a, b: a @ b, L("dp", "None"), L("None", "mp"))(x, w)
        return mskernel.ops.tanh(h * 2 + 1).sum(axis=1)
    program = ShardedProgram(fn, arr(4, 6), arr(6, 8), rank=0)
    strategies = program.propagation.strategies
    placed = [s.assignment for i, s in strategies.items()
              if program.whole.nodes[i].op in ("mul", "add", "tanh")]
    assert placed and all(a == {"d0": ("dp",), "d1": ("mp",)} for a in placed)
    check(fn, arr(4, 6), arr(6, 8))


def test_a_plugin_op_gets_split_by_the_rule_it_registers():
    """An op of another plugin with a ``"sharding"`` rule is split like a core op; the same op
    without a rule would run replicated (its operands gathered first)."""
    from types import SimpleNamespace

    from mskernel_sdk import Attr, OpDef, apply, hookimpl, register_plugin

    from mskernel.parallel import OpSharding

    def rule(types, attrs):
        letters = tuple(f"d{i}" for i in range(types[0].rank))
        return OpSharding((letters,), (letters,))

    plugin = SimpleNamespace(
        mskernel_register_ops=hookimpl(lambda registry: registry.define(OpDef(
            "acme.triple", ("x",), lambda x, **_: x, lambda x, **_: x * 3,
            attrs=(Attr("unused", "int", 0),)))),
        mskernel_register_rules=hookimpl(lambda rules: rules.register("sharding", "acme.triple",
                                                                       rule)))
    register_plugin(plugin, "acme-triple")
    program = check(lambda x: apply("acme.triple", sh(lambda a: a, L("dp", "mp"))(x)) + 1,
                    arr(4, 6), collectives=["all_gather", "all_gather"])
    triple = next(i for i, n in enumerate(program.whole.nodes) if n.op == "acme.triple")
    assert program.propagation.strategies[triple].assignment == {"d0": ("dp",), "d1": ("mp",)}


def test_a_ranks_program_runs_eagerly_under_jit_and_grad():
    one = Layout((1,), ("x",))
    w = mskernel.Parameter(mskernel.Tensor(arr(3, 2)), "w")

    def fn(a):
        matmul = mskernel.shard(mskernel.ops.matmul, (one("x", "None"), one("None", "None")))
        return mskernel.ops.tanh(matmul(a, w)).sum()

    x = arr(4, 3)
    program = ShardedProgram(fn, x, mesh=one.mesh, rank=0)
    local = [mskernel.Tensor(a) for a in program.local_arguments(x)]
    eager = program(*local).numpy()
    np.testing.assert_allclose(mskernel.jit(lambda *a: program(*a))(*local).numpy(), eager,
                               rtol=1e-6)
    np.testing.assert_allclose(eager, fn(mskernel.Tensor(x)).numpy(), rtol=1e-6)
    grad = mskernel.grad(lambda *a: program(*a), grad_position=1)(*local)
    want = mskernel.grad(lambda v: mskernel.ops.tanh(mskernel.ops.matmul(mskernel.Tensor(x), v))
                         .sum())(mskernel.Tensor(w.numpy()))
    np.testing.assert_allclose(grad.numpy(), want.numpy(), rtol=1e-5)
