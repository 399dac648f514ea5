"""The cpu pass pipeline: elementwise fusion (generated C++ and the interpreter), what it
makes of a folded batch norm, reshapes as views and constants held by the plan.  Fused results
are checked against the unfused plan and the reference interpreter."""

from __future__ import annotations

import re

import numpy as np
import pytest

from mskernel.hooks.host import host
from mskernel_sdk import (
    CompileOptions, GraphBuilder, assert_close, compile_graph, op_registry, random_array,
    run_reference, tensor_type, verify,
)

from mskernel_cpu import fusion_codegen
from mskernel_cpu.fusion import FUSED_OP, MAX_REGISTERS
from mskernel_cpu.passes import fusable_ops

requires_compiler = pytest.mark.skipif(fusion_codegen.compiler() is None,
                                       reason="no C++ compiler for generated code")


@pytest.fixture(params=["jit", "interpreter"])
def engine(request, monkeypatch):
    if request.param == "jit":
        if fusion_codegen.compiler() is None:
            pytest.skip("no C++ compiler for generated code")
        monkeypatch.setenv(fusion_codegen.JIT_ENV, "1")
    else:
        monkeypatch.setenv(fusion_codegen.JIT_ENV, "0")
    return request.param


def compile_at(graph, opt_level):
    (executable,) = compile_graph(
        graph, backends=["cpu"],
        options=CompileOptions(opt_level=opt_level, fallback="deny", debug=True)).executables
    return executable


def fused_nodes(executable):
    return [n for n in executable.optimized_graph.nodes if n.op == FUSED_OP]


def run(executable, cpu, graph, arrays):
    args = [cpu.to_device(a, v.type) for v, a in zip(graph.inputs, arrays)]
    return [out.to_host() for out in executable.run(args)]


def check_against_unfused(cpu, graph, arrays, *, fused_count=None):
    """Run ``graph`` fused (opt level 2) and unfused (0); compare both to the reference.
    ``fused_count``: the fused nodes expected (``None``: at least one)."""
    fused, unfused = compile_at(graph, 2), compile_at(graph, 0)
    count = len(fused_nodes(fused))
    assert count >= 1 if fused_count is None else count == fused_count
    assert not fused_nodes(unfused)
    with np.errstate(all="ignore"):
        expected = run_reference(graph, arrays)
    got_fused = run(fused, cpu, graph, arrays)
    got_unfused = run(unfused, cpu, graph, arrays)
    for value, a, b, want in zip(graph.outputs, got_fused, got_unfused, expected):
        assert a.dtype == want.dtype and a.shape == want.shape
        assert_close(a, b, value.type.dtype, what="fused vs unfused")
        assert_close(a, want, value.type.dtype, what="fused vs reference")
    return fused


# -- the pipeline ---------------------------------------------------------------------------


def test_the_plugin_registers_its_passes_and_pipelines():
    host().load_external()
    passes = host().passes
    for level in range(4):
        assert f"cpu.O{level}" in passes.pipelines
    assert passes.pipelines["cpu.O0"].passes == ()
    assert passes.pipelines["cpu.O2"].passes == (
        "cpu.fuse_gemm_epilogue", "cpu.fold_matmul_transpose", "cpu.fuse_elementwise")
    assert op_registry().get(FUSED_OP).num_regions == 1


def chain_graph(shape=(4, 8), dtype="f32"):
    b = GraphBuilder("chain")
    x = b.input(tensor_type(dtype, shape), "x")
    w = b.input(tensor_type(dtype, shape[-1:]), "w")
    h = b.op("tanh", b.op("add", b.op("mul", x, w), w))
    return b.build([b.op("add", b.op("mul", h, x), x)])


def test_opt_level_0_runs_no_cpu_pass(cpu):
    graph = chain_graph()
    executable = compile_at(graph, 0)
    assert executable.optimized_graph is graph
    assert executable.plan.num_steps == 5


def test_a_chain_becomes_one_step_and_explain_shows_its_region(cpu):
    graph = chain_graph()
    executable = check_against_unfused(cpu, graph, [random_array(np.random.default_rng(0), s, "f32")
                                                    for s in ((4, 8), (8,))], fused_count=1)
    assert executable.plan.num_steps == 1
    text = executable.explain()
    assert FUSED_OP in text and "tanh(" in text and "cpu.fuse_elementwise" in text
    verify(executable.optimized_graph, op_registry())


def test_values_read_outside_the_group_stay_materialised(cpu):
    b = GraphBuilder("shared")
    x = b.input(tensor_type("f32", (3, 5)), "x")
    e = b.op("exp", b.op("neg", x))              # read by two groups: materialised
    s = b.op("sum", e, axes=(1,), keepdims=True)  # not elementwise: a boundary
    y = b.op("mul", b.op("sqrt", e), x)
    z = b.op("div", b.op("add", e, s), s)
    graph = b.build([y, z, e])
    executable = check_against_unfused(cpu, graph, [random_array(np.random.default_rng(1),
                                                                 (3, 5), "f32")], fused_count=3)
    fused_outputs = {n.output for n in fused_nodes(executable)}
    assert set(graph.outputs) == fused_outputs  # e, y, z are each computed by one fused node


def test_producers_of_a_smaller_shape_are_not_recomputed(cpu):
    b = GraphBuilder("small")
    x = b.input(tensor_type("f32", (6, 7)), "x")
    v = b.input(tensor_type("f32", (7,)), "v")
    small = b.op("exp", b.op("neg", v))  # (7,): fused on its own, broadcast into the big group
    graph = b.build([b.op("add", b.op("mul", x, small), x)])
    rng = np.random.default_rng(2)
    executable = check_against_unfused(cpu, graph, [random_array(rng, (6, 7), "f32"),
                                                    random_array(rng, (7,), "f32")], fused_count=2)
    shapes = sorted(n.output.type.shape for n in fused_nodes(executable))
    assert shapes == [(6, 7), (7,)]


def test_groups_are_capped_by_the_registers(cpu):
    b = GraphBuilder("long")
    x = b.input(tensor_type("f32", (2, 3)), "x")
    v = x
    for i in range(MAX_REGISTERS + 5):
        v = b.op("add", v, b.input(tensor_type("f32", (3,)), f"c{i}"))
    graph = b.build([v])
    rng = np.random.default_rng(3)
    arrays = [random_array(rng, v.type.shape, "f32") for v in graph.inputs]
    executable = check_against_unfused(cpu, graph, arrays, fused_count=3)
    for node in fused_nodes(executable):
        assert len(node.inputs) + len(node.regions[0].nodes) <= MAX_REGISTERS


def test_every_fusable_op_names_a_functor_the_header_declares():
    header = (fusion_codegen.include_dir() / "mskernel_cpu" / "functors.hpp").read_text()
    declared = set(re.findall(r"^struct (\w+)", header, re.M))
    declared |= set(re.findall(r"MSKERNEL_CPU_FUNCTOR\((\w+),", header))
    special = {"gelu", "clip"}  # functors chosen by attribute
    missing = {op: fusion_codegen.functor_name(op) for op in fusable_ops()
               if op not in special and fusion_codegen.functor_name(op) not in declared}
    assert not missing


# -- random elementwise graphs: generated code and interpreter -------------------------------

FLOAT_UNARY = ("neg", "abs", "tanh", "sigmoid", "exp", "sin", "relu", "gelu", "square")
FLOAT_BINARY = ("add", "sub", "mul", "maximum", "minimum")
INT_UNARY = ("neg", "abs", "square", "bitwise_not")
INT_BINARY = ("add", "sub", "mul", "maximum", "minimum", "bitwise_and")
SHAPES = ((4, 5, 6), (5, 6), (6,), (), (4, 1, 6), (5, 1), (1, 1, 1))


def random_graph(rng, dtype, ops_count=6):
    is_int = dtype.startswith("i")
    unary, binary = (INT_UNARY, INT_BINARY) if is_int else (FLOAT_UNARY, FLOAT_BINARY)
    b = GraphBuilder(f"random_{dtype}")
    x = b.input(tensor_type(dtype, (4, 5, 6)), "x")
    values = [x]
    for k in range(ops_count):
        v = values[-1]
        choice = rng.integers(4)
        if choice == 0:
            v = b.op(str(rng.choice(unary)), v)
        elif choice == 1:
            shape = SHAPES[rng.integers(len(SHAPES))]
            v = b.op(str(rng.choice(binary)), v, b.input(tensor_type(dtype, shape), f"p{k}"))
        elif choice == 2:
            other = values[rng.integers(len(values))]
            cond = b.op("greater", v, other)
            v = b.op("where", cond, v, other)
        else:
            wide = "i64" if is_int else "f64"
            v = b.op("cast", b.op("add", b.op("cast", v, dtype=wide),
                                  b.op("cast", values[0], dtype=wide)), dtype=dtype)
        if not is_int:
            v = b.op("clip", v, min=-3.0, max=3.0)
        values.append(v)
    return b.build([values[-1]])


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16", "i32"])
def test_random_graphs_agree_fused_unfused_and_reference(cpu, engine, dtype):
    rng = np.random.default_rng(sum(dtype.encode()))
    graph = random_graph(rng, dtype)
    arrays = [random_array(rng, v.type.shape, dtype) for v in graph.inputs]
    executable = check_against_unfused(cpu, graph, arrays)
    expected = "generated C++" if engine == "jit" else "interpreter"
    assert expected in executable.describe()


@pytest.mark.parametrize("dtype", ["f32", "bf16", "i16"])
def test_large_outputs_run_on_several_threads(cpu, engine, dtype):
    b = GraphBuilder("large")
    x = b.input(tensor_type(dtype, (300, 1000)), "x")
    w = b.input(tensor_type(dtype, (1000,)), "w")
    c = b.input(tensor_type(dtype, (300, 1)), "c")
    v = b.op("maximum", b.op("add", b.op("mul", x, w), c), x)
    graph = b.build([b.op("sub", v, w)])
    rng = np.random.default_rng(4)
    check_against_unfused(cpu, graph, [random_array(rng, v.type.shape, dtype)
                                       for v in graph.inputs], fused_count=1)


@pytest.mark.parametrize("shape", [(0, 5), (), (1, 1), (3, 0, 2)])
def test_empty_scalar_and_unit_shapes(cpu, engine, shape):
    graph = chain_graph(shape=shape)
    rng = np.random.default_rng(10)
    check_against_unfused(cpu, graph, [random_array(rng, v.type.shape, "f32")
                                       for v in graph.inputs], fused_count=1)


def test_integer_division_by_zero_raises_from_fused_code(cpu, engine):
    b = GraphBuilder("divide")
    x = b.input(tensor_type("i32", (8,)), "x")
    y = b.input(tensor_type("i32", (8,)), "y")
    graph = b.build([b.op("add", b.op("floor_divide", x, y), x)])
    executable = compile_at(graph, 2)
    assert len(fused_nodes(executable)) == 1
    arrays = [np.arange(8, dtype=np.int32), np.array([1, 2, 3, 0, 1, 1, 1, 1], np.int32)]
    with pytest.raises(ZeroDivisionError, match="integer division by zero"):
        run(executable, cpu, graph, arrays)


@requires_compiler
def test_generated_code_is_cached_on_disk(cpu, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv(fusion_codegen.JIT_ENV, "1")
    graph = chain_graph(shape=(3, 7), dtype="f64")
    before = dict(fusion_codegen.JIT_STATS)
    compile_at(graph, 2)
    assert fusion_codegen.JIT_STATS["compiled"] == before["compiled"] + 1
    executable = compile_at(graph, 2)
    assert fusion_codegen.JIT_STATS["compiled"] == before["compiled"] + 1
    assert fusion_codegen.JIT_STATS["cached"] == before["cached"] + 1
    cached = list((tmp_path / "mskernel" / "cpu-jit").iterdir())
    assert len(cached) == 1 and cached[0].suffix == ".so"  # no temporary file left behind
    rng = np.random.default_rng(5)
    arrays = [random_array(rng, v.type.shape, "f64") for v in graph.inputs]
    assert_close(run(executable, cpu, graph, arrays)[0], run_reference(graph, arrays)[0],
                 graph.outputs[0].type.dtype)


def test_a_broken_compiler_falls_back_to_the_interpreter(cpu, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv(fusion_codegen.JIT_ENV, "1")
    monkeypatch.setenv(fusion_codegen.CXX_ENV, "false")  # exits 1: every compilation fails
    with pytest.warns(RuntimeWarning, match="using the interpreter"):
        executable = compile_at(chain_graph(), 2)
    assert "interpreter" in executable.describe()


# -- after batch-norm folding ---------------------------------------------------------------


def test_a_folded_frozen_batch_norm_ends_in_the_conv_kernel(cpu):
    """The generic pipeline folds a batch norm with constant parameters into constants; the
    cpu pipeline then fuses its bias add and the relu into the conv."""
    rng = np.random.default_rng(6)
    b = GraphBuilder("conv_bn")
    x = b.input(tensor_type("f32", (2, 3, 6, 6)), "x")
    w = b.input(tensor_type("f32", (4, 3, 3, 3)), "w")
    params = [b.op("constant", value=rng.uniform(0.5, 1.5, 4).astype(np.float32))
              for _ in range(4)]
    out, mean, var = b.op("batch_norm", b.op("conv", x, w, padding=(1, 1, 1, 1)), *params,
                          eps=1e-3)
    graph = b.build([b.op("relu", out), mean, var])
    executable = compile_at(graph, 2)
    ops = {n.op for n in executable.optimized_graph.walk()}
    assert "cpu.conv_bias_act" in ops
    assert not ops & {"batch_norm", "rsqrt", "sub", "conv", "relu"}
    arrays = [random_array(rng, (2, 3, 6, 6), "f32"), random_array(rng, (4, 3, 3, 3), "f32")]
    for got, want in zip(run(executable, cpu, graph, arrays), run_reference(graph, arrays)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# -- views and constants in the plan --------------------------------------------------------


def test_reshapes_share_their_operands_buffer(cpu):
    b = GraphBuilder("views")
    x = b.input(tensor_type("f32", (4, 6)), "x")
    e = b.op("exp", x)
    r = b.op("reshape", e, shape=(2, 12))
    s = b.op("expand_dims", b.op("squeeze", b.op("reshape", r, shape=(1, 24)), axes=(0,)),
             axes=(1,))
    t = b.op("reshape", x, shape=(24, 1))  # a view of a graph input
    graph = b.build([b.op("add", s, t), b.op("reshape", e, shape=(6, 4))])
    arrays = [random_array(np.random.default_rng(8), (4, 6), "f32")]
    expected = run_reference(graph, arrays)
    for level in (0, 1):
        executable = compile_at(graph, level)
        for got, want in zip(run(executable, cpu, graph, arrays), expected):
            np.testing.assert_allclose(got, want, rtol=1e-6)
    plain, viewed = compile_at(graph, 0), compile_at(graph, 1)
    assert viewed.plan.num_steps < plain.plan.num_steps
    assert len(viewed.memory_plan().buffers) < len(plain.memory_plan().buffers)


def test_constants_are_held_by_the_plan(cpu):
    b = GraphBuilder("consts")
    x = b.input(tensor_type("bf16", (3,)), "x")
    c = b.op("constant", value=np.array([1.5, -2.0, 0.25], np.float32), dtype="bf16")
    graph = b.build([b.op("mul", x, c), c])
    executable = compile_at(graph, 0)
    arrays = [np.array([2.0, 3.0, 4.0], np.float32)]
    for got, want in zip(run(executable, cpu, graph, arrays), run_reference(graph, arrays)):
        np.testing.assert_array_equal(got, want)


def test_elementwise_results_overwrite_operands_that_die(cpu):
    b = GraphBuilder("in_place")
    x = b.input(tensor_type("c64", (5, 6)), "x")  # complex: not fused, one kernel per op
    y = b.input(tensor_type("c64", (6,)), "y")
    a = b.op("exp", x)
    c = b.op("mul", b.op("neg", a), y)            # neg over a, mul over the negation
    r = b.op("reshape", b.op("sin", c), shape=(30,))
    graph = b.build([b.op("conj", r), b.op("neg", x)])  # x is never overwritten
    rng = np.random.default_rng(9)
    arrays = [random_array(rng, (5, 6), "c64"), random_array(rng, (6,), "c64")]
    kept = arrays[0].copy()
    plain, in_place = compile_at(graph, 0), compile_at(graph, 1)
    assert len(in_place.memory_plan().buffers) == 1 < len(plain.memory_plan().buffers)
    args = [cpu.to_device(a, v.type) for v, a in zip(graph.inputs, arrays)]
    got = [out.to_host() for out in in_place.run(args)]
    for g, want in zip(got, run_reference(graph, arrays)):
        assert_close(g, want, graph.outputs[0].type.dtype)
    np.testing.assert_array_equal(args[0].to_host(), kept)


def test_views_in_place_and_fusion_inside_a_loop(cpu):
    counter, data = tensor_type("i32", ()), tensor_type("f32", (4, 6))
    cond = GraphBuilder("cond")
    i, _ = cond.input(counter, "i"), cond.input(data, "x")
    cond_graph = cond.build([cond.op("less", i, cond.op("constant", value=np.array(3, np.int32)))])
    body = GraphBuilder("body")
    i, x = body.input(counter, "i"), body.input(data, "x")
    half = body.op("constant", value=np.array(0.5, np.float32))
    e = body.op("exp", body.op("neg", body.op("mul", x, half)))    # fused
    r = body.op("reshape", e, shape=(6, 4))                         # a view of e
    t = body.op("reshape", body.op("sin", r), shape=(4, 6))         # sin over e's buffer
    step = body.op("add", i, body.op("constant", value=np.array(1, np.int32)))
    body_graph = body.build([step, body.op("add", t, x)])
    b = GraphBuilder("loop")
    i0, x0 = b.input(counter, "i"), b.input(data, "x")
    _, out = b.op("While", i0, x0, regions=(cond_graph, body_graph))
    graph = b.build([out])
    arrays = [np.array(0, np.int32), random_array(np.random.default_rng(11), (4, 6), "f32")]
    (want,) = run_reference(graph, arrays)
    for level in (0, 1, 2):
        executable = compile_at(graph, level)
        assert_close(run(executable, cpu, graph, arrays)[0], want, graph.outputs[0].type.dtype)
