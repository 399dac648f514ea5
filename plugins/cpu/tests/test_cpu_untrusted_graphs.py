"""Graphs the cpu backend did not make — read from a file, built by hand — cannot crash it.

A model file may hold the backend's private ops.  ``cpu.fused_elementwise`` whose region
reduces rank used to pass its type rule and then crash the kernel factory (an unsigned
underflow laying out an input) with the C++ JIT off, or raise IndexError with it on.  Now:

- the op's rule checks everything the kernel assumes of the region, so such a file is refused
  by the loader as any malformed file is;
- a hand-built graph that skipped the rule is refused by lowering: the program of a fused
  node is built behind the rule, ``_native.prepare`` runs the op's rule before any kernel
  factory, the fused kernel checks its program (operands broadcast to the output, register
  types, counts), and a plan checks every slot a step touches.

Every case that could crash runs in a child process, so a regression fails the test instead
of killing pytest.  The mutation fuzz (fixed seed, bounded count) requires of each mutant a
clean Python exception or the reference's result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from mskernel_cpu import fusion_codegen

JIT = ["0"] + (["1"] if fusion_codegen.compiler() is not None else [])

#: Builds the rank-reducing fused node by hand (bypassing the rule), then tries every door.
RANK_REDUCING = textwrap.dedent("""
    import json, sys
    from mskernel.ir import tensor_type
    from mskernel.ir.graph import Graph, Node, Value
    from mskernel.ir.fileformat import load_model, save_model
    from mskernel.hooks.host import host
    from mskernel.runtime import CompileOptions, compile_graph
    from mskernel_cpu.lowering import lower

    host().load_external()
    cpu = host().backends.get("cpu")
    x = Value(tensor_type("f32", (2, 3)), "x")
    r = Value(tensor_type("f32", (2, 3)))
    s, n = Value(tensor_type("f32", (3,))), Value(tensor_type("f32", (3,)))
    region = Graph((r,), (Node("sum", (r,), (s,), {"axes": (0,), "keepdims": False}),
                          Node("neg", (s,), (n,))), (n,), "region")
    y = Value(tensor_type("f32", (3,)))
    graph = Graph((x,), (Node("cpu.fused_elementwise", (x,), (y,), {}, (region,)),), (y,), "main")
    outcomes = {}

    def attempt(name, fn):
        try:
            fn()
            outcomes[name] = "ran"
        except Exception as exc:  # the point: a Python exception, whatever its type
            outcomes[name] = f"{type(exc).__name__}: {exc}"
        print(json.dumps(outcomes), flush=True)

    save_model(sys.argv[1], graph)
    attempt("load", lambda: load_model(sys.argv[1]))
    attempt("compile", lambda: compile_graph(graph, backends=["cpu"],
                                             options=CompileOptions(opt_level=0)))
    attempt("lower", lambda: lower(graph, cpu))
""")


def run_child(script: str, *args: str, jit: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                          text=True, timeout=600,
                          env={**os.environ, fusion_codegen.JIT_ENV: jit})


@pytest.mark.parametrize("jit", JIT, ids=lambda j: f"jit={j}")
def test_a_rank_reducing_fused_region_is_refused_at_every_door(tmp_path, jit):
    child = run_child(RANK_REDUCING, str(tmp_path / "model.mskernel"), jit=jit)
    assert child.returncode == 0, f"the child died ({child.returncode}):\n{child.stderr[-3000:]}"
    outcomes = json.loads(child.stdout.splitlines()[-1])
    refusal = "operand 0 has shape [2, 3], which does not broadcast to the output's shape [3]"
    assert outcomes["load"].startswith("FileFormatError"), outcomes["load"]
    assert "cpu.fused_elementwise" in outcomes["load"] and refusal in outcomes["load"]
    for door in ("compile", "lower"):  # the graph object itself, past the parser
        assert outcomes[door].startswith("OpError"), outcomes[door]
        assert "cpu.fused_elementwise" in outcomes[door] and refusal in outcomes[door]


#: Mutates fused nodes the pass made and raw native calls; prints one line per mutant.
FUZZ = textwrap.dedent("""
    import json, sys, numpy as np
    from mskernel.ir import GraphBuilder, tensor_type
    from mskernel.ir.graph import Graph, Node, Value
    from mskernel.hooks.host import host
    from mskernel.runtime import CompileOptions, compile_graph
    from mskernel.runtime.interpreter import run_graph
    from mskernel.testing import random_array
    from mskernel_cpu.lowering import lower
    from mskernel_cpu.native import load

    seed, count = int(sys.argv[1]), int(sys.argv[2])
    rng = np.random.default_rng(seed)
    host().load_external()
    cpu = host().backends.get("cpu")
    native = load()
    UNARY = ["neg", "exp", "tanh", "abs", "sqrt", "sigmoid"]
    BINARY = ["add", "mul", "sub", "maximum", "div"]
    DTYPES = ["f32", "f64", "f16", "i32", "bool", "c64"]
    counts = {"error": 0, "agrees": 0}

    def random_shape():
        return tuple(int(d) for d in rng.integers(0, 4, rng.integers(0, 4)))

    def fused_graph():
        shape = tuple(int(d) for d in rng.integers(1, 5, rng.integers(1, 4)))
        b = GraphBuilder("chain")
        x = b.input(tensor_type("f32", shape), "x")
        y = b.input(tensor_type("f32", shape[rng.integers(0, len(shape)):]), "y")
        v = x
        for _ in range(int(rng.integers(2, 6))):
            if rng.random() < 0.5:
                v = b.op(str(rng.choice(UNARY)), v)
            else:
                v = b.op(str(rng.choice(BINARY)), v, y)
        graph = b.build([v])
        (executable,) = compile_graph(graph, backends=["cpu"], options=CompileOptions(
            opt_level=2)).executables
        optimized = executable.optimized_graph
        if [n.op for n in optimized.nodes] != ["cpu.fused_elementwise"]:
            return fused_graph()  # the chain did not fuse into one node: draw another
        return optimized

    def retyped(value, shape=None, dt=None):
        t = value.type
        return Value(tensor_type(dt or t.dtype, t.shape if shape is None else shape))

    def mutate(graph):
        (node,) = [n for n in graph.nodes if n.op == "cpu.fused_elementwise"]
        region = node.regions[0]
        inputs, nodes, outputs = list(region.inputs), list(region.nodes), list(region.outputs)
        kind = int(rng.integers(0, 7))
        if kind == 0:  # an operand of another shape or rank, the region too
            i = int(rng.integers(0, len(inputs)))
            new = retyped(inputs[i], random_shape())
            swap = {inputs[i]: new}
            inputs[i] = new
            nodes = [Node(n.op, tuple(swap.get(v, v) for v in n.inputs), n.outputs, n.attrs)
                     for n in nodes]
            outer = [Value(v.type) for v in inputs]
        else:
            outer = list(node.inputs)
        if kind == 1:  # a region node's output retyped
            k = int(rng.integers(0, len(nodes)))
            n = nodes[k]
            out = retyped(n.outputs[0], random_shape() if rng.random() < 0.5 else None,
                          str(rng.choice(DTYPES)))
            nodes[k] = Node(n.op, n.inputs, (out,), n.attrs)
            swap = {n.outputs[0]: out}
            nodes = [Node(m.op, tuple(swap.get(v, v) for v in m.inputs), m.outputs, m.attrs)
                     for m in nodes]
            outputs = [swap.get(v, v) for v in outputs]
        if kind == 2:  # a region node's op replaced (a reduction, a shape op, another op)
            k = int(rng.integers(0, len(nodes)))
            n = nodes[k]
            op, attrs = [("sum", {"axes": None, "keepdims": False}), ("transpose", {"perm": None}),
                         ("exp", {}), ("relu", {}), ("add", {})][int(rng.integers(0, 5))]
            nodes[k] = Node(op, n.inputs, n.outputs, attrs)
        if kind == 3:  # nodes reordered: a use before its definition
            rng.shuffle(nodes)
        if kind == 4:  # the result is an operand, or a value of no node
            outputs = [inputs[0] if rng.random() < 0.5 else Value(outputs[0].type)]
        if kind == 5:  # an operand dropped or added
            if rng.random() < 0.5 and len(outer) > 1:
                outer = outer[:-1]
            else:
                outer = outer + [outer[0]]
        if kind == 6:  # too many registers
            v = outputs[0]
            for _ in range(40):
                w = Value(v.type)
                nodes.append(Node("neg", (v,), (w,)))
                v = w
            outputs = [v]
        new_region = Graph(tuple(inputs), tuple(nodes), tuple(outputs), region.name)
        out = Value(outputs[0].type) if isinstance(outputs[0], Value) else Value(node.output.type)
        fused = Node("cpu.fused_elementwise", tuple(outer), (out,), {}, (new_region,))
        graph_inputs = [v for v in outer if v not in graph.inputs] + list(graph.inputs)
        return Graph(tuple(dict.fromkeys(graph_inputs)), (fused,), (out,), "mutant"), kind

    def run_mutant(graph):
        arrays = [random_array(rng, v.type.shape, v.type.dtype) for v in graph.inputs]
        for path in ("compile", "lower"):
            try:
                if path == "compile":
                    (executable,) = compile_graph(graph, backends=["cpu"], options=CompileOptions(
                        opt_level=0, fallback="deny")).executables
                    plan = executable.plan
                else:
                    plan = lower(graph, cpu).plan
                got = [a.to_host() for a in plan.run(
                    [cpu.to_device(a, v.type) for a, v in zip(arrays, graph.inputs)])]
            except Exception:  # noqa: BLE001 - a clean Python exception is the point
                counts["error"] += 1
                continue
            with np.errstate(all="ignore"):
                want = run_graph(graph, arrays)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-3, equal_nan=True)
            counts["agrees"] += 1

    def raw_native():
        # prepare with types the rule refuses, and plans with slots that do not fit
        op = str(rng.choice(["add", "matmul", "conv", "transpose", "sum", "gather", "concat"]))
        specs = [("float32", list(random_shape())) for _ in range(int(rng.integers(0, 4)))]
        out = [("float32", list(random_shape())) for _ in range(int(rng.integers(0, 3)))]
        attrs = {"axis": int(rng.integers(-5, 5)), "perm": [int(p) for p in rng.integers(-3, 4, 2)]}
        try:
            native.prepare(op, specs, out, attrs)
        except Exception:  # noqa: BLE001
            counts["error"] += 1
        plan = native.Plan("p", int(rng.integers(0, 256)), cpu)
        try:
            a = plan.add_slot(int(rng.integers(-2, 300)), "tensor", int(rng.integers(0, 300)))
            b = plan.add_slot(-1, "tensor", 12)
            plan.set_inputs([(b, "tensor", "float32", [3], None)])
            kernel = native.prepare("neg", [("float32", [3])], [("float32", [3])], {})
            plan.add_kernel(kernel, [b], [int(rng.integers(-1, 4))], -1, "neg")
            plan.add_copy(a, int(rng.integers(-1, 3)), int(rng.integers(0, 400)), "copy")
        except Exception:  # noqa: BLE001
            counts["error"] += 1

    for i in range(count):
        print(f"mutant {i}", flush=True)
        if i % 4 == 3:
            raw_native()
            continue
        graph, kind = mutate(fused_graph())
        run_mutant(graph)
    print(json.dumps(counts), flush=True)
""")


@pytest.mark.parametrize("jit", JIT, ids=lambda j: f"jit={j}")
def test_mutated_fused_nodes_and_raw_native_calls_never_crash(jit):
    child = run_child(FUZZ, "13", "120" if jit == "0" else "40", jit=jit)
    assert child.returncode == 0, (f"the child died ({child.returncode}) after "
                                   f"{child.stdout.splitlines()[-1:]}:\n{child.stderr[-3000:]}")
    counts = json.loads(child.stdout.splitlines()[-1])
    assert counts["error"] > 0 and counts["agrees"] > 0, counts


#: Mutates the core op table's samples (attributes, shapes); whatever the op's rule accepts
#: runs on the cpu backend and must agree with the reference interpreter.
CORE_FUZZ = textwrap.dedent("""
    import json, sys, zlib
    from dataclasses import replace
    import numpy as np
    from mskernel.errors import MskernelError
    from mskernel.hooks.host import host
    from mskernel.ops import rule_registry
    from mskernel.runtime import CompileOptions, compile_graph
    from mskernel.runtime.interpreter import run_graph
    from mskernel.runtime.state import RefCell
    from mskernel.testing import (
        SAMPLES_RULE, assert_close, random_array, sample_graph, sample_tolerances,
    )

    seed, per_op = int(sys.argv[1]), int(sys.argv[2])
    host().load_external()
    claimed = set(host().backends.get("cpu").capabilities().ops)
    counts = {"refused by the rule": 0, "too large to run": 0, "agrees": 0, "both raise": 0}
    MAX_ELEMENTS = 1 << 20

    def mutate_value(rng, value):
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int):
            return int(rng.choice([value + 1, value - 1, -value, 0, 2**31, -2**31, 1000]))
        if isinstance(value, float):
            return float(rng.choice([-value, 0.0, 1e30, -1e-30, np.inf, np.nan]))
        if isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value):
            items = list(value)
            choice = rng.integers(0, 3)
            if choice == 0 and items:
                i = rng.integers(0, len(items))
                items[i] = mutate_value(rng, items[i])
            elif choice == 1:
                items.append(int(rng.integers(-3, 4)))
            elif items:
                items.pop()
            return tuple(items)
        return value

    def mutate_shape(rng, shape):
        shape = list(shape)
        choice = rng.integers(0, 4)
        if choice == 0 and shape:
            i = rng.integers(0, len(shape))
            shape[i] = int(rng.choice([0, 1, shape[i] + 1, max(shape[i] - 1, 0)]))
        elif choice == 1:
            shape.insert(int(rng.integers(0, len(shape) + 1)), int(rng.integers(0, 4)))
        elif choice == 2 and shape:
            shape.pop(int(rng.integers(0, len(shape))))
        return tuple(shape)

    def mutant(rng, sample):
        args, attrs = list(sample.args), dict(sample.attrs)
        if attrs and (rng.random() < 0.6 or not args):
            name = list(attrs)[int(rng.integers(0, len(attrs)))]
            attrs[name] = mutate_value(rng, attrs[name])
        elif args:
            i = int(rng.integers(0, len(args)))
            if isinstance(args[i], np.ndarray):
                dt = sample.dtypes[i] if sample.dtypes and sample.dtypes[i] else args[i].dtype
                args[i] = random_array(rng, mutate_shape(rng, args[i].shape), dt)
        return replace(sample, args=tuple(args), attrs=attrs)

    for op in sorted(claimed & rule_registry().ops_with(SAMPLES_RULE)):
        rng = np.random.default_rng([seed, zlib.crc32(op.encode())])
        samples = [s for s in rule_registry().get(SAMPLES_RULE, op)(rng)  # state and control flow are tested elsewhere
                   if not s.regions and not any(isinstance(a, RefCell) for a in s.args)]
        if not samples:
            continue
        for k in range(per_op):
            sample = mutant(rng, samples[int(rng.integers(0, len(samples)))])
            print(f"{op} {k}: {sample.attrs} {[np.shape(a) for a in sample.args]}", flush=True)
            try:
                graph = sample_graph(sample)
            except MskernelError:
                counts["refused by the rule"] += 1
                continue
            if any(v.type.size > MAX_ELEMENTS for n in graph.nodes for v in n.outputs
                   if hasattr(v.type, "size")):
                counts["too large to run"] += 1  # a valid request for memory, not a crash
                continue
            with np.errstate(all="ignore"):
                try:
                    want = run_graph(graph, list(sample.args))
                except MemoryError:  # the reference's windows span the attributes' extent
                    counts["too large to run"] += 1
                    continue
                except Exception:  # noqa: BLE001
                    want = None
                try:
                    got = compile_graph(graph, backends=["cpu"], options=CompileOptions(
                        opt_level=0, fallback="deny")).run(list(sample.args))
                except Exception as exc:  # noqa: BLE001
                    if want is not None:
                        raise AssertionError(f"{op}: the cpu backend raised {exc!r} where the "
                                             f"reference computes") from exc
                    counts["both raise"] += 1
                    continue
            assert want is not None, f"{op}: the cpu backend computes where the reference raises"
            dtypes = [v.type.dtype for v in graph.outputs]
            bounds = sample_tolerances(sample, dtypes, rule_registry())
            for value, g, w, (rtol, atol) in zip(graph.outputs, got, want, bounds):
                assert_close(g.to_host(), w, value.type.dtype, rtol=rtol, atol=atol, what=op)
            counts["agrees"] += 1
    print(json.dumps(counts), flush=True)
""")


def test_mutated_core_op_samples_are_refused_or_agree_with_the_reference():
    child = run_child(CORE_FUZZ, "7", "6", jit="0")
    assert child.returncode == 0, (f"the child failed ({child.returncode}) at "
                                   f"{child.stdout.splitlines()[-1:]}:\n{child.stderr[-3000:]}")
    counts = json.loads(child.stdout.splitlines()[-1])
    assert counts["refused by the rule"] > 0 and counts["agrees"] > 0, counts
