"""Indexing, ordering, scans and einsum on shapes larger than the conformance samples (threaded
and blocked paths, axes other than the last), against NumPy and PyTorch as oracles; run-time
index errors; results independent of the thread count."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from mskernel.ops.sorting import stable_order
from mskernel_sdk import GraphBuilder, tensor_type

import mskernel_cpu

RNG = np.random.default_rng(7)


@pytest.fixture
def run(compile_cpu):
    """``run(op, *arrays, **attrs)``: the op's outputs computed on the cpu backend alone."""

    def run_op(op, *arrays, **attrs):
        b = GraphBuilder(op)
        inputs = [b.input(tensor_type(str(a.dtype), a.shape)) for a in arrays]
        out = b.op(op, *inputs, **attrs)
        outs = list(out) if isinstance(out, tuple) else [out]
        results = compile_cpu(b.build(outs))(*arrays)
        return results if isinstance(out, tuple) else results[0]

    return run_op


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    before = mskernel_cpu.get_num_threads()
    mskernel_cpu.set_num_threads(request.param)
    yield request.param
    mskernel_cpu.set_num_threads(before)


def with_ties_and_nans(shape):
    x = np.round(RNG.uniform(-3, 3, shape)).astype(np.float32)
    x[RNG.random(shape) < 0.1] = np.nan
    return x


# ---- gathers ----------------------------------------------------------------------------


def test_embedding_matches_torch(run):
    table = RNG.random((50000, 256), np.float32)
    ids = RNG.integers(0, 50000, (64, 128))
    want = torch.nn.functional.embedding(torch.from_numpy(ids), torch.from_numpy(table))
    np.testing.assert_array_equal(run("embedding", table, ids), want.numpy())


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_along_each_axis(run, threads, axis):
    x = RNG.standard_normal((40, 50, 60))
    idx = RNG.integers(0, x.shape[axis], (7, 9)).astype(np.int32)
    np.testing.assert_array_equal(run("gather", x, idx, axis=axis), np.take(x, idx, axis=axis))


def test_gather_nd_and_take_along_axis(run, threads):
    x = RNG.standard_normal((30, 40, 50)).astype(np.float32)
    idx = np.stack([RNG.integers(0, 30, (20, 10)), RNG.integers(0, 40, (20, 10))], axis=-1)
    np.testing.assert_array_equal(run("gather_nd", x, idx), x[idx[..., 0], idx[..., 1]])
    picks = RNG.integers(0, 40, (30, 25, 1)).astype(np.uint8)
    np.testing.assert_array_equal(run("take_along_axis", x, picks, axis=1),
                                  np.take_along_axis(x, picks, axis=1))


@pytest.mark.parametrize("op, args, attrs, message", [
    ("embedding", (np.zeros((5, 2), np.float32), np.array([[0, 1], [5, 2]])), {},
     r"index 5 at ids\[1, 0\] is out of range for the table's rows of size 5"),
    ("gather", (np.zeros((5, 2), np.float32), np.array([1, -1], np.int8)), {"axis": 0},
     r"index -1 at indices\[1\] is out of range for axis 0 of size 5"),
    ("take_along_axis", (np.zeros((2, 5)), np.array([[0, 1], [7, 9]])), {"axis": 1},
     r"index 7 at indices\[1, 0\] is out of range for axis 1 of size 5"),
    ("scatter_nd", (np.zeros((3, 4)), np.array([[0, 1], [2, 9]]), np.ones(2)), {},
     r"index 9 at indices\[1, 1\] is out of range for dimension 1 of size 4"),
])
def test_out_of_range_index_names_op_index_and_range(run, op, args, attrs, message):
    with pytest.raises(IndexError, match=rf"{op}: {message}; IR indices lie in \[0, \d\)"):
        run(op, *args, **attrs)


# ---- scatters ---------------------------------------------------------------------------


@pytest.mark.parametrize("reduce, ufunc", [("add", np.add), ("max", np.maximum),
                                           ("mul", np.multiply)])
def test_scatter_duplicates_combine_in_index_order(run, threads, reduce, ufunc):
    x = RNG.standard_normal((100, 300))
    idx = RNG.integers(0, 100, (400, 300))
    updates = RNG.uniform(0.5, 1.5, (400, 300))
    want = x.copy()
    ufunc.at(want, (idx, np.arange(300)[None, :]), updates)
    np.testing.assert_array_equal(run("scatter", x, idx, updates, axis=0, reduce=reduce), want)


def test_scatter_nd_add_and_last_write_wins(run, threads):
    x = RNG.standard_normal((50, 64)).astype(np.float32)
    idx = RNG.integers(0, 50, (2000, 1))
    updates = RNG.standard_normal((2000, 64)).astype(np.float32)
    added = x.copy()
    np.add.at(added, idx[:, 0], updates)
    np.testing.assert_array_equal(run("scatter_nd", x, idx, updates, reduce="add"), added)
    replaced = x.copy()
    for i, row in enumerate(idx[:, 0]):
        replaced[row] = updates[i]
    np.testing.assert_array_equal(run("scatter_nd", x, idx, updates, reduce="none"), replaced)


def test_one_hot_along_first_axis(run):
    idx = RNG.integers(-1, 12, (300, 7))
    want = np.moveaxis(np.where(idx[..., None] == np.arange(10), 2.0, -1.0), -1, 0)
    got = run("one_hot", idx, depth=10, axis=0, on_value=2.0, off_value=-1.0)
    np.testing.assert_array_equal(got, want.astype(np.float32))


# ---- ordering ---------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_argsort_are_stable_with_nans_last(run, threads, axis, descending):
    x = with_ties_and_nans((512, 1000))
    order = stable_order(x, axis, descending)
    np.testing.assert_array_equal(run("argsort", x, axis=axis, descending=descending), order)
    np.testing.assert_array_equal(run("sort", x, axis=axis, descending=descending),
                                  np.take_along_axis(x, order, axis=axis))


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float64", "float16", "bool"])
def test_argsort_keys_of_every_width(run, dtype):
    x = with_ties_and_nans((300, 200)).astype(dtype) if dtype[0] == "f" else (
        RNG.integers(-200, 200, (300, 200)).astype(dtype))
    for axis in (0, 1):
        for descending in (False, True):
            np.testing.assert_array_equal(run("argsort", x, axis=axis, descending=descending),
                                          stable_order(x, axis, descending))


def test_sort_matches_torch_on_distinct_values(run):
    x = RNG.standard_normal((512, 1000))
    np.testing.assert_array_equal(run("sort", x, axis=0),
                                  torch.sort(torch.from_numpy(x), dim=0).values.numpy())


@pytest.mark.parametrize("largest", [True, False])
def test_topk_picks_what_a_stable_sort_would(run, threads, largest):
    x = with_ties_and_nans((300, 2000))
    picked = stable_order(x, 1, largest)[:, :17]
    values, indices = run("topk", x, k=17, largest=largest)
    np.testing.assert_array_equal(indices, picked)
    np.testing.assert_array_equal(values, np.take_along_axis(x, picked, axis=1))
    values, indices = run("topk", x, k=17, largest=largest, sorted=False)
    np.testing.assert_array_equal(indices, np.sort(picked, axis=1))


# ---- scans ------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1])
def test_scans_along_each_axis(run, threads, axis):
    x = RNG.standard_normal((512, 1000)).astype(np.float32)
    np.testing.assert_array_equal(
        run("cumsum", x, axis=axis), np.cumsum(x, axis=axis, dtype=np.float64).astype(np.float32))
    rev = np.flip(np.cumsum(np.flip(x, axis), axis=axis, dtype=np.float64), axis)
    np.testing.assert_array_equal(run("cumsum", x, axis=axis, reverse=True),
                                  rev.astype(np.float32))
    x[RNG.random(x.shape) < 0.01] = np.nan
    np.testing.assert_array_equal(run("cummax", x, axis=axis), np.maximum.accumulate(x, axis))
    ints = RNG.integers(-100, 100, (300, 200)).astype(np.int8)
    np.testing.assert_array_equal(run("cumprod", ints, axis=axis, exclusive=True),
                                  np.concatenate([np.ones_like(np.take(ints, [0], axis)),
                                                  np.cumprod(ints, axis, dtype=np.int8)],
                                                 axis)[tuple(slice(0, n) for n in ints.shape)])


# ---- einsum -----------------------------------------------------------------------------


@pytest.mark.parametrize("equation, shapes", [
    ("bhqd,bhkd->bhqk", ((8, 4, 64, 32), (8, 4, 64, 32))),
    ("bhqk,bhkd->bhqd", ((8, 4, 64, 64), (8, 4, 64, 32))),
    ("bqhd,bkhd->bhqk", ((4, 32, 4, 16), (4, 48, 4, 16))),
    ("ij,kj", ((100, 64), (80, 64))),
    ("ii,ij->j", ((50, 50), (50, 30))),
    ("...i,i->...", ((6, 7, 40), (40,))),
])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_einsum_matches_torch(run, equation, shapes, dtype):
    operands = [RNG.standard_normal(s).astype(dtype) for s in shapes]
    want = torch.einsum(equation, *(torch.from_numpy(a) for a in operands)).numpy()
    rtol = 1e-12 if dtype == "float64" else 1e-4
    np.testing.assert_allclose(run("einsum", *operands, equation=equation), want, rtol=rtol,
                               atol=rtol)


def test_einsum_attention_scores_threaded(run, threads):
    q, k = (RNG.standard_normal((8, 4, 64, 32)).astype(np.float32) for _ in range(2))
    want = torch.einsum("bhqd,bhkd->bhqk", torch.from_numpy(q), torch.from_numpy(k)).numpy()
    np.testing.assert_allclose(run("einsum", q, k, equation="bhqd,bhkd->bhqk"), want,
                               rtol=1e-4, atol=1e-4)


def test_einsum_integers_and_three_operands(run):
    a, b, c = (RNG.integers(-5, 5, s).astype(np.int32) for s in ((20, 30), (30, 40), (40, 10)))
    np.testing.assert_array_equal(run("einsum", a, b, c, equation="ab,bc,cd->ad"),
                                  np.einsum("ab,bc,cd->ad", a, b, c))
    half = RNG.standard_normal((16, 64, 32)).astype(np.float16)
    np.testing.assert_allclose(run("einsum", half, half, equation="bij,bkj->bik"),
                               np.einsum("bij,bkj->bik", *(half.astype(np.float32),) * 2),
                               rtol=2e-3, atol=2e-2)
