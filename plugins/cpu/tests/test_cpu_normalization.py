"""Softmax, normalisations and the statistical reductions on shapes large enough to take the
multi-threaded and tiled paths, with 1 and 2 threads, against PyTorch (and NumPy where
PyTorch's conventions differ: NaN in argmax, bool reductions)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from mskernel_sdk import GraphBuilder, tensor_type

import mskernel_cpu


def graph_of(op, *types, **attrs):
    b = GraphBuilder(op)
    inputs = [b.input(t) for t in types]
    out = b.op(op, *inputs, **attrs)
    return b.build(list(out) if isinstance(out, tuple) else [out])


def run(cpu, executable, op, arrays, dt="f32", **attrs):
    graph = graph_of(op, *(tensor_type(dt, a.shape) for a in arrays), **attrs)
    args = [cpu.to_device(a, v.type) for v, a in zip(graph.inputs, arrays)]
    return [out.to_host() for out in executable(graph).run(args)]


def close(got, want, tolerance=1e-5):
    np.testing.assert_allclose(got, np.asarray(want), rtol=tolerance, atol=tolerance)


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def threads(request):
    before = mskernel_cpu.get_num_threads()
    mskernel_cpu.set_num_threads(request.param)
    yield request.param
    mskernel_cpu.set_num_threads(before)


def normal(shape, seed, scale=1.0, offset=0.0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale + offset).astype(np.float32)


@pytest.mark.parametrize("shape,axis", [((64, 1024), -1), ((32, 16, 28, 28), 1),
                                        ((8, 300, 3), 1), ((5, 7), 0)])
def test_softmax_and_log_softmax_match_torch(shape, axis, threads, cpu, executable):
    x = normal(shape, 1, scale=4.0)
    t = torch.from_numpy(x)
    (got,) = run(cpu, executable, "softmax", [x], axis=axis)
    close(got, torch.softmax(t, axis), 1e-6)
    (got,) = run(cpu, executable, "log_softmax", [x], axis=axis)
    close(got, torch.log_softmax(t, axis))


@pytest.mark.parametrize("dt,tolerance", [("f16", 2e-3), ("bf16", 2e-2), ("f64", 1e-12)])
def test_softmax_in_other_float_types(dt, tolerance, cpu, executable):
    x = normal((6, 40, 9), 2, scale=3.0)
    stored = cpu.to_device(x, tensor_type(dt, x.shape)).to_host().astype(np.float64)
    for op, fn in (("softmax", torch.softmax), ("log_softmax", torch.log_softmax)):
        (got,) = run(cpu, executable, op, [stored], dt=dt, axis=1)
        close(got.astype(np.float64), fn(torch.from_numpy(stored), 1), tolerance)


def test_softmax_rows_with_nan_and_infinities(cpu, executable):
    x = np.array([[1.0, np.nan, 2.0], [np.inf, 0.0, 1.0], [-np.inf] * 3, [0.0, -np.inf, 3.0]],
                 np.float32)
    (got,) = run(cpu, executable, "softmax", [x], axis=-1)
    close(got, torch.softmax(torch.from_numpy(x), -1))


@pytest.mark.parametrize("shape,axis", [((64 * 8, 256), -1), ((8, 16, 64), 1)])
def test_layer_norm_matches_torch(shape, axis, threads, cpu, executable):
    normalized = shape[axis % len(shape):]
    x, w, b = normal(shape, 3, 2.0, 1.0), normal(normalized, 4), normal(normalized, 5)
    y, mean, rstd = run(cpu, executable, "layer_norm", [x, w, b], axis=axis, eps=1e-5)
    ty, tmean, trstd = torch.native_layer_norm(torch.from_numpy(x), normalized,
                                               torch.from_numpy(w), torch.from_numpy(b), 1e-5)
    close(y, ty, 1e-4)
    close(mean, tmean)
    close(rstd, trstd, 1e-4)


@pytest.mark.parametrize("groups", [1, 4, 16])
def test_group_norm_matches_torch(groups, threads, cpu, executable):
    x, w, b = normal((32, 16, 28, 28), 6), normal((16,), 7), normal((16,), 8)
    y, mean, rstd = run(cpu, executable, "group_norm", [x, w, b], num_groups=groups)
    ty, tmean, trstd = torch.native_group_norm(torch.from_numpy(x), torch.from_numpy(w),
                                               torch.from_numpy(b), 32, 16, 28 * 28, groups,
                                               1e-5)
    close(y, ty, 1e-4)
    close(mean, tmean)
    close(rstd, trstd, 1e-4)


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_matches_torch(training, threads, cpu, executable):
    x = normal((32, 16, 28, 28), 9, 3.0, 2.0)
    w, b, running_mean = normal((16,), 10), normal((16,), 11), normal((16,), 12)
    running_var = np.abs(normal((16,), 13)) + 0.5
    y, mean, var = run(cpu, executable, "batch_norm", [x, w, b, running_mean, running_var],
                       training=training, eps=1e-5)
    t = torch.from_numpy(x)
    stats = [torch.from_numpy(a.copy()) for a in (running_mean, running_var)]
    want = F.batch_norm(t, *stats, torch.from_numpy(w), torch.from_numpy(b),
                        training=training, momentum=0.0, eps=1e-5)
    close(y, want, 1e-4)
    if training:  # the batch statistics, with the biased variance
        close(mean, t.mean(dim=(0, 2, 3)))
        close(var, t.var(dim=(0, 2, 3), correction=0), 1e-4)
    else:  # the running statistics, unchanged
        np.testing.assert_array_equal(mean, running_mean)
        np.testing.assert_array_equal(var, running_var)


@pytest.mark.parametrize("axes", [None, (1,), (0, 2), (2,)])
@pytest.mark.parametrize("correction", [0, 1])
def test_var_std_match_torch_on_offset_data(axes, correction, threads, cpu, executable):
    x = normal((33, 130, 41), 14, 1.0, 1000.0)  # a large mean: a one-pass sum of squares fails
    dims = axes if axes is not None else (0, 1, 2)
    t = torch.from_numpy(x).double()
    for op, want in (("var", t.var(dim=dims, correction=correction)),
                     ("std", t.std(dim=dims, correction=correction))):
        (got,) = run(cpu, executable, op, [x], axes=axes, correction=correction)
        close(got, want.numpy(), 1e-4)


@pytest.mark.parametrize("axes", [None, (1,), (0, 2)])
def test_logsumexp_matches_torch(axes, threads, cpu, executable):
    x = normal((33, 130, 41), 15, 10.0)
    dims = axes if axes is not None else (0, 1, 2)
    (got,) = run(cpu, executable, "logsumexp", [x], axes=axes)
    close(got, torch.logsumexp(torch.from_numpy(x).double(), dim=dims).numpy())


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_argmax_argmin_first_occurrence_and_nan(axis, threads, cpu, executable):
    rng = np.random.default_rng(16)
    ints = rng.integers(-3, 4, (64, 300, 5)).astype(np.int32)  # many ties
    x = ints.astype(np.float32)
    x[5, 17, 2] = x[40, 3, 0] = np.nan
    x[7, 100, 1] = np.nan
    for op, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
        (got,) = run(cpu, executable, op, [x], axis=axis)
        np.testing.assert_array_equal(got, fn(x, axis=axis), err_msg=op)
        (got,) = run(cpu, executable, op, [ints], dt="i32", axis=axis)
        np.testing.assert_array_equal(got, fn(ints, axis=axis), err_msg=op)


@pytest.mark.parametrize("axes", [None, (1,), (0, 2)])
def test_prod_all_any_match_numpy(axes, threads, cpu, executable):
    rng = np.random.default_rng(17)
    x = rng.uniform(0.999, 1.001, (33, 130, 41))
    (got,) = run(cpu, executable, "prod", [x], dt="f64", axes=axes)
    close(got, np.prod(x, axis=axes), 1e-12)
    ints = rng.integers(-3, 4, (33, 130, 41)).astype(np.int32)
    (got,) = run(cpu, executable, "prod", [ints], dt="i32", axes=axes)
    np.testing.assert_array_equal(got, np.prod(ints, axis=axes, dtype=np.int32))
    flags = rng.random((33, 130, 41)) < 0.999
    for op, fn in (("all", np.all), ("any", np.any)):
        for value in (flags, ~flags):
            (got,) = run(cpu, executable, op, [value], dt="bool", axes=axes)
            np.testing.assert_array_equal(got, fn(value, axis=axes), err_msg=op)
