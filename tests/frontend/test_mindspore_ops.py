"""MindSpore's functional ``ops`` that the core composes: its keywords and aliases, and the
linear-algebra, statistics and shape helpers, each against NumPy or PyTorch, eager and under
``@jit``."""

import math

import numpy as np
import pytest
import torch

import mskernel as ms
from mskernel import ops
from mskernel.frontend.functional.names import ALIASES, KEYWORDS
from mskernel.frontend.tensor import TracedValueError

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4, 5)).astype(np.float32)


def both_modes(fn, *args):
    """``fn(*args)`` eagerly and under ``@jit``, checked equal; the eager result."""
    eager = fn(*args)
    compiled = ms.jit(fn)(*args)
    for e, c in zip(eager if isinstance(eager, tuple) else (eager,),
                    compiled if isinstance(compiled, tuple) else (compiled,)):
        np.testing.assert_array_equal(np.asarray(e), np.asarray(c))
    return eager


# -- keywords and aliases -----------------------------------------------------------------------


def test_reductions_take_mindspore_and_mint_keywords():
    want = X.mean(axis=1, keepdims=True)
    for kwargs in ({"axis": 1, "keep_dims": True}, {"dim": 1, "keepdim": True},
                   {"axis": 1, "keepdims": True}):
        np.testing.assert_allclose(ops.mean(X, **kwargs).numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ops.sum(input=X, dim=(0, 2)).numpy(), X.sum((0, 2)), rtol=1e-5)
    np.testing.assert_array_equal(ops.argmax(X, dim=-1).numpy(), X.argmax(-1))
    np.testing.assert_array_equal(ops.maximum(input=X, other=0).numpy(), np.maximum(X, 0))
    np.testing.assert_array_equal(ops.transpose(X, input_perm=(2, 0, 1)).numpy(),
                                  X.transpose(2, 0, 1))
    np.testing.assert_array_equal(ops.tile(X, multiples=(1, 2, 1)).numpy(), np.tile(X, (1, 2, 1)))
    np.testing.assert_array_equal(ops.flatten(X, start_dim=1).numpy(), X.reshape(3, 20))


def test_tensor_methods_take_the_keywords_too():
    t = ms.Tensor(X)
    np.testing.assert_allclose(t.mean(axis=1, keep_dims=True).numpy(),
                               X.mean(1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t.sum(dim=2, keepdim=True).numpy(), X.sum(2, keepdims=True),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(t.argmax(dim=0).numpy(), X.argmax(0))


def test_both_spellings_of_one_argument_is_an_error_naming_the_op():
    with pytest.raises(TypeError, match=r"mean\(\) got 'keep_dims' and 'keepdims'"):
        ops.mean(X, keep_dims=True, keepdims=True)


def test_keywords_keep_the_signature_and_the_hot_path_object_for_ops_without_them():
    import inspect

    assert list(inspect.signature(ops.mean).parameters)[:3] == ["x", "axis", "keepdims"]
    assert ops.mean.__module__ == "mskernel.frontend.functional.reduction"
    assert all(ours != ms_name for ms_name, ours in KEYWORDS.items())


@pytest.mark.parametrize("alias, name", sorted(ALIASES.items()))
def test_every_alias_is_the_op_it_names(alias, name):
    assert getattr(ops, alias) is getattr(ops, name)


def test_aliases_compute_what_mindspore_s_names_do():
    np.testing.assert_array_equal(ops.cat((X, X), 1).numpy(), np.concatenate((X, X), 1))
    np.testing.assert_array_equal(ops.reverse(X, [0, 2]).numpy(), X[::-1, :, ::-1])
    np.testing.assert_array_equal(ops.range(1, 9, 3).numpy(), [1, 4, 7])
    np.testing.assert_allclose(ops.reduce_mean(X, 2).numpy(), X.mean(2), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ops.select(X > 0, X, 0).numpy(), np.where(X > 0, X, 0))


def test_creation_in_mindspore_s_argument_order():
    assert ops.eye(2, 3, ms.int32).dtype is ms.int32
    np.testing.assert_array_equal(ops.eye(3, 4, k=1).numpy(), np.eye(3, 4, 1))
    filled = ops.fill(ms.float16, (2, 3), 7)
    assert filled.dtype is ms.float16 and (filled.numpy() == 7).all()
    on, off = ms.Tensor(4.0, ms.float64), ms.Tensor(-1.0, ms.float64)
    hot = ops.one_hot(np.array([0, 2, 5]), 3, on, off)
    assert hot.dtype is ms.float64
    np.testing.assert_array_equal(hot.numpy(), [[4, -1, -1], [-1, -1, 4], [-1, -1, -1]])
    assert ops.one_hot(np.array([1]), 2, axis=0).shape == (2, 1)


# -- linear algebra -----------------------------------------------------------------------------


def test_tensordot_kron_cross_diagonal_trace_against_numpy():
    y = RNG.standard_normal((4, 5, 2)).astype(np.float32)
    np.testing.assert_allclose(both_modes(ops.tensordot, X, y).numpy(), np.tensordot(X, y, 2),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ops.tensordot(X, y, ((1, 2), (0, 1))).numpy(),
                               np.tensordot(X, y, ((1, 2), (0, 1))), rtol=1e-5, atol=1e-5)
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((4, 1, 2))
    np.testing.assert_allclose(both_modes(ops.kron, a, b).numpy(), np.kron(a, b))
    u, v = RNG.standard_normal((5, 3)), RNG.standard_normal((1, 3))
    np.testing.assert_allclose(both_modes(ops.cross, u, v).numpy(), np.cross(u, v))
    np.testing.assert_allclose(ops.cross(u.T, v.T, dim=0).numpy(), np.cross(u.T, v.T, axis=0))
    for offset in (-5, -2, 0, 1, 4, 6):
        np.testing.assert_array_equal(ops.diagonal(X, offset, 1, 2).numpy(),
                                      np.diagonal(X, offset, 1, 2))
    assert math.isclose(float(ops.trace(X[0])), float(np.trace(X[0])), rel_tol=1e-6)
    with pytest.raises(ValueError, match=r"cross: axis 0 of f64\[5,3\] and f64\[5,3\] must"):
        ops.cross(u, v, 0)


@pytest.mark.parametrize("ord, axis", [
    (None, None), (2, -1), (1, 1), (math.inf, 0), (-math.inf, 2), (0, -1), (3, (1,)),
    (0.5, 2), ("fro", (1, 2)), (1, (1, 2)), (-1, (2, 1)), (math.inf, (1, 2)),
    (-math.inf, (0, 2)), ("nuc", (1, 2)), (2, (2, 0)), (-2, (0, 1)),
])
def test_norm_is_torch_linalg_norm(ord, axis):
    want = torch.linalg.norm(torch.tensor(X), ord, axis).numpy()
    np.testing.assert_allclose(ops.norm(X, ord, axis).numpy(), want, rtol=1e-5)
    assert ops.norm(X, ord, axis, keepdim=True).shape == \
        torch.linalg.norm(torch.tensor(X), ord, axis, keepdim=True).shape


def test_an_unknown_matrix_norm_says_which_are_known():
    with pytest.raises(ValueError, match=r"no matrix norm ord=3; 'fro', 'nuc', ±1, ±2 and ±inf"):
        ops.norm(X[0], 3, (0, 1))


# -- statistics and search ----------------------------------------------------------------------


def test_isclose_and_allclose_follow_numpy_on_infinities_and_nan():
    a = np.array([1.0, np.inf, np.nan, 1e-9, 1.0, -np.inf])
    b = np.array([1.0, np.inf, np.nan, 0.0, np.inf, np.inf])
    for equal_nan in (False, True):
        got = both_modes(lambda p, q: ops.isclose(p, q, equal_nan=equal_nan), a, b)
        np.testing.assert_array_equal(got.numpy(), np.isclose(a, b, equal_nan=equal_nan))
    assert bool(ops.allclose(X, X * (1 + 1e-6))) and not bool(ops.allclose(X, X + 1e-3))


def test_nan_to_num_logaddexp_diff_count_nonzero():
    v = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)
    np.testing.assert_array_equal(both_modes(ops.nan_to_num, v).numpy(), np.nan_to_num(v))
    np.testing.assert_array_equal(ops.nan_to_num(v, 1, 2, 3).numpy(), [1, 2, 3, 1.5])
    p, q = np.array([-np.inf, 1.0, 1000.0, 3.0]), np.array([-np.inf, 2.0, 1000.0, -np.inf])
    np.testing.assert_allclose(both_modes(ops.logaddexp, p, q).numpy(), np.logaddexp(p, q))
    np.testing.assert_allclose(ops.diff(X, 2, 1).numpy(), np.diff(X, 2, 1), rtol=1e-6)
    m = np.array([[0, 1, 2], [3, 0, 0]])
    np.testing.assert_array_equal(both_modes(ops.count_nonzero, m).numpy(),
                                  np.count_nonzero(m))
    np.testing.assert_array_equal(ops.count_nonzero(m, 1).numpy(), np.count_nonzero(m, 1))


def test_median_is_mindspore_s_lower_median_with_its_index():
    values, indices = both_modes(ops.median, X)
    want = torch.median(torch.tensor(X), -1)
    np.testing.assert_array_equal(values.numpy(), want.values.numpy())
    np.testing.assert_array_equal(indices.numpy(), want.indices.numpy())
    assert ops.median(X, 0, keepdims=True)[0].shape == (1, 4, 5)


@pytest.mark.parametrize("q, axis, keepdims", [
    (0.3, None, False), ([0.0, 0.25, 1.0], 1, False), ([0.5, 0.9], 2, True), (0.75, None, True),
])
def test_quantile_is_torch_s(q, axis, keepdims):
    want = torch.quantile(torch.tensor(X), torch.tensor(q), axis, keepdims).numpy()
    got = both_modes(lambda x: ops.quantile(x, q, axis, keepdims), X)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


def test_searchsorted_is_numpy_s_on_both_sides_and_batched():
    boundaries = np.array([1, 3, 5, 7, 9.0])
    values = np.array([[3, 6, 9.5], [0, 10, 5]])
    np.testing.assert_array_equal(both_modes(ops.searchsorted, boundaries, values).numpy(),
                                  np.searchsorted(boundaries, values))
    right = ops.searchsorted(boundaries, values, right=True, out_int32=True)
    assert right.dtype is ms.int32
    np.testing.assert_array_equal(right.numpy(), np.searchsorted(boundaries, values, "right"))
    rows = np.sort(RNG.standard_normal((3, 6)), 1)
    probes = RNG.standard_normal((3, 4))
    np.testing.assert_array_equal(ops.searchsorted(rows, probes, side="right").numpy(),
                                  torch.searchsorted(torch.tensor(rows), torch.tensor(probes),
                                                     right=True).numpy())


def test_unique_and_bincount_read_the_values_and_say_so_under_jit():
    values, inverse = ops.unique(np.array([[3, 1], [3, 2]]))
    np.testing.assert_array_equal(values.numpy(), [1, 2, 3])
    np.testing.assert_array_equal(inverse.numpy(), [[2, 0], [2, 1]])
    data, weights = np.array([0, 1, 1, 4]), np.array([0.5, 1, 1, 2], np.float32)
    np.testing.assert_array_equal(ops.bincount(data).numpy(), np.bincount(data))
    np.testing.assert_array_equal(ops.bincount(data, weights, minlength=7).numpy(),
                                  np.bincount(data, weights, minlength=7))
    with pytest.raises(TracedValueError, match=r"unique of a traced .* run it outside @jit"):
        ms.jit(ops.unique)(data)
    with pytest.raises(TracedValueError, match=r"bincount of a traced .* pass length="):
        ms.jit(ops.bincount)(data)
    fixed = ms.jit(lambda d: ops.bincount(d, length=3))(np.array([0, 1, 1, 4, -1]))
    np.testing.assert_array_equal(fixed.numpy(), [1, 2, 0])
    with pytest.raises(ValueError, match="bincount: the values must be non-negative"):
        ops.bincount(np.array([1, -2]))


# -- shape helpers ------------------------------------------------------------------------------


def test_chunk_unbind_narrow_and_stacks_against_torch():
    t = torch.tensor(X)
    for chunks in (1, 2, 3, 4, 7):
        got = ops.chunk(X, chunks, 2)
        want = torch.chunk(t, chunks, 2)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    for g, w in zip(both_modes(lambda x: ops.unbind(x, 1), X), torch.unbind(t, 1)):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    np.testing.assert_array_equal(ops.narrow(X, -1, 1, 3).numpy(), X[..., 1:4])
    with pytest.raises(ValueError, match=r"narrow: 3 elements from 3 do not fit in axis 2"):
        ops.narrow(X, 2, 3, 3)
    a, b = np.arange(3), np.arange(3, 6)
    for fn, ref in ((ops.hstack, np.hstack), (ops.vstack, np.vstack)):
        np.testing.assert_array_equal(fn([a, b]).numpy(), ref([a, b]))
        np.testing.assert_array_equal(fn([X, X]).numpy(), ref([X, X]))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_is_numpy_s(indexing):
    axes = (np.arange(3), np.arange(4.0), np.arange(2))
    for count in (1, 2, 3):
        got = both_modes(lambda *a: ops.meshgrid(*a, indexing=indexing), *axes[:count])
        for g, w in zip(got, np.meshgrid(*axes[:count], indexing=indexing)):
            np.testing.assert_array_equal(g.numpy(), w)


@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2, 3, 5])
def test_rot90_is_numpy_s(k):
    np.testing.assert_array_equal(ops.rot90(X, k, (0, 2)).numpy(), np.rot90(X, k, (0, 2)))
    np.testing.assert_array_equal(ops.rot90(X, k, dims=(2, 1)).numpy(), np.rot90(X, k, (2, 1)))


def test_masked_fill_and_index_add_against_torch():
    t = torch.tensor(X)
    np.testing.assert_array_equal(both_modes(lambda x: ops.masked_fill(x, x > 0, 2), X).numpy(),
                                  t.masked_fill(t > 0, 2).numpy())
    index = np.array([0, 2, 0])
    source = RNG.standard_normal((3, 3, 5)).astype(np.float32)
    want = t.index_add(1, torch.tensor(index), torch.tensor(source), alpha=2).numpy()
    got = both_modes(lambda x, s: ops.index_add(x, index, s, 1, alpha=2), X, source)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    with pytest.raises(ValueError, match=r"index_add: i64\[3\] indices and f32\[3,2,5\] updates"):
        ops.index_add(X, index, source[:, :2], 1)
