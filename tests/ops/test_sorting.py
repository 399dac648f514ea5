"""Sorting and scanning ops: the reference against PyTorch on every sample of the table,
stability and NaN order, topk's tie rule, the scan flags, and typing errors."""

import numpy as np
import pytest
import torch

from mskernel.errors import OpError
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import OpSample, assert_close, sample_graph, samples_for


def T(a):
    return torch.from_numpy(np.array(a))  # a writable C-ordered copy; keeps 0-d arrays 0-d


def run(op, *args, **attrs):
    return run_graph(sample_graph(OpSample(op, args, attrs)), list(args))


def apply(op, *types, **attrs):
    b = GraphBuilder()
    return b.op(op, *[b.input(tensor_type(dt, shape)) for dt, shape in types], **attrs)


def stable_sort(x, axis, descending):
    return torch.sort(T(x), dim=axis, descending=descending, stable=True)


def topk_oracle(x, k, axis, largest, sorted):
    """The first k of a stable sort (torch.topk breaks ties arbitrarily), in index order when
    not sorted."""
    picked = stable_sort(x, axis, largest).indices.narrow(axis, 0, k)
    if not sorted:
        picked = picked.sort(dim=axis).values
    return [torch.gather(T(x), axis, picked).numpy(), picked.numpy()]


def scan_oracle(scan, identity):
    """torch's cumsum/cumprod, with reverse and exclusive built from flip and cat; floats
    accumulate in double precision."""

    def oracle(x, axis, reverse, exclusive):
        t = T(x)
        wide = {True: torch.complex128, False: torch.float64}[t.is_complex()]
        acc = wide if t.is_floating_point() or t.is_complex() else t.dtype
        t = t.to(acc).flip(axis) if reverse else t.to(acc)
        out = scan(t, dim=axis, dtype=acc)
        if exclusive:
            start_shape = list(out.shape)
            start_shape[axis] = 1
            start = torch.full(start_shape, identity, dtype=acc)
            out = torch.cat([start, out], dim=axis).narrow(axis, 0, x.shape[axis])
        return (out.flip(axis) if reverse else out).to(T(x).dtype).numpy()

    return oracle


ORACLES = {
    "sort": lambda x, axis, descending: stable_sort(x, axis, descending).values.numpy(),
    "argsort": lambda x, axis, descending: stable_sort(x, axis, descending).indices.numpy(),
    "topk": topk_oracle,
    "cumsum": scan_oracle(torch.cumsum, 0),
    "cumprod": scan_oracle(torch.cumprod, 1),
    "cummax": lambda x, axis: torch.cummax(T(x), dim=axis).values.numpy(),
    "cummin": lambda x, axis: torch.cummin(T(x), dim=axis).values.numpy(),
}

SAMPLES = [s for op in ORACLES for s in samples_for(op)]


def test_every_sorting_op_has_an_oracle():
    from mskernel.ops.sorting import OPS

    assert sorted(op.name for op in OPS) == sorted(ORACLES)


@pytest.mark.parametrize("sample", SAMPLES, ids=str)
def test_reference_matches_oracle(sample):
    graph = sample_graph(sample)
    got = run_graph(graph, list(sample.args))
    expected = ORACLES[sample.op](*sample.args, **graph.nodes[0].attrs)
    expected = expected if isinstance(expected, list) else [expected]
    for actual, want, out_type in zip(got, expected, graph.output_types, strict=True):
        assert (actual.shape, actual.dtype) == (want.shape, want.dtype), sample
        assert_close(actual, want, out_type.dtype, what=str(sample))


@pytest.mark.parametrize("sample", samples_for("topk"), ids=str)
def test_topk_values_match_torch_topk(sample):
    graph = sample_graph(sample)
    attrs = graph.nodes[0].attrs
    x = sample.args[0]
    values, _ = run_graph(graph, [x])
    t = T(x.astype(np.uint8) if x.dtype == bool else x)  # torch.topk has no bool kernel
    want = torch.topk(t, attrs["k"], dim=attrs["axis"], largest=attrs["largest"]).values
    values, want = values.astype(np.float64), want.double().numpy()
    if not attrs["sorted"]:  # compare as sets: sort both the same way
        values, want = np.sort(values, attrs["axis"]), np.sort(want, attrs["axis"])
    np.testing.assert_array_equal(values, want)


# --- order: stability, NaN, ties -------------------------------------------------------------

def test_descending_sort_is_stable_and_puts_nan_first():
    x = np.array([1.0, np.nan, 3.0, 1.0, np.nan, 3.0, -np.inf])
    (order,) = run("argsort", x, descending=True)
    assert order.tolist() == [1, 4, 2, 5, 0, 3, 6]
    (order,) = run("argsort", x)
    assert order.tolist() == [6, 0, 3, 2, 5, 1, 4]
    (values,) = run("sort", x)
    np.testing.assert_array_equal(values, np.sort(x))


def test_topk_ties_go_to_the_lower_index():
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0])
    values, indices = run("topk", x, k=2)
    assert values.tolist() == [3.0, 3.0] and indices.tolist() == [1, 2]
    values, indices = run("topk", np.array([2, 1, 1, 1], np.int32), k=2, largest=False)
    assert indices.tolist() == [1, 2]


def test_unsorted_topk_keeps_index_order():
    values, indices = run("topk", np.array([5.0, 1.0, 7.0, 3.0, 6.0]), k=3, sorted=False)
    assert indices.tolist() == [0, 2, 4] and values.tolist() == [5.0, 7.0, 6.0]


def test_topk_counts_nan_as_largest():
    x = np.array([1.0, np.nan, 2.0])
    values, indices = run("topk", x, k=2)
    assert indices.tolist() == [1, 2] and np.isnan(values[0])
    _, indices = run("topk", x, k=2, largest=False)
    assert indices.tolist() == [0, 2]


# --- scans -----------------------------------------------------------------------------------

@pytest.mark.parametrize("op, flags, want", [
    ("cumsum", {}, [1, 3, 6, 10]),
    ("cumsum", {"exclusive": True}, [0, 1, 3, 6]),
    ("cumsum", {"reverse": True}, [10, 9, 7, 4]),
    ("cumsum", {"reverse": True, "exclusive": True}, [9, 7, 4, 0]),
    ("cumprod", {"exclusive": True}, [1, 1, 2, 6]),
    ("cumprod", {"reverse": True, "exclusive": True}, [24, 12, 4, 1]),
])
def test_scan_flags(op, flags, want):
    (out,) = run(op, np.array([1, 2, 3, 4], np.int32), axis=0, **flags)
    assert out.dtype == np.int32 and out.tolist() == want


def test_integer_scans_keep_the_dtype_and_wrap():
    (out,) = run("cumsum", np.array([100, 100, 100], np.int8), axis=0)
    assert out.dtype == np.int8 and out.tolist() == [100, -56, 44]


def test_float16_cumsum_is_rounded_once_from_a_wide_sum():
    x = np.full(3000, 0.1, np.float16)
    (out,) = run("cumsum", x, axis=0)
    exact = np.cumsum(x.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(out, exact)
    drifting = np.cumsum(x, dtype=np.float16)  # what accumulating in float16 would give
    assert abs(float(drifting[-1]) - 300.0) > 10 > abs(float(out[-1]) - 300.0)


def test_running_extremes_propagate_nan():
    (out,) = run("cummax", np.array([1.0, np.nan, 3.0]), axis=0)
    np.testing.assert_array_equal(out, [1.0, np.nan, np.nan])


# --- typing errors ---------------------------------------------------------------------------

@pytest.mark.parametrize("op, types, attrs, message", [
    ("sort", [("c64", (3,))], {}, r"complex values have no order.*c64\[3\]"),
    ("topk", [("f32", (2, 3))], {"k": 4}, r"k=4 is out of range for axis -1 of size 3"),
    ("topk", [("f32", (2, 3))], {"k": -1, "axis": 0}, r"k=-1 is out of range for axis 0 of size 2"),
    ("argsort", [("f32", ())], {}, r"axis -1 is out of range for rank 0"),
    ("cumsum", [("bool", (3,))], {"axis": 0}, r"cast bool to an integer type first"),
    ("cumprod", [("f32", (3,))], {"axis": 1}, r"axis 1 is out of range for rank 1"),
    ("cummax", [("c128", (3,))], {"axis": 0}, r"complex values have no order"),
])
def test_bad_input_names_the_problem(op, types, attrs, message):
    with pytest.raises(OpError, match=rf"op '{op}'.*{message}"):
        apply(op, *types, **attrs)
