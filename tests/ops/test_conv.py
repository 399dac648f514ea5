"""Convolution and pooling ops against torch.nn.functional on randomised configurations
(float64, tight tolerance), half-precision behaviour, and the errors bad inputs give.

Asymmetric padding has no torch equivalent, so the oracle passes torch the symmetric part
(``min(lo, hi)``, within torch's limits) and applies the rest with ``F.pad`` (pooling, conv)
or by cropping the full output (conv_transpose).
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from mskernel.errors import OpError
from mskernel.ir import GraphBuilder, bfloat16, float16, float64, tensor_type
from mskernel.ir.dtypes import round_to_bfloat16
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import assert_close

CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
CONV_TRANSPOSE = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
MAX_POOL = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
AVG_POOL = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}
ADAPTIVE_AVG = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d, 3: F.adaptive_avg_pool3d}
ADAPTIVE_MAX = {1: F.adaptive_max_pool1d, 2: F.adaptive_max_pool2d, 3: F.adaptive_max_pool3d}

SEEDS = range(36)


def run_op(op, *arrays, dtype=None, **attrs):
    b = GraphBuilder()
    inputs = [b.input(tensor_type(dtype or a.dtype, a.shape)) for a in arrays]
    return run_graph(b.build([b.op(op, *inputs, **attrs)]), arrays)[0]


def build(op, *types, **attrs):
    """Build one node on inputs of the given type strings, e.g. ``("f32", (1, 2, 5))``."""
    b = GraphBuilder()
    return b.op(op, *[b.input(tensor_type(dt, shape)) for dt, shape in types], **attrs)


def ints(values):
    return [int(v) for v in values]


def flat(pairs):
    """Per-dim (lo, hi) pairs as mskernel's padding attribute."""
    return [int(p) for pair in pairs for p in pair]


def torch_pad(x, pairs, value=0.0):
    """F.pad of the spatial dims (F.pad lists the last dim first)."""
    widths = [int(p) for lo, hi in reversed(pairs) for p in (lo, hi)]
    return F.pad(x, widths, value=value)


def split_padding(pairs, limits):
    """(torch's symmetric padding, the per-dim excess to apply by hand)."""
    sym = [min(lo, hi, lim) for (lo, hi), lim in zip(pairs, limits)]
    return sym, [(lo - m, hi - m) for (lo, hi), m in zip(pairs, sym)]


def random_window(rng, n, *, dilate=True):
    kernel = rng.integers(1, 4, n)
    stride = rng.integers(1, 4, n)
    dilation = rng.integers(1, 3, n) if dilate else np.ones(n, int)
    return kernel, stride, dilation, dilation * (kernel - 1) + 1


def spatial_for(rng, extents, pairs, minimum=(1, 1, 1)):
    """Sizes whose padded length fits the window and then some."""
    return [max(int(e - lo - hi + rng.integers(0, 5)), low)
            for e, (lo, hi), low in zip(extents, pairs, minimum)]


# ---------------------------------------------------------------------------------------------
# conv and conv_transpose
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_conv_matches_torch(seed):
    rng = np.random.default_rng(seed)
    n = 1 + seed % 3
    groups = int(rng.integers(1, 4))
    per_in, per_out, batch = rng.integers(1, 3), rng.integers(1, 3), rng.integers(0, 3)
    kernel, stride, dilation, extents = random_window(rng, n)
    pairs = rng.integers(0, 3, (n, 2)).tolist()
    x = rng.standard_normal((batch, groups * per_in, *spatial_for(rng, extents, pairs)))
    w = rng.standard_normal((groups * per_out, per_in, *kernel))

    ours = run_op("conv", x, w, stride=ints(stride), padding=flat(pairs),
                  dilation=ints(dilation), groups=groups)

    sym, excess = split_padding(pairs, [10] * n)
    expected = CONV[n](torch_pad(torch.from_numpy(x), excess), torch.from_numpy(w),
                       stride=ints(stride), padding=sym, dilation=ints(dilation), groups=groups)
    assert ours.shape == tuple(expected.shape)
    assert_close(ours, expected.numpy(), float64)


@pytest.mark.parametrize("seed", SEEDS)
def test_conv_transpose_matches_torch(seed):
    rng = np.random.default_rng(seed)
    n = 1 + seed % 3
    groups = int(rng.integers(1, 4))
    per_in, per_out, batch = rng.integers(1, 3), rng.integers(1, 3), rng.integers(0, 3)
    kernel, stride, dilation, extents = random_window(rng, n)
    output_padding = [int(rng.integers(0, max(s, d))) for s, d in zip(stride, dilation)]
    spatial = rng.integers(1, 5, n)
    full = (spatial - 1) * stride + extents + output_padding
    pairs = []
    for size in full:
        lo = int(rng.integers(0, min(3, size)))
        pairs.append((lo, int(rng.integers(0, min(3, size - lo)))))
    x = rng.standard_normal((batch, groups * per_in, *spatial))
    w = rng.standard_normal((groups * per_in, per_out, *kernel))

    ours = run_op("conv_transpose", x, w, stride=ints(stride), padding=flat(pairs),
                  output_padding=output_padding, dilation=ints(dilation), groups=groups)

    sym, excess = split_padding(pairs, [10] * n)
    torch_out = CONV_TRANSPOSE[n](torch.from_numpy(x), torch.from_numpy(w), stride=ints(stride),
                                  padding=sym, output_padding=output_padding,
                                  dilation=ints(dilation), groups=groups).numpy()
    crop = tuple(slice(lo, size - hi) for (lo, hi), size in zip(excess, torch_out.shape[2:]))
    expected = torch_out[(Ellipsis, *crop)]
    assert ours.shape == expected.shape
    assert_close(ours, expected, float64)


def test_conv_transpose_is_the_adjoint_of_conv():
    rng = np.random.default_rng(1)
    attrs = {"stride": [2, 3], "padding": [1, 0, 2, 1], "dilation": [1, 2], "groups": 2}
    x = rng.standard_normal((2, 4, 9, 11))
    w = rng.standard_normal((6, 2, 3, 2))
    y = run_op("conv", x, w, **attrs)
    g = rng.standard_normal(y.shape)
    # output_padding recovers the input positions the strided conv's last window skipped.
    back = run_op("conv_transpose", g, w, output_padding=[1, 2], **attrs)
    assert back.shape == x.shape
    np.testing.assert_allclose(np.vdot(y, g), np.vdot(x, back), rtol=1e-12)


@pytest.mark.parametrize("x_shape, w_shape, padding", [
    ((1, 2, 2), (1, 1, 3, 3), [2, 2, 2, 2]),
    ((2, 1, 3), (2, 1, 2, 1), [1, 1, 0, 0]),
    ((1, 3), (1, 2, 2), [2, 2]),
])
def test_conv_transpose_whose_padding_crops_the_whole_output_is_empty(x_shape, w_shape, padding):
    # PyTorch gives these empty results for an empty batch (and refuses other batches); the
    # result is empty whatever the batch.
    w = np.ones(w_shape)
    torch_shape = CONV_TRANSPOSE[len(x_shape) - 1](
        torch.ones((0,) + x_shape, dtype=torch.float64), torch.from_numpy(w),
        padding=padding[::2]).shape
    assert 0 in torch_shape[2:]
    for batch in (0, 2):
        ours = run_op("conv_transpose", np.ones((batch,) + x_shape), w, padding=padding)
        assert ours.shape == (batch,) + tuple(torch_shape[1:]) and ours.dtype == np.float64


def test_half_precision_conv_is_computed_in_float32_and_rounded():
    rng = np.random.default_rng(2)
    x = rng.uniform(-2, 2, (2, 3, 6, 6))
    w = rng.uniform(-2, 2, (4, 3, 3, 3))
    exact = F.conv2d(torch.from_numpy(x.astype(np.float16).astype(np.float64)),
                     torch.from_numpy(w.astype(np.float16).astype(np.float64))).numpy()
    ours = run_op("conv", x.astype(np.float16), w.astype(np.float16))
    assert ours.dtype == np.float16
    assert_close(ours, exact.astype(np.float16), float16)

    xb, wb = round_to_bfloat16(x.astype(np.float32)), round_to_bfloat16(w.astype(np.float32))
    exact = F.conv2d(torch.from_numpy(xb.astype(np.float64)),
                     torch.from_numpy(wb.astype(np.float64))).numpy()
    ours = run_op("conv", xb, wb, dtype="bf16")
    assert_close(ours, round_to_bfloat16(exact.astype(np.float32)), bfloat16)


# ---------------------------------------------------------------------------------------------
# max_pool and avg_pool
# ---------------------------------------------------------------------------------------------


def random_pool(rng, n, ceil_mode, *, dilate):
    """A pooling window, padding and input within what the torch oracle can express.

    In ceil mode the high padding is torch-sized (at most half the kernel) and no larger than
    the low one, so torch's "the last window starts inside the input or its low padding" rule
    sees the same low padding; its strides exceed 1.  Torch's 3-D pools refuse inputs smaller
    than the kernel.
    """
    kernel, stride, dilation, extents = random_window(rng, n, dilate=dilate)
    if ceil_mode:
        stride = rng.integers(2, 4, n)  # ceil_mode changes nothing at stride 1
        pairs = []
        for k in kernel:
            hi = int(rng.integers(0, k // 2 + 1))
            pairs.append((hi + int(rng.integers(0, 2)), hi))
    else:
        pairs = rng.integers(0, 3, (n, 2)).tolist()
    spatial = spatial_for(rng, extents, pairs, kernel if n == 3 else (1,) * n)
    return kernel, stride, dilation, pairs, spatial


@pytest.mark.parametrize("seed", SEEDS)
def test_max_pool_matches_torch(seed):
    rng = np.random.default_rng(seed)
    n, ceil_mode = 1 + seed % 3, bool(seed // 3 % 2)
    kernel, stride, dilation, pairs, spatial = random_pool(rng, n, ceil_mode, dilate=True)
    x = rng.standard_normal((int(rng.integers(0, 3)), 2, *spatial))
    # A stride of None means the kernel.
    stride_attr = None if seed % 5 == 0 else ints(stride)

    ours = run_op("max_pool", x, kernel=ints(kernel), stride=stride_attr, padding=flat(pairs),
                  dilation=ints(dilation), ceil_mode=ceil_mode)

    sym, excess = split_padding(pairs, [k // 2 for k in kernel])
    expected = MAX_POOL[n](torch_pad(torch.from_numpy(x), excess, -np.inf), ints(kernel),
                           stride_attr or ints(kernel), sym, ints(dilation), ceil_mode)
    assert ours.shape == tuple(expected.shape)
    assert_close(ours, expected.numpy(), float64)


@pytest.mark.parametrize("seed", SEEDS)
def test_max_pool_grad_matches_torch_autograd(seed):
    """max_pool's input gradient; every other seed has ties (three distinct values), where
    the first maximum of each window in row-major order takes the cotangent, as in PyTorch."""
    rng = np.random.default_rng(seed)
    n, ceil_mode = 1 + seed % 3, bool(seed // 3 % 2)
    kernel, stride, dilation, pairs, spatial = random_pool(rng, n, ceil_mode, dilate=True)
    shape = (int(rng.integers(0, 3)), 2, *spatial)
    x = rng.integers(0, 3, shape).astype(np.float64) if seed % 2 else rng.standard_normal(shape)
    attrs = dict(kernel=ints(kernel), stride=ints(stride), padding=flat(pairs),
                 dilation=ints(dilation), ceil_mode=ceil_mode)
    g = rng.standard_normal(run_op("max_pool", x, **attrs).shape)

    ours = run_op("max_pool_grad", x, g, **attrs)

    sym, excess = split_padding(pairs, [k // 2 for k in kernel])
    leaf = torch.from_numpy(x).requires_grad_()
    pooled = MAX_POOL[n](torch_pad(leaf, excess, -np.inf), ints(kernel), ints(stride), sym,
                         ints(dilation), ceil_mode)
    pooled.backward(torch.from_numpy(g))
    assert_close(ours, leaf.grad.numpy(), float64)


def test_max_pool_grad_checks_the_cotangent_shape():
    with pytest.raises(OpError, match="max_pool's output shape"):
        build("max_pool_grad", ("f32", (1, 2, 6)), ("f32", (1, 2, 4)), kernel=(2,))


@pytest.mark.parametrize("seed", SEEDS)
def test_avg_pool_matches_torch(seed):
    rng = np.random.default_rng(seed)
    n, ceil_mode, include = 1 + seed % 3, bool(seed // 3 % 2), bool(seed // 6 % 2)
    kernel, stride, _, pairs, spatial = random_pool(rng, n, ceil_mode, dilate=False)
    x = rng.standard_normal((int(rng.integers(0, 3)), 2, *spatial))

    ours = run_op("avg_pool", x, kernel=ints(kernel), stride=ints(stride), padding=flat(pairs),
                  ceil_mode=ceil_mode, count_include_pad=include)

    sym, excess = split_padding(pairs, [k // 2 for k in kernel])

    def pool(a):
        return AVG_POOL[n](torch_pad(torch.from_numpy(a), excess), ints(kernel), ints(stride),
                           sym, ceil_mode, include).numpy()

    if include:
        expected = pool(x)
    else:
        # The hand-padded zeros must not count: divide by the pooled mask of real elements.
        share = pool(np.ones_like(x))
        expected = np.where(share > 0, pool(x) / np.where(share > 0, share, 1), 0.0)
    assert ours.shape == expected.shape
    assert_close(ours, expected, float64)


def test_ceil_mode_drops_a_last_window_starting_in_high_padding():
    x = np.arange(4, dtype=np.float64).reshape(1, 1, 4)
    attrs = {"kernel": [2], "stride": [2], "padding": [0, 1], "ceil_mode": True}
    np.testing.assert_array_equal(run_op("max_pool", x, **attrs), [[[1.0, 3.0]]])
    np.testing.assert_array_equal(run_op("avg_pool", x, **attrs), [[[0.5, 2.5]]])
    attrs["padding"] = [1, 0]  # the same last window now starts inside the input
    np.testing.assert_array_equal(run_op("max_pool", x, **attrs), [[[0.0, 2.0, 3.0]]])
    np.testing.assert_array_equal(run_op("avg_pool", x, **attrs), [[[0.0, 1.5, 3.0]]])


def test_windows_wholly_in_padding_give_the_identity_of_the_reduction():
    x = np.ones((1, 1, 2))
    attrs = {"kernel": [1], "padding": [1, 0]}
    np.testing.assert_array_equal(run_op("max_pool", x, **attrs), [[[-np.inf, 1.0, 1.0]]])
    np.testing.assert_array_equal(
        run_op("avg_pool", x, count_include_pad=False, **attrs), [[[0.0, 1.0, 1.0]]])


@pytest.mark.parametrize("dt", [np.int32, np.uint8, np.float16])
def test_max_pool_pads_with_the_lowest_value_of_the_dtype(dt):
    rng = np.random.default_rng(3)
    low = 0 if dt == np.uint8 else -100
    x = rng.integers(low, 100, (2, 3, 5, 6)).astype(dt)
    ours = run_op("max_pool", x, kernel=[3, 2], stride=[2, 2], padding=[1, 1, 1, 1],
                  ceil_mode=True)
    expected = F.max_pool2d(torch.from_numpy(x.astype(np.float64)), [3, 2], [2, 2], [1, 1],
                            ceil_mode=True).numpy()
    assert ours.dtype == dt
    np.testing.assert_array_equal(ours, expected.astype(dt))


# ---------------------------------------------------------------------------------------------
# adaptive pooling
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op, oracle", [("adaptive_avg_pool", ADAPTIVE_AVG),
                                        ("adaptive_max_pool", ADAPTIVE_MAX)])
@pytest.mark.parametrize("seed", range(18))
def test_adaptive_pool_matches_torch(op, oracle, seed):
    rng = np.random.default_rng(seed)
    n = 1 + seed % 3
    spatial = rng.integers(1, 8, n)
    output_size = ints(rng.integers(1, 9, n))
    x = rng.standard_normal((int(rng.integers(0, 3)), 3, *spatial))
    ours = run_op(op, x, output_size=output_size)
    expected = oracle[n](torch.from_numpy(x), output_size).numpy()
    assert ours.shape == expected.shape
    assert_close(ours, expected, float64)


def test_adaptive_max_pool_keeps_integer_dtypes():
    x = np.random.default_rng(4).integers(-50, 50, (1, 2, 7, 5)).astype(np.int32)
    ours = run_op("adaptive_max_pool", x, output_size=[3, 2])
    expected = F.adaptive_max_pool2d(torch.from_numpy(x.astype(np.float64)), [3, 2]).numpy()
    assert ours.dtype == np.int32
    np.testing.assert_array_equal(ours, expected.astype(np.int32))


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------

F32_X = ("f32", (2, 6, 8, 8))


@pytest.mark.parametrize("types, attrs, message", [
    ((("f32", (6, 8)), ("f32", (4, 6, 3))), {},
     r"x must have rank 3, 4 or 5 \(\[N, C_in, \*spatial\].*f32\[6,8\]"),
    ((F32_X, ("f32", (4, 6, 3))), {}, r"w must have rank 4 \(\[C_out, C_in/groups"),
    ((F32_X, ("f32", (4, 4, 3, 3))), {"groups": 2},
     r"x has C_in=6 channels but w \(shape \[4, 4, 3, 3\]\) takes 4 per group with groups=2"),
    ((F32_X, ("f32", (4, 2, 3, 3))), {"groups": 4},
     r"C_in=6 channels are not divisible by groups=4"),
    ((F32_X, ("f32", (5, 3, 3, 3))), {"groups": 2}, r"C_out=5 is not divisible by groups=2"),
    ((F32_X, ("f32", (4, 6, 3, 3))), {"groups": 0}, r"groups must be positive, got 0"),
    ((F32_X, ("f64", (4, 6, 3, 3))), {}, r"same dtype, got float32, float64"),
    ((("i32", (2, 6, 8, 8)), ("i32", (4, 6, 3, 3))), {}, r"floating-point"),
    ((F32_X, ("f32", (4, 6, 3, 3))), {"stride": [1]},
     r"stride needs 2 value\(s\), one per spatial dim, got \[1\]"),
    ((F32_X, ("f32", (4, 6, 3, 3))), {"stride": [1, 0]}, r"stride must be positive, got \[1, 0\]"),
    ((F32_X, ("f32", (4, 6, 3, 3))), {"dilation": [0, 1]}, r"dilation must be positive"),
    ((F32_X, ("f32", (4, 6, 3, 3))), {"padding": [1, 1]},
     r"padding needs 4 values, a \(lo, hi\) pair for each of the 2 spatial dim"),
    ((F32_X, ("f32", (4, 6, 3, 3))), {"padding": [0, -1, 0, 0]}, r"padding must be non-negative"),
    ((F32_X, ("f32", (4, 6, 3, 5))), {"dilation": [1, 2]},
     r"spatial dim 1 spans 9 position\(s\), more than the padded input size 8"),
    ((F32_X, ("f32", (4, 6, 3, 0))), {}, r"kernel \(the spatial dims of w\) must be positive"),
    ((("f32", (2, 6, 0, 8)), ("f32", (4, 6, 3, 3))), {"padding": [2, 2, 0, 0]},
     r"spatial dims of x must be non-empty"),
])
def test_conv_errors(types, attrs, message):
    with pytest.raises(OpError, match=r"op 'conv'.*" + message):
        build("conv", *types, **attrs)


@pytest.mark.parametrize("types, attrs, message", [
    ((F32_X, ("f32", (4, 3, 3, 3))), {},
     r"x has C_in=6 channels but w \(shape \[4, 3, 3, 3\], laid out \[C_in, C_out/groups"),
    ((F32_X, ("f32", (6, 3, 3, 3))), {"groups": 4}, r"not divisible by groups=4"),
    ((F32_X, ("f32", (6, 3, 3, 3))), {"stride": [2, 2], "output_padding": [2, 0]},
     r"output_padding must be smaller than stride or dilation.*\[2, 0\] with stride \[2, 2\]"),
    ((F32_X, ("f32", (6, 3, 3, 3))), {"output_padding": [0]}, r"output_padding needs 2 value"),
    ((("f32", (1, 6, 1, 1)), ("f32", (6, 3, 1, 1))), {"padding": [1, 1, 0, 0]},
     r"padding 1 \+ 1 along spatial dim 0 crops more than the whole output of size 1"),
])
def test_conv_transpose_errors(types, attrs, message):
    with pytest.raises(OpError, match=r"op 'conv_transpose'.*" + message):
        build("conv_transpose", *types, **attrs)


@pytest.mark.parametrize("op, types, attrs, message", [
    ("max_pool", ("f32", (2, 3)), {"kernel": [2]}, r"x must have rank 3, 4 or 5"),
    ("max_pool", F32_X, {"kernel": [2]}, r"kernel needs 2 value\(s\), one per spatial dim"),
    ("max_pool", F32_X, {"kernel": [2, 0]}, r"kernel must be positive, got \[2, 0\]"),
    ("max_pool", ("bool", (1, 1, 4)), {"kernel": [2]}, r"expects a real numeric input"),
    ("max_pool", F32_X, {"kernel": [9, 2]}, r"spans 9 position\(s\), more than the padded input"),
    ("max_pool", F32_X, {"kernel": [2, 2], "stride": [0, 1]}, r"stride must be positive"),
    ("avg_pool", ("i32", (1, 1, 4)), {"kernel": [2]}, r"expects a floating-point input"),
    ("avg_pool", F32_X, {"kernel": [2, 2], "padding": [1, 1, 1]}, r"padding needs 4 values"),
    ("adaptive_avg_pool", F32_X, {"output_size": [2]}, r"output_size needs 2 value\(s\)"),
    ("adaptive_max_pool", F32_X, {"output_size": [2, 0]}, r"output_size must be positive"),
    ("adaptive_avg_pool", ("f32", (1, 1, 0)), {"output_size": [1]},
     r"spatial dims of x must be non-empty"),
])
def test_pool_errors(op, types, attrs, message):
    with pytest.raises(OpError, match=rf"op '{op}'.*" + message):
        build(op, types, **attrs)


def test_per_dim_attributes_must_be_lists():
    with pytest.raises(OpError, match=r"attribute 'stride' expects ints\?, got 2"):
        build("conv", F32_X, ("f32", (4, 6, 3, 3)), stride=2)
