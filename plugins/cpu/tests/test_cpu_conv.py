"""Convolution and pooling kernels on shapes large enough to take the blocked and threaded
paths (several pixel blocks per image, batch 1 split over threads, groups, dilation, 1x1
convolutions), checked against PyTorch."""

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
    return b.build([b.op(op, *inputs, **attrs)])


def run(executable, cpu, op, arrays, **attrs):
    graph = graph_of(op, *(tensor_type(str(a.dtype), a.shape) for a in arrays), **attrs)
    args = [cpu.to_device(a, v.type) for v, a in zip(graph.inputs, arrays)]
    (out,) = executable(graph).run(args)
    return out.to_host()


def random(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def pairs(pad, n):
    return tuple(p for _ in range(n) for p in (pad, pad))


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def threads(request):
    before = mskernel_cpu.get_num_threads()
    mskernel_cpu.set_num_threads(request.param)
    yield request.param
    mskernel_cpu.set_num_threads(before)


# (label, x shape, w shape, stride, pad, dilation, groups)
CONV_CASES = [
    ("3to16-pad1", (8, 3, 32, 32), (16, 3, 3, 3), 1, 1, 1, 1),
    ("3to16-stride2", (8, 3, 32, 32), (16, 3, 3, 3), 2, 1, 1, 1),
    ("groups2-dilation2", (4, 8, 20, 20), (16, 4, 3, 3), 1, 2, 2, 2),
    ("depthwise", (2, 16, 17, 17), (16, 1, 3, 3), 1, 1, 1, 16),
    ("1x1", (4, 32, 16, 16), (64, 32, 1, 1), 1, 0, 1, 1),
    ("1x1-stride2", (4, 32, 16, 16), (8, 32, 1, 1), 2, 0, 1, 1),
    ("batch1-resnet", (1, 16, 32, 32), (16, 16, 3, 3), 1, 1, 1, 1),
    ("batch1-wide", (1, 64, 28, 28), (128, 64, 3, 3), 1, 1, 1, 1),
    ("lenet", (16, 1, 32, 32), (6, 1, 5, 5), 1, 0, 1, 1),
    ("lenet-conv2", (16, 6, 14, 14), (16, 6, 5, 5), 1, 0, 1, 1),
    ("stride2-24ch", (2, 8, 23, 23), (24, 8, 5, 5), 2, 2, 1, 1),
    ("1d", (4, 8, 100), (12, 8, 5), 3, 2, 1, 1),
    ("3d", (2, 4, 8, 10, 9), (6, 4, 3, 3, 3), 1, 1, 1, 1),
]
TORCH_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
TORCH_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


@pytest.mark.parametrize("case", CONV_CASES, ids=[c[0] for c in CONV_CASES])
def test_conv_matches_torch(case, threads, cpu, executable):
    _, xs, ws, stride, pad, dilation, groups = case
    n = len(xs) - 2
    x, w = random(*xs, seed=1), random(*ws, seed=2)
    got = run(executable, cpu, "conv", [x, w], stride=(stride,) * n, padding=pairs(pad, n),
              dilation=(dilation,) * n, groups=groups)
    want = TORCH_CONV[n](torch.from_numpy(x), torch.from_numpy(w), stride=stride, padding=pad,
                         dilation=dilation, groups=groups).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_conv_other_dtypes_on_a_blocked_shape(dtype, cpu, executable):
    x, w = random(2, 16, 40, 40, dtype=np.float64), random(32, 16, 3, 3, dtype=np.float64)
    b = GraphBuilder("conv")
    xi, wi = b.input(tensor_type(dtype, x.shape)), b.input(tensor_type(dtype, w.shape))
    graph = b.build([b.op("conv", xi, wi, padding=(1, 1, 1, 1))])
    host = [a if dtype == "float64" else a.astype(np.float32) for a in (x, w)]
    args = [cpu.to_device(a, v.type) for v, a in zip(graph.inputs, host)]
    (out,) = executable(graph).run(args)
    as_torch = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64}
    xt, wt = (torch.from_numpy(a).to(as_torch[dtype]) for a in (x, w))
    want = F.conv2d(xt.double(), wt.double(), padding=1).numpy()
    tol = {"float16": 1e-2, "bfloat16": 5e-2, "float64": 1e-10}[dtype]
    np.testing.assert_allclose(out.to_host().astype(np.float64), want, rtol=tol, atol=tol * 10)


def test_conv_without_input_channels_is_zero(cpu, executable):
    x, w = random(2, 0, 5, 5), random(3, 0, 2, 2)
    got = run(executable, cpu, "conv", [x, w])
    assert got.shape == (2, 3, 4, 4) and not got.any()


# (label, x shape, w shape, stride, pad, output_padding, dilation, groups)
CONV_TRANSPOSE_CASES = [
    ("stride2-outpad", (4, 16, 16, 16), (16, 8, 3, 3), 2, 1, 1, 1, 1),
    ("groups2-dilation2", (2, 8, 12, 12), (8, 6, 3, 3), 1, 2, 0, 2, 2),
    ("batch1", (1, 32, 16, 16), (32, 16, 4, 4), 2, 1, 0, 1, 1),
    ("1x1", (2, 32, 16, 16), (32, 16, 1, 1), 1, 0, 0, 1, 1),
    ("1d", (3, 6, 50), (6, 4, 5), 3, 2, 2, 1, 1),
    ("3d", (1, 4, 5, 6, 4), (4, 3, 3, 2, 3), 2, 1, 1, 1, 1),
]


@pytest.mark.parametrize("case", CONV_TRANSPOSE_CASES, ids=[c[0] for c in CONV_TRANSPOSE_CASES])
def test_conv_transpose_matches_torch(case, threads, cpu, executable):
    _, xs, ws, stride, pad, out_pad, dilation, groups = case
    n = len(xs) - 2
    x, w = random(*xs, seed=3), random(*ws, seed=4)
    got = run(executable, cpu, "conv_transpose", [x, w], stride=(stride,) * n,
              padding=pairs(pad, n), output_padding=(out_pad,) * n, dilation=(dilation,) * n,
              groups=groups)
    want = TORCH_CONV_T[n](torch.from_numpy(x), torch.from_numpy(w), stride=stride,
                           padding=pad, output_padding=out_pad, dilation=dilation,
                           groups=groups).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# (label, x shape, kernel, stride, pad, dilation, ceil_mode)
POOL_CASES = [
    ("2x2", (8, 16, 32, 32), 2, 2, 0, 1, False),
    ("3x3-s2-p1", (8, 16, 33, 33), 3, 2, 1, 1, False),
    ("3x3-s2-ceil", (4, 8, 30, 30), 3, 2, 1, 1, True),
    ("dilation2", (2, 4, 21, 21), 3, 1, 1, 2, False),
    ("wide-rows", (1, 2, 5, 600), 3, 1, 1, 1, False),
    ("1d", (4, 8, 100), 4, 3, 1, 1, True),
    ("3d", (2, 4, 9, 10, 11), 3, 2, 1, 1, True),
]
TORCH_MAX = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
TORCH_AVG = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}


@pytest.mark.parametrize("case", POOL_CASES, ids=[c[0] for c in POOL_CASES])
def test_max_pool_matches_torch_nan_included(case, threads, cpu, executable):
    _, xs, k, s, pad, dilation, ceil_mode = case
    n = len(xs) - 2
    x = random(*xs, seed=5)
    x.reshape(-1)[::97] = np.nan
    got = run(executable, cpu, "max_pool", [x], kernel=(k,) * n, stride=(s,) * n,
              padding=pairs(pad, n), dilation=(dilation,) * n, ceil_mode=ceil_mode)
    want = TORCH_MAX[n](torch.from_numpy(x), k, s, pad, dilation=dilation,
                        ceil_mode=ceil_mode).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("include_pad", [True, False])
@pytest.mark.parametrize("case", [c for c in POOL_CASES if c[5] == 1],
                         ids=[c[0] for c in POOL_CASES if c[5] == 1])
def test_avg_pool_matches_torch(case, include_pad, cpu, executable):
    _, xs, k, s, pad, _, ceil_mode = case
    n = len(xs) - 2
    x = random(*xs, seed=6)
    got = run(executable, cpu, "avg_pool", [x], kernel=(k,) * n, stride=(s,) * n,
              padding=pairs(pad, n), ceil_mode=ceil_mode, count_include_pad=include_pad)
    want = TORCH_AVG[n](torch.from_numpy(x), k, s, pad, ceil_mode=ceil_mode,
                        count_include_pad=include_pad).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_max_pool_integers(cpu, executable):
    x = np.random.default_rng(7).integers(-100, 100, (4, 8, 31, 31)).astype(np.int32)
    got = run(executable, cpu, "max_pool", [x], kernel=(3, 3), stride=(2, 2),
              padding=(1, 1, 1, 1))
    want = F.max_pool2d(torch.from_numpy(x).double(), 3, 2, 1).numpy().astype(np.int32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("xs,out", [((8, 16, 13, 17), (4, 5)), ((2, 64, 7, 7), (1, 1)),
                                    ((2, 3, 5, 9, 6), (3, 4, 7)), ((4, 8, 50), (7,))])
def test_adaptive_pools_match_torch(xs, out, cpu, executable):
    x = random(*xs, seed=8)
    avg = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d, 3: F.adaptive_avg_pool3d}
    mx = {1: F.adaptive_max_pool1d, 2: F.adaptive_max_pool2d, 3: F.adaptive_max_pool3d}
    n = len(xs) - 2
    got = run(executable, cpu, "adaptive_avg_pool", [x], output_size=out)
    np.testing.assert_allclose(got, avg[n](torch.from_numpy(x), out).numpy(), rtol=1e-5,
                               atol=1e-6)
    got = run(executable, cpu, "adaptive_max_pool", [x], output_size=out)
    np.testing.assert_array_equal(got, mx[n](torch.from_numpy(x), out).numpy())
