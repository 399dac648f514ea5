"""The compiled plan: one call from Python into C++ per run, errors that name the node, refs and
control flow run inside the plan, and the plan dump."""

from __future__ import annotations

import functools
import sys
import threading

import numpy as np
import pytest

from mskernel.ir.types import TOKEN
from mskernel.testing import region
from mskernel_sdk import (
    CompileOptions, DeviceArray, GraphBuilder, MskernelError, RefCell, RefType, TOKEN_VALUE,
    run_reference, tensor_type,
)

from mskernel_cpu.native import load

_native = load()

F32 = tensor_type("f32", (4, 8))


def ten_node_graph():
    b = GraphBuilder("ten")
    x, y = b.input(F32, "x"), b.input(F32, "y")
    v = b.op("add", x, y)
    for op in ("mul", "sub", "add", "mul"):
        v = b.op(op, v, x)
    for op in ("exp", "neg", "tanh", "abs", "sqrt"):
        v = b.op(op, v)
    return b.build([v])


def device_args(cpu, graph, arrays):
    return [cpu.to_device(a, v.type) for v, a in zip(graph.inputs, arrays)]


def calls_during(fn):
    """(native calls, Python function calls) made while ``fn`` runs."""
    native, python = [], []

    def profile(frame, event, arg):
        if event == "c_call" and (getattr(arg, "__module__", None) == _native.__name__
                                  or isinstance(getattr(arg, "__self__", None), _native.Plan)):
            native.append(arg.__name__)
        elif event == "call":
            python.append(frame.f_code.co_qualname)

    sys.setprofile(profile)
    try:
        result = fn()
    finally:
        sys.setprofile(None)
    return result, native, python


def test_a_run_is_one_call_into_the_native_plan(cpu, executable):
    graph = ten_node_graph()
    compiled = executable(graph)
    assert type(compiled.plan) is _native.Plan and compiled.plan.num_steps == 10
    rng = np.random.default_rng(0)
    x, y = (rng.uniform(0.5, 1.5, (4, 8)).astype(np.float32) for _ in range(2))
    args = device_args(cpu, graph, [x, y])
    (out,), native, python = calls_during(functools.partial(compiled.run, args))
    assert native == ["run"]
    # Besides the executable's own run, Python runs only to wrap the one output.
    assert python == ["CpuExecutable.run", "DeviceArray.__init__"]
    (want,) = run_reference(graph, [x, y])
    np.testing.assert_allclose(out.to_host(), want, rtol=1e-6)


def test_outputs_are_fresh_arrays_never_aliasing_inputs_or_earlier_outputs(cpu, executable):
    b = GraphBuilder("alias")
    x = b.input(F32, "x")
    e = b.op("exp", x)
    graph = b.build([x, e, e, b.op("neg", e)])  # an input returned, an output repeated
    compiled = executable(graph)
    host = np.ones((4, 8), np.float32)
    (arg,) = device_args(cpu, graph, [host])
    first = compiled.run([arg])
    second = compiled.run([arg])
    arrays = [a.data for a in first + second] + [arg.data]
    for i, a in enumerate(arrays):
        assert a.ctypes.data % 64 == 0
        for other in arrays[i + 1:]:
            assert not np.shares_memory(a, other)
    np.testing.assert_allclose(first[1].to_host(), np.exp(host), rtol=1e-6)
    np.testing.assert_allclose(first[3].to_host(), -np.exp(host), rtol=1e-6)


def test_kernel_errors_name_the_node_and_keep_their_python_type(cpu, executable):
    b = GraphBuilder("divide")
    x, y = b.input(tensor_type("i32", (3,)), "x"), b.input(tensor_type("i32", (3,)), "y")
    graph = b.build([b.op("floor_divide", x, y)])
    compiled = executable(graph)
    args = device_args(cpu, graph, [np.array([1, 2, 3], np.int32), np.array([1, 0, 1], np.int32)])
    with pytest.raises(ZeroDivisionError,
                       match=r"node 0 'floor_divide' .*@divide: floor_divide: integer division"):
        compiled.run(args)
    b = GraphBuilder("power")
    x, y = b.input(tensor_type("i64", (2,)), "x"), b.input(tensor_type("i64", (2,)), "y")
    graph = b.build([b.op("pow", x, y)])
    args = device_args(cpu, graph, [np.array([2, 2]), np.array([3, -1])])
    with pytest.raises(ValueError, match="negative integer powers"):
        executable(graph).run(args)


def test_arguments_are_checked(cpu, executable):
    compiled = executable(ten_node_graph())
    good = cpu.to_device(np.ones((4, 8), np.float32), F32)
    with pytest.raises(MskernelError, match="takes 2 inputs, got 1"):
        compiled.run([good])
    with pytest.raises(TypeError, match="input 1 of graph @ten must be a DeviceArray"):
        compiled.run([good, np.ones((4, 8), np.float32)])
    wrong = DeviceArray(cpu, F32, np.ones((4, 8), np.float64))
    with pytest.raises(TypeError, match=r"expects storage float32 of shape \(4, 8\), got float64"):
        compiled.run([good, wrong])


I32 = tensor_type("i32", ())


def loop_types(cell_type):
    """The carried values (i, step, n, ref, w, x, token) of :func:`matmul_loop`."""
    return (I32, I32, I32, RefType(cell_type), cell_type, cell_type, TOKEN)


def matmul_loop(cell_type):
    """While i < n: i += step; x = x @ w, stored into the ref."""

    def body(b, v):
        i, step, n, ref, w, x, token = v
        y = b.op("matmul", x, w)
        return b.op("add", i, step), step, n, ref, w, y, b.op("ref_store", ref, y, token)

    types = loop_types(cell_type)
    cond = region("cond", types, lambda b, v: (b.op("less", v[0], v[2]),))
    return cond, region("body", types, body)


@pytest.mark.parametrize("iterations", [0, 1, 4])
def test_while_with_refs_runs_inside_the_plan(iterations, cpu, executable):
    cell_type = tensor_type("f32", (3, 3))
    b = GraphBuilder("loop")
    ins = [b.input(t) for t in loop_types(cell_type)]
    outs = b.op("While", *ins, regions=matmul_loop(cell_type), max_iterations=10)
    graph = b.build([outs[0], outs[5], outs[6]])
    compiled = executable(graph)
    assert "While" in compiled.describe() and "body @body:" in compiled.describe()
    rng = np.random.default_rng(1)
    w = rng.standard_normal((3, 3)).astype(np.float32) / 3
    x = rng.standard_normal((3, 3)).astype(np.float32)
    held = cpu.to_device(x, cell_type)
    cell = RefCell(cell_type, held)
    args = [cpu.to_device(np.array(v, np.int32), I32) for v in (0, 1, iterations)]
    args += [cell, cpu.to_device(w, cell_type), cpu.to_device(x, cell_type), TOKEN_VALUE]
    count, result, token = compiled.run(args)
    want = x
    for _ in range(iterations):
        want = want @ w
    assert count.to_host() == iterations and token is TOKEN_VALUE
    np.testing.assert_allclose(result.to_host(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cell.value.to_host(), want if iterations else x, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(held.to_host(), x)  # a store replaces the array, never edits it


def test_while_over_max_iterations_is_an_error_naming_the_node(cpu, executable):
    cond = region("cond", (I32,), lambda b, v: (b.op("equal", v[0], v[0]),))
    body = region("body", (I32,), lambda b, v: (b.op("neg", v[0]),))
    b = GraphBuilder("forever")
    x = b.input(I32)
    graph = b.build(list(b.op("While", x, regions=(cond, body), max_iterations=3)))
    args = [cpu.to_device(np.array(1, np.int32), I32)]
    assert graph.nodes[0].loc.file == __file__  # where the node was made
    with pytest.raises(MskernelError, match=rf"node 0 'While' at {graph.nodes[0].loc} of "
                                            r"@forever: While: the loop exceeded max_iterations=3"):
        executable(graph).run(args)


def test_if_selects_a_sub_plan(cpu, executable):
    types = (F32,)
    then_region = region("then", types, lambda b, v: (b.op("exp", v[0]),))
    else_region = region("else", types, lambda b, v: (v[0],))  # a pass-through output
    b = GraphBuilder("choose")
    p, x = b.input(tensor_type("bool", ())), b.input(F32)
    graph = b.build(list(b.op("If", p, x, regions=(then_region, else_region))))
    compiled = executable(graph)
    x_host = np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32)
    for pred, want in ((True, np.exp(x_host)), (False, x_host)):
        args = [cpu.to_device(np.array(pred), tensor_type("bool", ())), cpu.to_device(x_host, F32)]
        (out,) = compiled.run(args)
        np.testing.assert_allclose(out.to_host(), want, rtol=1e-6)
        assert not np.shares_memory(out.data, args[1].data)


def test_concurrent_runs_of_one_executable_are_serialised(cpu, executable):
    graph = ten_node_graph()
    compiled = executable(graph)
    rng = np.random.default_rng(3)
    inputs = [[rng.uniform(0.5, 1.5, (4, 8)).astype(np.float32) for _ in range(2)]
              for _ in range(4)]
    expected = [compiled.run(device_args(cpu, graph, a))[0].to_host() for a in inputs]
    results: dict[int, list] = {}

    def worker(k):
        args = device_args(cpu, graph, inputs[k])
        results[k] = [compiled.run(args)[0].to_host() for _ in range(200)]

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        for got in results[k]:
            np.testing.assert_array_equal(got, expected[k])


def test_compiling_a_node_without_a_kernel_names_it(cpu, foreign_op):
    b = GraphBuilder("unclaimed")
    x = b.input(F32, "x")
    graph = b.build([b.op(foreign_op, b.op("exp", x), axis=0)])
    with pytest.raises(TypeError, match=f"no cpu kernel for op '{foreign_op}'") as info:
        cpu.compile(graph, CompileOptions())
    assert (f"while preparing the cpu kernel of node 1 '{foreign_op}' at {graph.nodes[1].loc} "
            "of @unclaimed" in info.value.__notes__)
