"""The functional API (``mskernel.ops.<name>``) against NumPy and PyTorch on random inputs:
elementwise ops, promotion, reductions, linear algebra, nn functions, shape and indexing
ops, creation; error messages; traced functions giving eager's results."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as tnf

import mskernel
import mskernel.ops as ops
from mskernel.errors import OpError
from mskernel.frontend import functional
from mskernel.frontend.trace import trace_function
from mskernel.ir.dtypes import dtype as to_dtype
from mskernel.ir.types import TensorType
from mskernel.runtime import compile_graph
from mskernel.testing import assert_close, random_array

Tensor = mskernel.Tensor


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def check(result, expected, dtype=None, **tol) -> None:
    """``result`` has ``dtype`` (NumPy's dtype of ``expected`` by default) and its values."""
    expected = np.asarray(expected)
    dt = to_dtype(dtype if dtype is not None else expected.dtype)
    assert result.dtype is dt, f"dtype {result.dtype}, expected {dt}"
    assert result.shape == expected.shape
    assert_close(result.numpy(), expected, dt, **tol)


def test_every_name_resolves_through_mskernel_ops():
    assert len(functional.__all__) > 150
    for name in functional.__all__:
        assert getattr(ops, name) is getattr(functional, name), name


# -- elementwise ------------------------------------------------------------------------------

UNARY = [  # name, NumPy function, input range
    ("negative", np.negative, (-3, 3)), ("abs", np.abs, (-3, 3)), ("sign", np.sign, (-3, 3)),
    ("square", np.square, (-3, 3)), ("reciprocal", np.reciprocal, (0.5, 3)),
    ("sqrt", np.sqrt, (0, 4)), ("rsqrt", lambda x: 1 / np.sqrt(x), (0.5, 4)),
    ("exp", np.exp, (-3, 3)), ("expm1", np.expm1, (-1, 1)), ("log", np.log, (0.1, 4)),
    ("log1p", np.log1p, (-0.5, 3)), ("log2", np.log2, (0.1, 4)), ("log10", np.log10, (0.1, 4)),
    ("sin", np.sin, (-3, 3)), ("cos", np.cos, (-3, 3)), ("tan", np.tan, (-1, 1)),
    ("arcsin", np.arcsin, (-0.9, 0.9)), ("arccos", np.arccos, (-0.9, 0.9)),
    ("arctan", np.arctan, (-3, 3)), ("sinh", np.sinh, (-2, 2)), ("cosh", np.cosh, (-2, 2)),
    ("tanh", np.tanh, (-3, 3)), ("arcsinh", np.arcsinh, (-3, 3)),
    ("arccosh", np.arccosh, (1.1, 4)), ("arctanh", np.arctanh, (-0.9, 0.9)),
    ("erf", lambda x: torch.special.erf(torch.from_numpy(x)).numpy(), (-3, 3)),
    ("erfc", lambda x: torch.special.erfc(torch.from_numpy(x)).numpy(), (-3, 3)),
    ("lgamma", lambda x: torch.lgamma(torch.from_numpy(x)).numpy(), (0.1, 5)),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), (-5, 5)),
    ("softplus", lambda x: np.log1p(np.exp(x)), (-5, 5)),
    ("relu", lambda x: np.maximum(x, 0), (-3, 3)),
    ("silu", lambda x: x / (1 + np.exp(-x)), (-5, 5)),
    ("floor", np.floor, (-3, 3)), ("ceil", np.ceil, (-3, 3)), ("trunc", np.trunc, (-3, 3)),
    ("round", np.round, (-3, 3)),
]
FLOAT_ONLY = {"reciprocal", "sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "log2", "log10",
              "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
              "arcsinh", "arccosh", "arctanh", "erf", "erfc", "lgamma", "sigmoid", "softplus",
              "silu"}


@pytest.mark.parametrize("name, reference, bounds", UNARY, ids=[u[0] for u in UNARY])
def test_unary_matches_numpy(rng, name, reference, bounds):
    fn = getattr(ops, name)
    for dt in ("float32", "float64"):
        x = random_array(rng, (3, 4), dt, *bounds)
        check(fn(Tensor(x)), reference(x.astype(np.float64)).astype(dt), dt)
    ints = rng.integers(int(np.ceil(bounds[0])), int(np.floor(bounds[1])) + 1, (5,))
    ints = ints.astype(np.int32)
    result = fn(Tensor(ints))
    if name in FLOAT_ONLY:  # integer inputs compute in float32, as PyTorch
        check(result, reference(ints.astype(np.float64)), "float32")
    else:
        check(result, reference(ints).astype(np.int32), "int32")


def test_float_only_math_promotes_bool_and_python_scalars():
    check(ops.exp(Tensor([True, False])), np.exp([1.0, 0.0]), "float32")
    check(ops.sqrt(4), np.float32(2.0), "float32")
    check(ops.sigmoid(np.zeros(2, np.float16)), np.full(2, 0.5), "float16")


def test_gelu_both_forms_match_torch(rng):
    x = random_array(rng, (10,), "float32", -4, 4)
    exact = tnf.gelu(torch.from_numpy(x)).numpy()
    tanh = tnf.gelu(torch.from_numpy(x), approximate="tanh").numpy()
    check(ops.gelu(Tensor(x)), exact)
    check(ops.gelu(Tensor(x), approximate="tanh"), tanh)
    check(ops.gelu(Tensor(x), approximate=True), tanh)


def test_round_to_decimals_and_classification(rng):
    x = np.array([1.234, -2.567, np.nan, np.inf], np.float64)
    check(ops.round(Tensor(x), 2), np.round(x, 2))
    check(ops.isnan(Tensor(x)), np.isnan(x))
    check(ops.isinf(Tensor(x)), np.isinf(x))
    check(ops.isfinite(Tensor(x)), np.isfinite(x))
    ints = np.array([1, 2], np.int16)
    check(ops.isnan(Tensor(ints)), np.isnan(ints))
    check(ops.isfinite(Tensor(ints)), np.isfinite(ints))


BINARY = [  # name, NumPy function, dtypes tried, right-hand range
    ("add", np.add, ("float32", "int32", "bool", "complex64"), (-3, 3)),
    ("subtract", np.subtract, ("float32", "int8", "float64"), (-3, 3)),
    ("multiply", np.multiply, ("float32", "int64", "bool", "complex128"), (-3, 3)),
    ("true_divide", np.true_divide, ("float32", "float64"), (0.5, 3)),
    ("floor_divide", np.floor_divide, ("float32", "int32"), (1, 3)),
    ("remainder", np.remainder, ("float64", "int32"), (1, 3)),
    ("power", np.power, ("float32", "int32"), (0, 3)),
    ("maximum", np.maximum, ("float32", "int16", "bool"), (-3, 3)),
    ("minimum", np.minimum, ("float32", "uint8", "bool"), (-3, 3)),
    ("arctan2", np.arctan2, ("float32", "float64"), (-3, 3)),
    ("equal", np.equal, ("float32", "int32", "bool"), (-2, 2)),
    ("not_equal", np.not_equal, ("int32", "bool"), (-2, 2)),
    ("less", np.less, ("float32", "int32", "bool"), (-2, 2)),
    ("less_equal", np.less_equal, ("float32", "bool"), (-2, 2)),
    ("greater", np.greater, ("float32", "uint16", "bool"), (-2, 2)),
    ("greater_equal", np.greater_equal, ("int64", "bool"), (-2, 2)),
    ("logical_and", np.logical_and, ("bool", "int32", "float32"), (-1, 1)),
    ("logical_or", np.logical_or, ("bool", "int32"), (-1, 1)),
    ("logical_xor", np.logical_xor, ("bool", "float32"), (-1, 1)),
    ("bitwise_and", np.bitwise_and, ("int32", "uint8", "bool"), (0, 9)),
    ("bitwise_or", np.bitwise_or, ("int16", "bool"), (0, 9)),
    ("bitwise_xor", np.bitwise_xor, ("int64", "bool"), (0, 9)),
    ("left_shift", np.left_shift, ("int32", "uint8"), (0, 3)),
    ("right_shift", np.right_shift, ("int32", "int8"), (0, 3)),
]


@pytest.mark.parametrize("name, reference, dtypes, bounds", BINARY, ids=[b[0] for b in BINARY])
def test_binary_matches_numpy_with_broadcasting(rng, name, reference, dtypes, bounds):
    fn = getattr(ops, name)
    for dt in dtypes:
        x = random_array(rng, (3, 1, 4), dt, -3, 3)
        y = random_array(rng, (5, 1), dt, *bounds)
        if name == "power":
            x = np.abs(x)
        check(fn(Tensor(x), Tensor(y)), reference(x, y))


def test_true_division_of_integers_gives_float32():
    check(ops.true_divide(Tensor([1, 7]), 2), np.array([0.5, 3.5]), "float32")
    check(ops.divide(Tensor([True]), Tensor([True])), np.ones(1), "float32")


def test_where_clip_and_cast(rng):
    x = random_array(rng, (4, 3), "float32")
    y = random_array(rng, (3,), "float64")
    cond = x > 0
    check(ops.where(Tensor(cond), Tensor(x), Tensor(y)), np.where(cond, x, y))
    check(ops.where(Tensor(x), 1, 0), np.where(x != 0, 1, 0))  # a non-bool condition
    check(ops.clip(Tensor(x), -0.5, 0.5), np.clip(x, -0.5, 0.5))
    check(ops.clip(Tensor(x), max=0.1), np.clip(x, None, 0.1))
    check(ops.clip(Tensor(x), Tensor(y.astype(np.float32)), 1.0),
          np.minimum(np.maximum(x, y.astype(np.float32)), 1.0))
    ints = np.arange(-5, 5, dtype=np.int8)
    check(ops.clip(Tensor(ints), -2, 3), np.clip(ints, -2, 3))
    check(ops.clip(Tensor(ints), -2.5, 3), np.clip(ints.astype(np.float32), -2.5, 3))
    check(ops.cast(Tensor(x), "int32"), x.astype(np.int32))
    check(ops.astype(Tensor(x), mskernel.float16), x.astype(np.float16))


# -- promotion --------------------------------------------------------------------------------

NUMPY_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "float16", "float32", "float64", "complex64", "complex128"]


def test_tensor_tensor_promotion_is_numpy_2s_table():
    for a in NUMPY_DTYPES:
        for b in NUMPY_DTYPES:
            result = ops.add(Tensor(np.zeros(1, a)), Tensor(np.zeros(1, b)))
            expected = np.result_type(np.dtype(a), np.dtype(b))
            assert result.dtype is to_dtype(expected), (a, b, result.dtype)


def _weak_expected(dt: str, scalar) -> str:
    """NumPy 2's result (NEP 50: Python scalars are weak), except that an integer or bool
    tensor meeting a Python float or complex gives the default float32/complex64 (JAX)."""
    expected = np.result_type(np.zeros(1, dt), scalar)
    if np.dtype(dt).kind in "biu" and expected.kind in "fc":
        return "float32" if expected.kind == "f" else "complex64"
    return expected.name


WEAK_CASES = [(dt, s) for dt in NUMPY_DTYPES for s in (True, 2, 1.5, 1j)]


@pytest.mark.parametrize("dt, scalar", WEAK_CASES)
def test_python_scalars_are_weak(dt, scalar):
    x = Tensor(np.ones(2, dt))
    assert ops.add(x, scalar).dtype.name == _weak_expected(dt, scalar)
    assert ops.add(scalar, x).dtype.name == _weak_expected(dt, scalar)


def test_bfloat16_promotes_as_jax():
    bf = Tensor([1.0, 2.0], "bfloat16")
    assert ops.add(bf, Tensor([1], "int32")).dtype is mskernel.bfloat16
    assert ops.add(bf, Tensor([1.0], "float16")).dtype is mskernel.float32
    assert ops.add(bf, Tensor([1.0], "float64")).dtype is mskernel.float64
    assert ops.multiply(bf, 2.5).dtype is mskernel.bfloat16
    assert ops.exp(Tensor([1], "int8")).dtype is mskernel.float32


def test_numpy_arrays_and_scalars_are_strong():
    x = Tensor(np.ones(2, np.float32))
    assert ops.add(x, np.float64(1.0)).dtype is mskernel.float64
    assert ops.add(x, np.ones(2, np.int64)).dtype is mskernel.float64  # NumPy: f32 + i64 = f64
    assert ops.add(Tensor(np.ones(2, np.int8)), 100).dtype is mskernel.int8


# -- reductions -------------------------------------------------------------------------------

REDUCTIONS = [  # name, NumPy function, dtypes, expected dtype rule
    ("sum", np.sum, ("float32", "int32", "bool", "uint8")),
    ("prod", np.prod, ("float64", "int16", "bool")),
    ("mean", np.mean, ("float32", "int32", "bool")),
    ("amax", np.max, ("float32", "int32", "bool")),
    ("amin", np.min, ("float64", "uint8", "bool")),
    ("all", np.all, ("bool", "int32", "float32")),
    ("any", np.any, ("bool", "float32")),
    ("logsumexp", lambda x, axis, keepdims: np.log(np.sum(np.exp(x), axis=axis,
                                                          keepdims=keepdims)), ("float32",)),
]


@pytest.mark.parametrize("name, reference, dtypes", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
@pytest.mark.parametrize("axis", [None, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(rng, name, reference, dtypes, axis, keepdims):
    fn = getattr(ops, name)
    for dt in dtypes:
        x = random_array(rng, (2, 3, 4), dt, 0 if name == "prod" else -2, 2)
        expected = np.asarray(reference(x.astype(np.float64) if name == "logsumexp" else x,
                                        axis=axis, keepdims=keepdims))
        if name in ("mean", "logsumexp") and dt in ("int32", "bool", "float32"):
            expected = expected.astype(np.float32)  # float32 for integer inputs (PyTorch)
        check(fn(Tensor(x), axis, keepdims), expected)


@pytest.mark.parametrize("ddof", [0, 1])
def test_var_and_std_with_ddof_and_correction(rng, ddof):
    x = random_array(rng, (4, 5), "float64")
    check(ops.var(Tensor(x), axis=0, ddof=ddof), np.var(x, axis=0, ddof=ddof))
    check(ops.std(Tensor(x), 1, keepdims=True, correction=ddof),
          np.std(x, axis=1, ddof=ddof, keepdims=True))
    ints = np.arange(6, dtype=np.int32)
    check(ops.var(Tensor(ints), ddof=ddof), np.var(ints, ddof=ddof).astype(np.float32))


def test_arg_reductions(rng):
    x = random_array(rng, (3, 5), "float32")
    for name in ("argmax", "argmin"):
        fn = getattr(ops, name)
        check(fn(Tensor(x)), getattr(np, name)(x))
        check(fn(Tensor(x), axis=1, keepdims=True), getattr(np, name)(x, axis=1, keepdims=True))
    mask = np.array([False, True, True])
    check(ops.argmax(Tensor(mask)), np.argmax(mask))


def test_scans(rng):
    x = random_array(rng, (3, 4), "int8")
    check(ops.cumsum(Tensor(x)), np.cumsum(x))  # flattened, accumulated in int64
    check(ops.cumsum(Tensor(x), 1), np.cumsum(x, axis=1))
    check(ops.cumprod(Tensor(x), 0), np.cumprod(x, axis=0))
    f = random_array(rng, (5,), "float32")
    check(ops.cumsum(Tensor(f), 0, reverse=True), np.cumsum(f[::-1])[::-1])
    check(ops.cumsum(Tensor(f), 0, exclusive=True), np.concatenate([[0], np.cumsum(f)[:-1]]),
          "float32")
    check(ops.cummax(Tensor(f), 0), np.maximum.accumulate(f))
    check(ops.cummin(Tensor(f), 0), np.minimum.accumulate(f))


def test_max_and_min_return_values_and_indices_as_mindspore(rng):
    x = rng.integers(0, 5, (4, 6)).astype(np.float32)
    values, indices = ops.max(Tensor(x), axis=1)
    check(values, x.max(1))
    check(indices, x.argmax(1))
    values, indices = ops.min(Tensor(x), 0, keepdims=True)
    check(values, x.min(0, keepdims=True))
    check(indices, x.argmin(0)[None])
    check(ops.max(Tensor(x))[1], x.argmax())
    check(Tensor(x).max(axis=1), x.max(1))  # the Tensor method and amax: values only
    check(ops.amin(Tensor(x), 1), x.min(1))


def test_sorting(rng):
    x = rng.integers(0, 5, (4, 6)).astype(np.float32)
    values, indices = ops.sort(Tensor(x))
    check(values, np.sort(x, kind="stable"))
    check(indices, np.argsort(x, kind="stable"))
    check(ops.sort(Tensor(x), axis=None)[0], np.sort(x, axis=None))
    check(ops.argsort(Tensor(x), axis=0), np.argsort(x, axis=0, kind="stable"))
    check(ops.sort(Tensor(x), descending=True)[0], -np.sort(-x))
    values, indices = ops.topk(Tensor(x), 3)
    tv, ti = torch.topk(torch.from_numpy(x), 3)
    check(values, tv.numpy())
    np.testing.assert_array_equal(np.take_along_axis(x, indices.numpy(), -1), tv.numpy())


# -- linear algebra and nn --------------------------------------------------------------------


def test_matmul_dot_outer_einsum(rng):
    a = random_array(rng, (2, 3, 4), "float32")
    b = random_array(rng, (4, 5), "float32")
    c = random_array(rng, (6, 4, 2), "float64")
    v = random_array(rng, (4,), "float32")
    check(ops.matmul(Tensor(a), Tensor(b)), a @ b)
    check(ops.matmul(Tensor(v), Tensor(b)), v @ b)
    check(ops.dot(Tensor(a), Tensor(c)), np.dot(a, c))  # the N-d case differs from matmul
    check(ops.dot(Tensor(a), Tensor(v)), np.dot(a, v))
    check(ops.dot(2, Tensor(v)), 2 * v)
    check(ops.outer(Tensor(v), Tensor(v)), np.outer(v, v))
    check(ops.einsum("bij,jk->bik", Tensor(a), Tensor(b)), np.einsum("bij,jk->bik", a, b))
    check(ops.einsum("ii", np.eye(3, dtype=np.float32)), np.float32(3.0))
    check(ops.einsum("i,i->", [Tensor(v), Tensor(v)]), np.dot(v, v))


def test_softmax_family(rng):
    x = random_array(rng, (3, 5), "float32", -5, 5)
    tx = torch.from_numpy(x)
    check(ops.softmax(Tensor(x)), torch.softmax(tx, -1).numpy())
    check(ops.softmax(Tensor(x), axis=0), torch.softmax(tx, 0).numpy())
    check(ops.log_softmax(Tensor(x), 1), torch.log_softmax(tx, 1).numpy())


def test_normalisations_match_torch(rng):
    x = random_array(rng, (4, 6, 5), "float32")
    w, b = random_array(rng, (6,), "float32"), random_array(rng, (6,), "float32")
    mean, var = random_array(rng, (6,), "float32"), random_array(rng, (6,), "float32", 0.5, 2)
    tx, tw, tb = (torch.from_numpy(a) for a in (x, w, b))
    tm, tv = torch.from_numpy(mean), torch.from_numpy(var)
    check(ops.batch_norm(Tensor(x), Tensor(mean), Tensor(var), Tensor(w), Tensor(b)),
          tnf.batch_norm(tx, tm, tv, tw, tb).numpy(), atol=1e-5)
    check(ops.batch_norm(Tensor(x), training=True),
          tnf.batch_norm(tx, None, None, training=True).numpy(), atol=1e-5)
    ln_w, ln_b = random_array(rng, (6, 5), "float32"), random_array(rng, (6, 5), "float32")
    check(ops.layer_norm(Tensor(x), (6, 5), Tensor(ln_w), Tensor(ln_b)),
          tnf.layer_norm(tx, (6, 5), torch.from_numpy(ln_w), torch.from_numpy(ln_b)).numpy(),
          atol=1e-5)
    check(ops.layer_norm(Tensor(x), 5), tnf.layer_norm(tx, (5,)).numpy(), atol=1e-5)
    check(ops.group_norm(Tensor(x), 3, Tensor(w), Tensor(b)),
          tnf.group_norm(tx, 3, tw, tb).numpy(), atol=1e-5)
    with pytest.raises(ValueError, match="trailing dims"):
        ops.layer_norm(Tensor(x), (4, 5))
    with pytest.raises(ValueError, match="running mean"):
        ops.batch_norm(Tensor(x))


CONVS = [  # n, kwargs
    (1, {}), (1, {"stride": 2, "padding": 1, "dilation": 2}), (1, {"padding": "same"}),
    (2, {"stride": (2, 1), "padding": (1, 0)}), (2, {"padding": "same", "dilation": 2}),
    (2, {"groups": 2, "padding": "valid"}), (3, {"stride": 2, "padding": 1}),
]


@pytest.mark.parametrize("n, kwargs", CONVS)
def test_conv_matches_torch(rng, n, kwargs):
    x = random_array(rng, (2, 4) + (7, 6, 5)[:n], "float32")
    groups = kwargs.get("groups", 1)
    w = random_array(rng, (6, 4 // groups) + (3, 2, 3)[:n], "float32")
    b = random_array(rng, (6,), "float32")
    fn, ref = getattr(ops, f"conv{n}d"), getattr(tnf, f"conv{n}d")
    expected = ref(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), **kwargs)
    check(fn(Tensor(x), Tensor(w), Tensor(b), **kwargs), expected.numpy(), atol=1e-5)


def test_conv_same_padding_with_stride_and_explicit_pairs(rng):
    x = random_array(rng, (1, 2, 7, 8), "float32")
    w = random_array(rng, (3, 2, 3, 4), "float32")
    same = ops.conv2d(Tensor(x), Tensor(w), stride=2, padding="same")
    assert same.shape == (1, 3, 4, 4)  # ceil(size / stride), TensorFlow's SAME
    # total padding: rows (4-1)*2+3-7 = 2 -> (1, 1); columns (4-1)*2+4-8 = 2 -> (1, 1)
    padded = tnf.pad(torch.from_numpy(x), (1, 1, 1, 1))
    expected = tnf.conv2d(padded, torch.from_numpy(w), stride=2).numpy()
    check(same, expected, atol=1e-5)
    pairs = ops.conv2d(Tensor(x), Tensor(w), padding=((1, 1), (1, 1)), stride=2)
    check(pairs, expected, atol=1e-5)
    rows, taps = x[:, :, 0], w[:, :, 0]
    uneven = ops.conv1d(Tensor(rows), Tensor(taps), padding=((0, 2),))
    expected = tnf.conv1d(tnf.pad(torch.from_numpy(rows), (0, 2)), torch.from_numpy(taps))
    check(uneven, expected.numpy(), atol=1e-5)


def test_conv_checks_the_rank_and_promotes_integers():
    with pytest.raises(ValueError, match=r"conv2d expects x of shape \[N, C, H, W\]"):
        ops.conv2d(np.ones((1, 2, 5), np.float32), np.ones((1, 2, 3, 3), np.float32))
    y = ops.conv1d(np.ones((1, 1, 4), np.int32), np.ones((1, 1, 2), np.int32))
    check(y, np.full((1, 1, 3), 2.0), "float32")


@pytest.mark.parametrize("n", [1, 2, 3])
def test_conv_transpose_matches_torch(rng, n):
    x = random_array(rng, (2, 4) + (5, 4, 3)[:n], "float32")
    w = random_array(rng, (4, 3) + (3, 2, 3)[:n], "float32")
    b = random_array(rng, (6,), "float32")
    kwargs = {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}
    fn, ref = getattr(ops, f"conv_transpose{n}d"), getattr(tnf, f"conv_transpose{n}d")
    expected = ref(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), **kwargs)
    check(fn(Tensor(x), Tensor(w), Tensor(b), **kwargs), expected.numpy(), atol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_pooling_matches_torch(rng, n):
    x = random_array(rng, (2, 3) + (7, 6, 5)[:n], "float32")
    tx = torch.from_numpy(x)
    pool = {"kernel_size": 3, "stride": 2, "padding": 1}
    check(getattr(ops, f"max_pool{n}d")(Tensor(x), ceil_mode=True, **pool),
          getattr(tnf, f"max_pool{n}d")(tx, ceil_mode=True, **pool).numpy())
    check(getattr(ops, f"avg_pool{n}d")(Tensor(x), count_include_pad=False, **pool),
          getattr(tnf, f"avg_pool{n}d")(tx, count_include_pad=False, **pool).numpy())
    check(getattr(ops, f"max_pool{n}d")(Tensor(x), 2), getattr(tnf, f"max_pool{n}d")(tx, 2).numpy())
    size = (3, 2, 4)[:n]
    check(getattr(ops, f"adaptive_avg_pool{n}d")(Tensor(x), size),
          getattr(tnf, f"adaptive_avg_pool{n}d")(tx, size).numpy())
    check(getattr(ops, f"adaptive_max_pool{n}d")(Tensor(x), size),
          getattr(tnf, f"adaptive_max_pool{n}d")(tx, size).numpy())


def test_adaptive_pool_none_keeps_a_dim(rng):
    x = random_array(rng, (1, 2, 6, 5), "float32")
    out = ops.adaptive_avg_pool2d(Tensor(x), (3, None))
    check(out, tnf.adaptive_avg_pool2d(torch.from_numpy(x), (3, None)).numpy())


# -- shape ops --------------------------------------------------------------------------------


def test_shape_ops_match_numpy(rng):
    x = random_array(rng, (2, 3, 4), "float32")
    t = Tensor(x)
    check(ops.reshape(t, (4, -1)), x.reshape(4, -1))
    check(ops.transpose(t), x.transpose())
    check(ops.transpose(t, (1, 0, 2)), x.transpose(1, 0, 2))
    check(ops.swapaxes(t, 0, -1), np.swapaxes(x, 0, -1))
    check(ops.moveaxis(t, 0, -1), np.moveaxis(x, 0, -1))
    check(ops.moveaxis(t, (0, 1), (2, 0)), np.moveaxis(x, (0, 1), (2, 0)))
    check(ops.expand_dims(t, (0, -1)), np.expand_dims(x, (0, -1)))
    check(ops.unsqueeze(t, 1), x[:, None])
    check(ops.squeeze(ops.reshape(t, (1, 2, 1, 12))), x.reshape(2, 12))
    check(ops.squeeze(ops.reshape(t, (1, 24, 1)), axis=-1), x.reshape(1, 24))
    check(ops.broadcast_to(Tensor(x[:, :1]), (5, 2, 3, 4)), np.broadcast_to(x[:, :1], (5, 2, 3, 4)))
    check(ops.flatten(t), x.reshape(-1))
    check(ops.flatten(t, 1), x.reshape(2, 12))
    check(ops.flatten(t, 0, 1), x.reshape(6, 4))
    check(ops.ravel(t), x.ravel())
    check(ops.tile(t, 2), np.tile(x, 2))
    check(ops.tile(t, (2, 1, 1, 2)), np.tile(x, (2, 1, 1, 2)))
    check(ops.flip(t), np.flip(x))
    check(ops.flip(t, 1), np.flip(x, 1))
    check(ops.roll(t, 2), np.roll(x, 2))
    check(ops.roll(t, (1, -1), (0, 2)), np.roll(x, (1, -1), (0, 2)))
    check(ops.repeat(t, 2), np.repeat(x, 2))
    check(ops.repeat(t, 3, axis=1), np.repeat(x, 3, axis=1))
    check(ops.repeat(t, [1, 0, 2], axis=1), np.repeat(x, [1, 0, 2], axis=1))
    check(ops.tril(t), np.tril(x))
    check(ops.triu(t, 1), np.triu(x, 1))
    a, b = ops.broadcast_arrays(Tensor(x[:1, :, :1]), 2)
    assert a.shape == b.shape == (1, 3, 1)


def test_joining_and_splitting(rng):
    x = random_array(rng, (2, 3), "float32")
    y = random_array(rng, (2, 5), "int32")
    check(ops.concat([Tensor(x), Tensor(y)], axis=1), np.concatenate([x, y], axis=1))
    check(ops.concatenate([x, x], axis=None), np.concatenate([x, x], axis=None))
    check(ops.stack([Tensor(x), x.astype(np.float64)], axis=-1),
          np.stack([x, x.astype(np.float64)], axis=-1))
    z = random_array(rng, (6, 4), "float32")
    for piece, expected in zip(ops.split(Tensor(z), 3), np.split(z, 3)):
        check(piece, expected)
    for piece, expected in zip(ops.split(Tensor(z), [1, 3], axis=1), np.split(z, [1], axis=1)):
        check(piece, expected)
    for points in ([2, 5], [-2], [4, 1], [10]):
        pieces = ops.split_at(Tensor(z), points)
        expected = np.split(z, points)
        assert len(pieces) == len(expected)
        for piece, e in zip(pieces, expected):
            check(piece, e)
    with pytest.raises(ValueError, match="cannot be divided into 4 equal sections"):
        ops.split(Tensor(z), 4)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_matches_numpy(rng, mode):
    x = random_array(rng, (3, 4), "float32")
    for width in (1, (1, 2), ((0, 1), (2, 3))):
        expected = np.pad(x, width, mode=mode)
        check(ops.pad(Tensor(x), width, mode=mode), expected)
    check(ops.pad(Tensor(x), 2, constant_values=7), np.pad(x, 2, constant_values=7))


# -- indexing ops -----------------------------------------------------------------------------


def test_take_family_normalises_negative_indices(rng):
    x = random_array(rng, (4, 5), "float32")
    idx = np.array([[0, -1], [3, -4]])
    check(ops.take(Tensor(x), idx), np.take(x, idx))
    check(ops.take(Tensor(x), idx, axis=1), np.take(x, idx, axis=1))
    check(ops.gather(Tensor(x), [-1, 0], 0), x[[-1, 0]])
    along = np.array([[0, -1, 2], [1, 1, -5], [4, 0, 0], [-2, 3, 1]])
    check(ops.take_along_axis(Tensor(x), along, 1), np.take_along_axis(x, along, 1))
    tuples = np.array([[0, -1], [-4, 2]])
    check(ops.gather_nd(Tensor(x), tuples), x[tuple(tuples.T)])
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 5"):
        ops.take(Tensor(x), [5], axis=1)
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 0 with size 4"):
        ops.gather_nd(Tensor(x), [[-5, 0]])


def test_scatters(rng):
    x = random_array(rng, (4, 3), "float32")
    rows = np.array([[1], [3], [1], [-1]])
    updates = random_array(rng, (4, 3), "float32")
    expected = x.copy()
    np.add.at(expected, rows[:, 0], updates)
    check(ops.scatter_nd(Tensor(x), rows, updates, reduce="add"), expected)
    index = np.array([[2, 0, 1], [0, 0, 3]])
    src = np.ones((2, 3), np.float32)
    expected = torch.from_numpy(x.T.copy()).scatter_reduce(
        1, torch.from_numpy(index), torch.from_numpy(src), "sum")
    check(ops.scatter(Tensor(x.T), 1, index, src, reduce="add"), expected.numpy())


def test_one_hot_embedding_nonzero(rng):
    labels = np.array([0, 2, 1, 5])  # 5 is out of range: an all-off row
    expected = np.zeros((4, 3), np.float32)
    expected[np.arange(3), labels[:3]] = 1
    check(ops.one_hot(Tensor(labels), 3), expected)
    check(ops.one_hot(labels, 3, axis=0, dtype="int32", on_value=5, off_value=-1),
          np.where(expected.T == 1, 5, -1).astype(np.int32))
    table = random_array(rng, (5, 2), "float32")
    ids = np.array([[4, 0], [1, 1]])
    check(ops.embedding(Tensor(ids), Tensor(table)), table[ids])
    mask = rng.random((3, 4)) < 0.5
    for got, expected in zip(ops.nonzero(Tensor(mask)), np.nonzero(mask)):
        check(got, expected.astype(np.int64))
    for got, expected in zip(ops.where(Tensor(mask)), np.nonzero(mask)):
        check(got, expected.astype(np.int64))


# -- creation and apply -----------------------------------------------------------------------


def test_creation():
    check(ops.arange(5), np.arange(5))
    check(ops.arange(2, 11, 3), np.arange(2, 11, 3))
    check(ops.arange(5, 0, -2), np.arange(5, 0, -2))
    check(ops.arange(0, 1, 0.25), np.arange(0, 1, 0.25, dtype=np.float32))
    check(ops.arange(3, dtype="float16"), np.arange(3, dtype=np.float16))
    check(ops.arange(3, 3), np.arange(3, 3))
    check(ops.linspace(0, 1, 11), np.linspace(0, 1, 11, dtype=np.float32))
    assert ops.linspace(-1, 7, 9)[-1].item() == 7.0
    check(ops.linspace(0, 1, 4, endpoint=False),
          np.linspace(0, 1, 4, endpoint=False, dtype=np.float32))
    check(ops.linspace(0, 10, 4, dtype="int32"), np.linspace(0, 10, 4, dtype=np.int32))
    check(ops.eye(3), np.eye(3, dtype=np.float32))
    check(ops.eye(3, 4, k=-1, dtype="int64"), np.eye(3, 4, k=-1, dtype=np.int64))
    check(ops.zeros((2, 3)), np.zeros((2, 3), np.float32))
    check(ops.ones(3, "int8"), np.ones(3, np.int8))
    check(ops.full((2,), 7), np.full(2, 7))
    check(ops.full((2,), 0.5, "float16"), np.full(2, 0.5, np.float16))
    x = Tensor(np.ones((2, 2), np.int16))
    check(ops.zeros_like(x), np.zeros((2, 2), np.int16))
    check(ops.ones_like(x, "float64"), np.ones((2, 2)))
    check(ops.full_like(x, 3), np.full((2, 2), 3, np.int16))
    check(ops.asarray([Tensor(1.0), 2.0]), np.array([1.0, 2.0], np.float32))


def test_apply_runs_any_registered_op():
    y = ops.apply("add", np.ones(2, np.float32), Tensor(np.ones(2, np.float32)))
    check(y, np.full(2, 2.0, np.float32))
    parts = ops.apply("split", np.arange(5), axis=0, sizes=(2, 3))
    assert isinstance(parts, tuple) and [p.shape for p in parts] == [(2,), (3,)]
    with pytest.raises(OpError, match="operands must have the same dtype"):
        ops.apply("add", np.ones(2, np.float32), np.ones(2, np.float64))  # no promotion


# -- errors -----------------------------------------------------------------------------------


def test_shape_mismatch_names_both_shapes_and_the_callers_line():
    with pytest.raises(OpError) as info:
        ops.add(ops.ones((2, 3)), ops.ones((4,)))
    message = str(info.value)
    assert "[2, 3]" in message and "[4]" in message
    assert "test_functional.py" in message


def test_axis_errors():
    with pytest.raises(np.exceptions.AxisError):
        ops.swapaxes(ops.ones((2, 3)), 0, 2)
    with pytest.raises(OpError, match="axis 3 is out of range for rank 2"):
        ops.sum(ops.ones((2, 3)), 3)


# -- traced == eager --------------------------------------------------------------------------


def _model(x, w, labels):
    h = ops.conv2d(x, w, padding="same")
    h = ops.relu(ops.layer_norm(h, h.shape[1:]))
    pooled = ops.mean(ops.max_pool2d(h, 2), axis=(2, 3))
    logits = ops.matmul(pooled, ops.transpose(ops.reshape(w[:, :, 1, 1], (3, 4))))
    probs = ops.softmax(logits * 2 - 1, axis=-1)
    loss = -ops.sum(ops.log_softmax(logits) * ops.one_hot(labels, 3)) / labels.shape[0]
    picked = ops.take_along_axis(probs, ops.expand_dims(labels, 1), 1)
    clipped = ops.clip(ops.where(probs > 0.3, probs, -probs), -0.2, 0.9)
    ranked = ops.topk(ops.cumsum(probs, 1), 2)[1]
    return loss, picked, clipped, ops.argsort(probs), ranked, ops.var(h, (0, 1), ddof=1)


def test_traced_function_gives_eager_results(rng):
    x = random_array(rng, (2, 3, 6, 6), "float32")
    w = random_array(rng, (4, 3, 3, 3), "float32")
    labels = np.array([2, 0])
    eager = _model(Tensor(x), Tensor(w), Tensor(labels))
    types = [TensorType(to_dtype(a.dtype), a.shape) for a in (x, w, labels)]
    graph, _, captured = trace_function(_model, types, "model")
    assert not captured
    traced = compile_graph(graph)(x, w, labels)
    assert len(traced) == len(eager)
    for got, want in zip(traced, eager):
        assert got.dtype == want.numpy().dtype
        assert_close(got, want.numpy(), want.dtype)


def test_traced_python_scalars_each_keep_their_value():
    # every scalar becomes a temporary concrete tensor, embedded as a constant by the trace
    def chain(x):
        for k in range(6):
            x = ops.add(ops.multiply(x, 2.0), float(10**k))
        return x

    graph, _, _ = trace_function(chain, [TensorType(mskernel.float64, ())], "chain")
    (got,) = compile_graph(graph)(np.float64(1.0))
    assert got == chain(Tensor(np.float64(1.0))).item()


def test_out_of_range_python_ints_are_refused():
    with pytest.raises(OverflowError, match="Python int 1000 is out of range for int8"):
        ops.add(Tensor(np.ones(2, np.int8)), 1000)


def test_lists_promote_like_the_tensors_they_would_become():
    assert ops.add(Tensor(np.ones(2, np.float32)), [1.0, 2.0]).dtype.name == "float32"


def test_bfloat16_repr_prints_no_more_digits_than_the_type_holds():
    x = Tensor(np.array([1 / 3, 2.25, -384.0]), "bfloat16")
    assert repr(x) == "Tensor([0.334, 2.25, -384.], dtype=bfloat16)"


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_with_logits_matches_torch(reduction, weighted):
    rng = np.random.default_rng(4)
    logits = (rng.standard_normal((4, 3)) * 30).astype(np.float32)  # large: no overflow
    target = rng.uniform(0, 1, (4, 3)).astype(np.float32)
    weight = rng.uniform(0.5, 2, (4, 3)).astype(np.float32) if weighted else None
    pos_weight = rng.uniform(0.5, 2, 3).astype(np.float32) if weighted else None
    got = ops.binary_cross_entropy_with_logits(logits, target, weight, pos_weight, reduction)
    want = tnf.binary_cross_entropy_with_logits(
        *(torch.from_numpy(a) for a in (logits, target)), reduction=reduction,
        weight=None if weight is None else torch.from_numpy(weight),
        pos_weight=None if pos_weight is None else torch.from_numpy(pos_weight))
    assert got.shape == tuple(want.shape)
    assert_close(got.numpy(), want.numpy(), mskernel.float32)
    with pytest.raises(ValueError, match="reduction must be one of mean, sum, none"):
        ops.binary_cross_entropy_with_logits(logits, target, reduction="avg")
