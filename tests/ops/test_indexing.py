"""Indexing ops: the reference against PyTorch and loop oracles on every sample of the table,
duplicate-index rules, out-of-range indices and typing errors."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from mskernel.errors import OpError
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.ir.dtypes import dtype as to_dtype
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import OpSample, assert_close, sample_graph, samples_for

TORCH_REDUCE = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}
COMBINE = {"none": lambda old, new: new, "add": np.add, "mul": np.multiply,
           "max": np.maximum, "min": np.minimum}


def T(a):
    return torch.from_numpy(np.array(a))  # a writable C-ordered copy; keeps 0-d arrays 0-d


def T64(indices):
    return T(indices.astype(np.int64))


def run(op, *args, **attrs):
    return run_graph(sample_graph(OpSample(op, args, attrs)), list(args))


def apply(op, *types, **attrs):
    b = GraphBuilder()
    return b.op(op, *[b.input(tensor_type(dt, shape)) for dt, shape in types], **attrs)


def gather_oracle(x, indices, axis):
    ax = axis % x.ndim
    picked = torch.index_select(T(x), ax, T64(indices).reshape(-1))
    return picked.reshape(x.shape[:ax] + indices.shape + x.shape[ax + 1:]).numpy()


def take_along_axis_oracle(x, indices, axis):
    """torch.gather, after broadcasting x and indices outside the axis by hand."""
    ax = axis % x.ndim
    outer = np.broadcast_shapes(*(a.shape[:ax] + (1,) + a.shape[ax + 1:] for a in (x, indices)))
    grow = [outer[:ax] + (a.shape[ax],) + outer[ax + 1:] for a in (x, indices)]
    xb, ib = np.broadcast_to(x, grow[0]), np.broadcast_to(indices, grow[1])
    return torch.gather(T(xb), ax, T64(ib)).numpy()


def gather_nd_oracle(x, indices):
    out = np.empty(indices.shape[:-1] + x.shape[indices.shape[-1]:], x.dtype)
    for b in np.ndindex(*indices.shape[:-1]):
        out[b] = x[tuple(int(i) for i in indices[b])]
    return out


def scatter_in_order(x, indices, updates, axis, reduce):
    """Apply the updates one at a time in row-major order of the indices."""
    out = x.copy()
    for p in np.ndindex(*indices.shape):
        target = list(p)
        target[axis % x.ndim] = int(indices[p])
        out[tuple(target)] = COMBINE[reduce](out[tuple(target)], updates[p])
    return out


def scatter_oracle(x, indices, updates, axis, reduce):
    if reduce == "none":  # torch leaves duplicates unspecified; mskernel: the last one wins
        return scatter_in_order(x, indices, updates, axis, reduce)
    return T(x).scatter_reduce(axis, T64(indices), T(updates), TORCH_REDUCE[reduce],
                               include_self=True).numpy()


def scatter_nd_oracle(x, indices, updates, reduce):
    out = x.copy()
    for b in np.ndindex(*indices.shape[:-1]):
        at = tuple(int(i) for i in indices[b])
        out[at] = COMBINE[reduce](out[at], updates[b])
    return out


def one_hot_oracle(indices, depth, axis, dtype, on_value, off_value):
    idx = T64(indices)
    valid = (idx >= 0) & (idx < depth)
    hot = F.one_hot(torch.where(valid, idx, 0), max(depth, 1))[..., :depth].bool()
    tdt = getattr(torch, dtype.name)
    values = torch.where(hot & valid[..., None], torch.tensor(on_value, dtype=tdt),
                         torch.tensor(off_value, dtype=tdt)).movedim(-1, axis)
    return (values.float() if tdt == torch.bfloat16 else values).numpy()


ORACLES = {
    "gather": gather_oracle,
    "take_along_axis": take_along_axis_oracle,
    "gather_nd": gather_nd_oracle,
    "scatter": scatter_oracle,
    "scatter_nd": scatter_nd_oracle,
    "one_hot": one_hot_oracle,
    "embedding": lambda table, ids: F.embedding(T64(ids), T(table)).numpy(),
}

SAMPLES = [s for op in ORACLES for s in samples_for(op)]


def test_every_indexing_op_has_an_oracle():
    from mskernel.ops.indexing import OPS

    assert sorted(op.name for op in OPS) == sorted(ORACLES)


@pytest.mark.parametrize("sample", SAMPLES, ids=str)
def test_reference_matches_oracle(sample):
    graph = sample_graph(sample)
    (out_type,) = graph.output_types
    (actual,) = run_graph(graph, list(sample.args))
    want = np.asarray(ORACLES[sample.op](*sample.args, **graph.nodes[0].attrs))
    assert (actual.shape, actual.dtype) == (want.shape, want.dtype), sample
    assert_close(actual, want, out_type.dtype, what=str(sample))


# --- duplicates and semantics ----------------------------------------------------------------

def test_scatter_none_with_duplicates_keeps_the_last_update_in_row_major_order():
    x = np.zeros((2, 3), np.float32)
    indices = np.array([[1, 0, 1], [1, 1, 1]])
    updates = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    (out,) = run("scatter", x, indices, updates, axis=0)
    np.testing.assert_array_equal(out, [[0, 2, 0], [4, 5, 6]])
    (out,) = run("scatter_nd", np.zeros(3, np.float32), np.array([[2], [0], [2]]),
                 np.array([7, 8, 9], np.float32))
    np.testing.assert_array_equal(out, [8, 0, 9])


def test_scatter_without_duplicates_matches_torch_scatter():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 5))
    indices = np.stack([rng.permutation(4)[:3] for _ in range(5)], axis=1)  # unique per column
    updates = rng.normal(size=(3, 5))
    (out,) = run("scatter", x, indices, updates, axis=0)
    np.testing.assert_array_equal(out, T(x).scatter(0, T64(indices), T(updates)).numpy())


def test_scatter_nd_add_accumulates_duplicates_like_index_put():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 3, 2))
    indices = rng.integers(0, 3, size=(10, 2))
    updates = rng.normal(size=(10, 2))
    (out,) = run("scatter_nd", x, indices, updates, reduce="add")
    want = T(x).index_put_((T(indices[:, 0]), T(indices[:, 1])), T(updates), accumulate=True)
    np.testing.assert_allclose(out, want.numpy(), rtol=1e-12)


def test_one_hot_out_of_range_indices_give_all_off_rows():
    (out,) = run("one_hot", np.array([1, -1, 3, 2]), depth=3, on_value=5.0, off_value=-1.0)
    want = np.full((4, 3), -1.0, np.float32)
    want[0, 1] = want[3, 2] = 5.0
    np.testing.assert_array_equal(out, want)


def test_gather_with_index_array_follows_np_take_shape():
    x = np.arange(24.0).reshape(2, 3, 4)
    (out,) = run("gather", x, np.array([[2, 0], [1, 1]]), axis=1)
    assert out.shape == (2, 2, 2, 4)
    np.testing.assert_array_equal(out[:, 1, 0], x[:, 1])


# --- out-of-range indices --------------------------------------------------------------------

@pytest.mark.parametrize("op, args, attrs, message", [
    ("gather", (np.zeros((3, 4)), np.array([[2, 7]])), {"axis": 1},
     r"gather: index 7 at indices\[0, 1\] is out of range for axis 1 of size 4"),
    ("gather", (np.zeros((3, 4)), np.array([-1])), {"axis": 0},
     r"gather: index -1 at indices\[0\] .* size 3; IR indices lie in \[0, 3\) "
     r"\(negative indices are normalised by the frontend"),
    ("take_along_axis", (np.zeros((2, 3)), np.array([[0], [3]])), {"axis": -1},
     r"take_along_axis: index 3 at indices\[1, 0\] is out of range for axis 1 of size 3"),
    ("gather_nd", (np.zeros((3, 4)), np.array([[2, 1], [0, 9]])), {},
     r"gather_nd: index 9 at indices\[1, 1\] is out of range for dimension 1 of size 4"),
    ("scatter", (np.zeros((2, 2)), np.array([[0, 5]]), np.ones((1, 2))), {"axis": 0},
     r"scatter: index 5 at indices\[0, 1\] is out of range for axis 0 of size 2"),
    ("scatter_nd", (np.zeros(3), np.array([[3]]), np.ones(1)), {"reduce": "add"},
     r"scatter_nd: index 3 at indices\[0, 0\] is out of range for dimension 0 of size 3"),
    ("embedding", (np.zeros((5, 2)), np.array([[1, 5]], np.uint8)), {},
     r"embedding: index 5 at ids\[0, 1\] is out of range for the table's rows of size 5"),
])
def test_out_of_range_index_names_op_index_and_size(op, args, attrs, message):
    with pytest.raises(IndexError, match=message):
        run(op, *args, **attrs)


# --- typing errors ---------------------------------------------------------------------------

F34 = ("f32", (3, 4))


@pytest.mark.parametrize("op, types, attrs, message", [
    ("gather", [F34, ("f32", (2,))], {"axis": 0}, r"indices must have an integer dtype"),
    ("gather", [F34, ("i64", (2,))], {"axis": 2}, r"axis 2 is out of range for rank 2"),
    ("take_along_axis", [F34, ("i64", (4,))], {"axis": 0}, r"must have the same rank"),
    ("take_along_axis", [F34, ("i64", (2, 4))], {"axis": 1},
     r"x f32\[3,4\] and indices i64\[2,4\] do not broadcast outside axis 1"),
    ("gather_nd", [F34, ("i64", (2, 3))], {}, r"index tuples of length 3 .* rank of x f32\[3,4\]"),
    ("gather_nd", [F34, ("i64", ())], {}, r"indices must have rank 1 or more"),
    ("scatter", [F34, ("i64", (2, 4)), ("f32", (2, 3))], {"axis": 0},
     r"updates must have the shape of indices"),
    ("scatter", [F34, ("i64", (2, 5)), ("f32", (2, 5))], {"axis": 0},
     r"indices i64\[2,5\] is larger than x f32\[3,4\] along axis 1"),
    ("scatter", [F34, ("i64", (2, 4)), ("f64", (2, 4))], {"axis": 0}, r"same dtype"),
    ("scatter", [F34, ("i64", (2, 4)), ("f32", (2, 4))], {"axis": 0, "reduce": "mean"},
     r"reduce must be one of none, add, mul, max, min, got 'mean'"),
    ("scatter", [("c64", (3,)), ("i64", (2,)), ("c64", (2,))], {"axis": 0, "reduce": "max"},
     r"reduce 'max' is not defined for complex64"),
    ("scatter_nd", [("bool", (3,)), ("i64", (2, 1)), ("bool", (2,))], {"reduce": "add"},
     r"reduce 'add' is not defined for bool"),
    ("scatter_nd", [F34, ("i64", (5, 1)), ("f32", (5, 3))], {},
     r"updates must have shape \[5, 4\] .* got \[5, 3\]"),
    ("one_hot", [("i64", (3,))], {"depth": -1}, r"depth must be non-negative"),
    ("one_hot", [("i64", (3,))], {"depth": 2, "dtype": "int32", "on_value": 0.5},
     r"on_value 0.5 is not representable in int32"),
    ("one_hot", [("i64", (3,))], {"depth": 2, "axis": 2}, r"axis 2 is out of range for rank 2"),
    ("embedding", [("f32", (3,)), ("i64", (2,))], {}, r"table must be a \[vocabulary, features\]"),
    ("embedding", [F34, ("f32", (2,))], {}, r"ids must have an integer dtype"),
])
def test_bad_input_names_the_problem(op, types, attrs, message):
    with pytest.raises(OpError, match=rf"op '{op}'.*{message}"):
        apply(op, *types, **attrs)


def test_index_dtype_may_be_any_integer_width():
    for idt in ("uint8", "int8", "int32", "uint64"):
        out = apply("gather", F34, (to_dtype(idt), (2,)), axis=1)
        assert out.type.shape == (3, 2)
