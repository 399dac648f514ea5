"""Memory layouts and shapes the kernels must handle: strided device arrays made from NumPy
views, size-0 and size-1 dimensions, broadcasting patterns, and tensors large enough to take
the multi-threaded paths (checked against PyTorch)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from mskernel.ir.dtypes import round_to_bfloat16
from mskernel_sdk import DeviceArray, GraphBuilder, tensor_type

import mskernel_cpu


def graph_of(op, *types, **attrs):
    b = GraphBuilder(op)
    inputs = [b.input(t) for t in types]
    return b.build([b.op(op, *inputs, **attrs)])


def run_host(executable, cpu, graph, arrays):
    """Run on host arrays moved to the device; return host arrays."""
    args = [cpu.to_device(a, v.type) for v, a in zip(graph.inputs, arrays)]
    return [out.to_host() for out in executable(graph).run(args)]


def run_views(executable, cpu, graph, views):
    """Run with DeviceArrays whose data are the given (possibly strided) NumPy views."""
    args = [DeviceArray(cpu, v.type, view) for v, view in zip(graph.inputs, views)]
    return [out.to_host() for out in executable(graph).run(args)]


# -- strided device arrays ------------------------------------------------------------------


STRIDED_CASES = {
    # op: (attributes, number of operands, NumPy semantics)
    "add": ({}, 2, lambda x, y: x + y),
    "maximum": ({}, 2, np.maximum),
    "matmul": ({}, 2, lambda x, y: x @ y.T),
    "sum": ({"axes": (0,)}, 1, lambda x: x.sum(axis=0)),
}


@pytest.mark.parametrize("op", sorted(STRIDED_CASES))
def test_transposed_and_reversed_views_are_read_correctly(op, cpu, executable):
    attrs, arity, semantics = STRIDED_CASES[op]
    base = np.random.default_rng(0).standard_normal((6, 10)).astype(np.float32)
    x = base.T[::2]  # (5, 6), neither C- nor F-contiguous
    y = base[::-1, 2:8][1:]  # (5, 6), rows reversed
    views = [x, y.T if op == "matmul" else y][:arity]
    assert not any(v.flags.c_contiguous for v in views)
    graph = graph_of(op, *(tensor_type("f32", v.shape) for v in views), **attrs)
    (got,) = run_views(executable, cpu, graph, views)
    np.testing.assert_allclose(got, semantics(*[x, y][:arity]), rtol=1e-5, atol=1e-5)


def test_strided_condition_of_where(cpu, executable):
    base = np.random.default_rng(1).standard_normal((6, 10))
    cond, x, y = (base > 0)[:, ::-2], base[:, 1::2], base[::-1, ::2]
    types = [tensor_type(dt, (6, 5)) for dt in ("bool", "f64", "f64")]
    (got,) = run_views(executable, cpu, graph_of("where", *types), [cond, x, y])
    np.testing.assert_array_equal(got, np.where(cond, x, y))


def test_to_device_copies_views_into_aligned_contiguous_storage(cpu):
    host = np.arange(48, dtype=np.float64).reshape(6, 8).T[1::2]
    array = cpu.to_device(host, tensor_type("f64", host.shape))
    assert array.data.flags.c_contiguous and array.data.ctypes.data % 64 == 0
    assert not np.shares_memory(array.data, host)
    host[...] = -1  # the caller mutating its array later must not change the device copy
    np.testing.assert_array_equal(array.to_host(), np.arange(48.0).reshape(6, 8).T[1::2])


def test_to_host_returns_an_array_the_caller_owns(cpu):
    array = cpu.to_device(np.ones(4, np.int32), tensor_type("i32", (4,)))
    out = array.to_host()
    out[:] = 7
    np.testing.assert_array_equal(array.to_host(), np.ones(4, np.int32))


def test_bfloat16_is_two_bytes_on_the_device_and_round_trips(cpu):
    values = np.array([1.0, -2.5, 3.140625, 2.0**-10, np.inf, -0.0], np.float32)  # exact bf16
    array = cpu.to_device(values, tensor_type("bf16", values.shape))
    assert array.data.dtype == np.uint16 and array.data.nbytes == 2 * values.size
    back = array.to_host()
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back, values)
    nan = cpu.to_device(np.array([np.nan], np.float32), tensor_type("bf16", (1,))).to_host()
    assert np.isnan(nan).all()


def test_bfloat16_rounds_to_nearest_even_like_the_reference(cpu):
    values = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    got = cpu.to_device(values, tensor_type("bf16", values.shape)).to_host()
    np.testing.assert_array_equal(got, round_to_bfloat16(values))


# -- shapes -----------------------------------------------------------------------------------


@pytest.mark.parametrize("sx,sy", [((0, 4), (4,)), ((3, 0, 2), (1, 1, 2)), ((1, 1), (1, 1)),
                                   ((5, 1, 3), (1, 4, 1)), ((2, 3, 4, 5), (3, 1, 5)),
                                   ((7, 1), ()), ((), ())])
def test_broadcasting_with_zero_and_one_sized_dims(sx, sy, cpu, executable):
    rng = np.random.default_rng(2)
    x = rng.integers(-50, 50, sx).astype(np.int64)
    y = rng.integers(-50, 50, sy).astype(np.int64)
    graph = graph_of("sub", tensor_type("i64", sx), tensor_type("i64", sy))
    (got,) = run_host(executable, cpu, graph, [x, y])
    assert got.shape == np.broadcast_shapes(sx, sy)
    np.testing.assert_array_equal(got, x - y)


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
@pytest.mark.parametrize("shape,axes", [((0, 5), (0,)), ((0, 5), (1,)), ((1, 1, 1), None),
                                        ((4, 1, 3), (1,)), ((2, 0, 3), (0, 2))])
def test_reductions_over_empty_and_unit_axes(shape, axes, cpu, executable):
    x = np.random.default_rng(3).standard_normal(shape)
    for op, fn in (("sum", np.sum), ("mean", np.mean)):
        graph = graph_of(op, tensor_type("f64", shape), axes=axes, keepdims=True)
        (got,) = run_host(executable, cpu, graph, [x])
        with np.errstate(invalid="ignore"):
            want = fn(x, axis=axes, keepdims=True)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14, equal_nan=True)


# -- sizes that take the multi-threaded paths, against PyTorch ---------------------------------


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def threads(request):
    before = mskernel_cpu.get_num_threads()
    mskernel_cpu.set_num_threads(request.param)
    yield request.param
    mskernel_cpu.set_num_threads(before)


def test_large_broadcast_elementwise_matches_torch(threads, cpu, executable):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((96, 1, 1024)).astype(np.float32)
    y = rng.standard_normal((7, 1)).astype(np.float32)
    graph = graph_of("atan2", tensor_type("f32", x.shape), tensor_type("f32", y.shape))
    (got,) = run_host(executable, cpu, graph, [x, y])
    want = torch.atan2(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("axes", [None, (0,), (1,), (2,), (0, 2), (1, 2)])
def test_large_reductions_match_torch(axes, threads, cpu, executable):
    x = np.random.default_rng(5).standard_normal((33, 130, 41)).astype(np.float32)
    dims = axes if axes is not None else (0, 1, 2)
    t = torch.from_numpy(x).double()
    for op, want in (("sum", t.sum(dim=dims)), ("mean", t.mean(dim=dims)),
                     ("max", t.amax(dim=dims)), ("min", t.amin(dim=dims))):
        graph = graph_of(op, tensor_type("f32", x.shape), axes=axes)
        (got,) = run_host(executable, cpu, graph, [x])
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5, err_msg=op)


@pytest.mark.parametrize("dt,tolerance", [("f32", 1e-4), ("f64", 1e-12), ("bf16", 3e-2),
                                          ("f16", 3e-3), ("i32", 0)])
def test_large_batched_matmul_matches_torch(dt, tolerance, threads, cpu, executable):
    rng = np.random.default_rng(6)
    x = rng.uniform(-1, 1, (3, 1, 65, 130))
    y = rng.uniform(-1, 1, (4, 130, 33))
    if dt == "i32":
        x, y = np.round(x * 10), np.round(y * 10)
    types = [tensor_type(dt, x.shape), tensor_type(dt, y.shape)]
    graph = graph_of("matmul", *types)
    stored = [cpu.to_device(a, t).to_host() for a, t in zip((x, y), types)]  # rounded inputs
    (got,) = run_host(executable, cpu, graph, stored)
    want = torch.matmul(torch.from_numpy(stored[0].astype(np.float64)),
                        torch.from_numpy(stored[1].astype(np.float64))).numpy()
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * 10)


def test_linear_layer_shape_is_one_product(cpu, executable):
    x = np.random.default_rng(7).standard_normal((8, 16, 32)).astype(np.float32)
    w = np.random.default_rng(8).standard_normal((32, 24)).astype(np.float32)
    graph = graph_of("matmul", tensor_type("f32", x.shape), tensor_type("f32", w.shape))
    compiled = executable(graph)
    assert "[gemm]" in compiled.describe()
    (got,) = run_host(executable, cpu, graph, [x, w])
    np.testing.assert_allclose(got, x @ w, rtol=1e-5, atol=1e-5)
