"""``x[key]`` and ``x.at[key]`` against NumPy: a table of index expressions (basic, advanced,
mixed, masks), the same keys with tensor indices and under a trace, updates against NumPy
copies and ``ufunc.at``, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel
from mskernel.frontend.tensor import TracedValueError
from mskernel.frontend.trace import trace_function
from mskernel.ir.dtypes import dtype as to_dtype
from mskernel.ir.types import TensorType
from mskernel.runtime import compile_graph

Tensor = mskernel.Tensor


class _Keys:
    """``K[...]`` spells an index key."""

    def __getitem__(self, key):
        return key


K = _Keys()
SHAPE = (4, 5, 6)
X = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE)
M0 = np.array([True, False, True, True])  # a mask of axis 0
M2 = np.array([True, False, True, False])  # two hits: broadcasts with 2-element arrays
M1 = np.array([False, True, True, False, True])  # a mask of axis 1
M01 = (X[:, :, 0] % 3) == 1  # a 2-d mask of axes 0, 1
MALL = (X % 7) == 0  # a mask of every axis
MLAST = np.array([True, False, False, True, True, False])

KEYS = [
    # ints and slices
    K[0], K[-1], K[1, 2], K[-1, -2, -3], K[1:3], K[::2], K[::-1], K[-1:0:-2], K[:, 1:4:2],
    K[..., ::-2], K[1:-1, ::-1, 2], K[10:], K[-100:2], K[3:1], K[::-3, ::4], K[:, :, -2:],
    # None and Ellipsis
    K[None], K[:, None], K[..., None], K[None, ..., None, 0], K[...], K[2, ...], K[..., 3],
    K[None, 1, None, ::-1],
    # integer arrays
    K[[0, 2]], K[[-1, 0, -1]], K[np.array([[0, 1], [2, 3]])], K[:, [4, 0]], K[..., [1, -1]],
    K[[0, 1], [2, 3]], K[[[0], [1]], [0, 2, 4]], K[[0, 1], [2, 3], [4, 5]], K[[]],
    K[np.array(1), [0, 2]], K[np.array([2], np.uint8)],
    # mixed advanced and basic: adjacent advanced indices stay in place, separated ones go first
    K[[0, 1], :, [2, 3]], K[0, :, [1, 2]], K[:, [0, 1], [2, 3]], K[[0, 1], None, [0, 1]],
    K[None, [1, 2], 0], K[1:3, [0, 4], ::-2], K[[2], ..., [5]], K[::-1, [[0, 1]], [3]],
    K[:, [0, 1], None, [0, 1]], K[-1, [[1, 2], [3, 4]]], K[1:, 2, [0, -1]],
    # boolean masks
    K[M0], K[M01], K[:, M1], K[MALL], K[M0, 1], K[M2, :, [0, 1]], K[..., MLAST], K[None, M0],
    K[M01, ::-1], K[1, M1, 2:4],
]


def _ids(keys):
    return [repr(k).replace("\n", "")[:60] for k in keys]


def _with_tensors(key):
    """``key`` with every array (and list) index given as a tensor."""
    items = key if isinstance(key, tuple) else (key,)
    out = tuple(Tensor(np.asarray(k, np.int64) if isinstance(k, list) else k)
                if isinstance(k, (list, np.ndarray)) else k for k in items)
    return out if isinstance(key, tuple) else out[0]


def _has_mask(key):
    items = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, np.ndarray) and k.dtype == bool for k in items)


def test_the_table_is_large_enough():
    assert len(KEYS) >= 40


@pytest.mark.parametrize("key", KEYS, ids=_ids(KEYS))
def test_getitem_matches_numpy(key):
    expected = X[key]
    for k in (key, _with_tensors(key)):
        got = Tensor(X)[k]
        assert got.shape == expected.shape
        assert got.dtype is mskernel.float32
        np.testing.assert_array_equal(got.numpy(), expected)


TRACEABLE = [k for k in KEYS if not _has_mask(k)]


@pytest.mark.parametrize("key", TRACEABLE, ids=_ids(TRACEABLE))
def test_traced_getitem_matches_numpy(key):
    graph, _, _ = trace_function(lambda x: x[key], [TensorType(mskernel.float32, SHAPE)], "index")
    (got,) = compile_graph(graph)(X)
    np.testing.assert_array_equal(got, X[key])


def _traced_indices(fn, *indices):
    """Run ``fn(x, *indices)`` traced with the indices as graph inputs."""
    types = [TensorType(mskernel.float32, SHAPE)]
    types += [TensorType(to_dtype(np.asarray(i).dtype), np.shape(i)) for i in indices]
    graph, _, _ = trace_function(fn, types, "index")
    return compile_graph(graph)(X, *indices)[0]


def test_traced_index_arrays_are_normalised_and_placed_as_numpy():
    i, j = np.array([0, -1, 2]), np.array([[-2], [3]])
    got = _traced_indices(lambda x, i, j: x[i, :, j], i, j)
    np.testing.assert_array_equal(got, X[i, :, j])
    got = _traced_indices(lambda x, i: x[1:, i], i)
    np.testing.assert_array_equal(got, X[1:, i])
    got = _traced_indices(lambda x, n: x[n, ::-1], np.int64(-1))
    np.testing.assert_array_equal(got, X[-1, ::-1])
    got = _traced_indices(lambda x, n: x[n, [0, 1], 3], np.int32(-2))
    np.testing.assert_array_equal(got, X[-2, [0, 1], 3])


def test_traced_index_out_of_range_fails_when_run():
    with pytest.raises(IndexError, match="out of range"):
        _traced_indices(lambda x, n: x[n], np.int64(9))


# -- updates ----------------------------------------------------------------------------------

UPDATE_KEYS = [K[0], K[-1, 1:4], K[::-2, None, 3], K[..., [0, -1]], K[[0, 1], :, [2, 3]],
               K[M0, 1], K[:, M1], K[1:3, [0, 4], ::-2], K[None, 2, ...], K[[]]]


@pytest.mark.parametrize("key", UPDATE_KEYS, ids=_ids(UPDATE_KEYS))
def test_at_set_matches_numpy_assignment(key):
    rng = np.random.default_rng(0)
    values = rng.standard_normal(X[key].shape).astype(np.float32)
    x = Tensor(X)
    for v in (values, Tensor(values)):
        expected = X.copy()
        expected[key] = values
        np.testing.assert_array_equal(x.at[key].set(v).numpy(), expected)
    expected = X.copy()
    expected[key] = 7.5  # a scalar broadcasts
    np.testing.assert_array_equal(x.at[key].set(7.5).numpy(), expected)
    np.testing.assert_array_equal(x.numpy(), X)  # x itself is unchanged
    np.testing.assert_array_equal(x.at[key].get().numpy(), X[key])


@pytest.mark.parametrize("method, ufunc", [("add", np.add), ("multiply", np.multiply),
                                           ("min", np.minimum), ("max", np.maximum)])
def test_at_reductions_accumulate_duplicates_as_ufunc_at(method, ufunc):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    rows = np.array([1, 3, 1, -1, 1])
    values = rng.standard_normal((5, 3)).astype(np.float32)
    expected = x.copy()
    ufunc.at(expected, rows, values)
    got = getattr(Tensor(x).at[rows], method)(values)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
    expected = x.copy()
    ufunc.at(expected, (rows, 2), values[:, 0])
    got = getattr(Tensor(x).at[rows, 2], method)(values[:, 0])
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)


def test_at_set_with_duplicates_keeps_the_last_value_and_casts():
    x = Tensor(np.zeros(4, np.int32))
    np.testing.assert_array_equal(x.at[[1, 1, 2]].set([5, 6, 7]).numpy(), [0, 6, 7, 0])
    got = x.at[0].set(2.9)
    assert got.dtype is mskernel.int32 and got.numpy()[0] == 2


def test_traced_at_update_gives_eager_results():
    def fn(x, i):
        return x.at[i, ::2].add(1.0).at[..., -1].set(x[:, :, 0]).at[[0, 0], 1].multiply(2.0)

    graph, _, _ = trace_function(fn, [TensorType(mskernel.float32, SHAPE),
                                      TensorType(mskernel.int64, ())], "update")
    (got,) = compile_graph(graph)(X, np.int64(-2))
    eager = fn(Tensor(X), Tensor(np.int64(-2)))
    np.testing.assert_array_equal(got, eager.numpy())
    expected = X.copy()
    expected[-2, ::2] += 1
    expected[..., -1] = X[:, :, 0]
    expected[0, 1] *= 4
    np.testing.assert_array_equal(got, expected)


# -- errors -----------------------------------------------------------------------------------

ERRORS = [
    (K[4], IndexError, "index 4 is out of bounds for axis 0 with size 4"),
    (K[0, -6], IndexError, "index -6 is out of bounds for axis 1 with size 5"),
    (K[[0, 7]], IndexError, "index 7 is out of bounds for axis 0 with size 4"),
    (K[:, :, [[1], [-7]]], IndexError, "index -7 is out of bounds for axis 2 with size 6"),
    (K[0, 0, 0, 0], IndexError, "too many indices for tensor: tensor is 3-dimensional, but 4"),
    (K[..., 0, ...], IndexError, "single ellipsis"),
    (K[[0.5]], IndexError, "must be of integer type"),
    (K[np.array([True, False])], IndexError, "size of axis is 4 but size of corresponding "
                                             "boolean axis is 2"),
    (K[[0, 1], :, [0, 1, 2]], IndexError, r"could not be broadcast together with shapes \(2,\) "
                                          r"\(3,\)"),
    (K[::0], ValueError, "slice step cannot be zero"),
]


@pytest.mark.parametrize("key, error, message", ERRORS, ids=[e[2][:30] for e in ERRORS])
def test_index_errors_match_numpy(key, error, message):
    with pytest.raises(error, match=message):
        Tensor(X)[key]
    with pytest.raises(error):
        X[key]


def test_a_python_bool_is_not_an_index():
    # NumPy reads x[True] as x[None] and x[False] as an empty new axis; mskernel asks for
    # the explicit spelling
    with pytest.raises(TypeError, match="a bool is not an index; use None"):
        Tensor(X)[True]
    with pytest.raises(TypeError, match="a 0-d bool array is not an index"):
        Tensor(X)[np.array(True)]


def test_tensors_are_immutable():
    x = Tensor(X)
    with pytest.raises(TypeError, match=r"immutable.*\.at\[\.\.\.\]\.set"):
        x[0] = 1


def test_traced_masks_and_slice_bounds_explain_the_alternative():
    def masked(x):
        return x[x > 3]

    with pytest.raises(TracedValueError, match=r"where\(mask, x, fill\)"):
        trace_function(masked, [TensorType(mskernel.float32, SHAPE)], "masked")

    def window(x, i):
        return x[i:i + 2]

    with pytest.raises(TracedValueError, match="static bounds"):
        trace_function(window, [TensorType(mskernel.float32, SHAPE),
                                TensorType(mskernel.int64, ())], "window")
