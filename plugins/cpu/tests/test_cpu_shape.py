"""Shape kernels on shapes larger than the samples (threaded and tiled paths, rank 4-5
permutations, negative steps, long pads, zero-size dimensions), bit-exact against the
reference interpreter (NumPy)."""

from __future__ import annotations

import numpy as np
import pytest

from mskernel_sdk import (
    CompileOptions, OpSample, compile_graph, random_array, run_reference, sample_graph,
)

import mskernel_cpu

WHOLE, BEFORE = 2**63 - 1, -(2**63)

# (op, input shapes, attributes, dtypes tried)
CASES = [
    ("transpose", [(64, 32, 8, 16)], {"perm": (0, 2, 1, 3)}, ("float32", "bfloat16")),
    ("transpose", [(8, 6, 10, 12, 14)], {"perm": (4, 2, 0, 3, -4)},
     ("int16", "int32", "complex128")),
    ("transpose", [(30, 20, 43)], {"perm": (2, 1, 0)}, ("float32", "uint8", "float64")),
    ("transpose", [(300, 203)], {}, ("float16", "int16", "int64", "complex64")),
    ("transpose", [(16, 40, 9, 24)], {"perm": (0, 2, 3, 1)},
     ("bfloat16", "float64", "complex128", "bool")),
    ("transpose", [(700, 513)], {}, ("float32", "uint8", "complex128", "bool")),
    ("transpose", [(3, 90, 4, 200)], {"perm": (3, 1, 2, 0)}, ("float64",)),
    ("transpose", [(0, 5, 3)], {"perm": (2, 0, 1)}, ("float32",)),
    ("flip", [(300, 501)], {"axes": (0, -1)}, ("float32", "int8")),
    ("flip", [(40, 50, 60)], {"axes": (1,)}, ("complex64",)),
    ("slice", [(900, 700)], {"starts": (-1, 3), "stops": (BEFORE, WHOLE), "steps": (-3, 2)},
     ("float32", "uint16")),
    ("slice", [(20, 30, 400)], {"starts": (5, 390), "stops": (WHOLE, -400), "steps": (1, -7),
                                "axes": (1, 2)}, ("int64",)),
    ("slice", [(200, 300)], {"starts": (10,), "stops": (10,), "axes": (0,)}, ("float32",)),
    ("slice", [(20000, 30)], {"starts": (1, 29), "stops": (WHOLE, BEFORE), "steps": (1, -2)},
     ("float32", "complex64")),
    ("flip", [(3000, 7)], {"axes": (1,)}, ("uint8",)),
    ("broadcast_to", [(1, 500, 1)], {"shape": (64, 500, 33)}, ("float32", "bool")),
    ("broadcast_to", [(700,)], {"shape": (300, 700)}, ("complex128",)),
    ("tile", [(3, 257)], {"reps": (40, 5)}, ("float32", "int8")),
    ("tile", [(1, 1)], {"reps": (2, 3, 70000)}, ("float64",)),
    ("repeat", [(1000, 300)], {"repeats": 3, "axis": 1}, ("float32",)),
    ("repeat", [(2000, 300)], {"repeats": 2}, ("uint8",)),
    ("repeat", [(40, 30, 20)], {"repeats": 4, "axis": -2}, ("complex64",)),
    ("reshape", [(256, 1024)], {"shape": (-1, 64, 8)}, ("float32",)),
    ("squeeze", [(1, 300, 1, 700)], {}, ("int32",)),
    ("expand_dims", [(300, 700)], {"axes": (0, -1)}, ("bfloat16",)),
    ("concat", [(300, 400), (20, 400), (0, 400), (500, 400)], {"axis": 0}, ("float32",)),
    ("concat", [(300, 100), (300, 3), (300, 700)], {"axis": -1}, ("int16", "complex128")),
    ("stack", [(200, 300)] * 3, {"axis": 1}, ("float32", "bool")),
    ("stack", [(200, 300)] * 2, {"axis": -1}, ("float64",)),
    ("split", [(900, 400)], {"axis": 0, "sizes": (100, 0, 800)}, ("float32",)),
    ("split", [(300, 200, 7)], {"axis": 1, "sizes": (1, 150, 49)}, ("uint8", "complex64")),
    ("pad", [(300, 400)], {"pads": (5, 7, 3, 400), "value": 2.5}, ("float32", "bfloat16")),
    ("pad", [(30, 40, 50)], {"pads": (-3, 70, 100, -10, 4, 4), "mode": "reflect"},
     ("float64", "int8")),
    ("pad", [(3, 400)], {"pads": (9, 9, -100, 7), "mode": "edge"}, ("complex64",)),
    ("pad", [(0, 400)], {"pads": (2, 1, 1, 1), "value": 1.0}, ("bool",)),
    ("tril", [(8, 300, 200)], {"k": 5}, ("float32", "complex128")),
    ("triu", [(8, 200, 300)], {"k": -7}, ("int8", "bool")),
    ("triu", [(50, 60)], {"k": 2**62}, ("float64",)),
]


def run_both(op, arrays, attrs, dtypes):
    sample = OpSample(op, tuple(arrays), attrs, dtypes=dtypes)
    graph = sample_graph(sample)
    compiled = compile_graph(graph, backends=["cpu"],
                             options=CompileOptions(fallback="deny"))
    got = [out.to_host() for out in compiled.run(list(arrays))]
    want = run_reference(graph, list(arrays))
    return got, want


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op, shapes, attrs, dtypes", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_shape_op_matches_reference(op, shapes, attrs, dtypes, threads):
    rng = np.random.default_rng(0)
    previous = mskernel_cpu.get_num_threads()
    mskernel_cpu.set_num_threads(threads)
    try:
        for dt in dtypes:
            arrays = [random_array(rng, s, dt, -100, 100) for s in shapes]
            got, want = run_both(op, arrays, attrs, (dt,) * len(arrays))
            assert len(got) == len(want)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.shape == w.shape, (op, dt)
                np.testing.assert_array_equal(g, w, err_msg=f"{op} {dt}")
    finally:
        mskernel_cpu.set_num_threads(previous)


@pytest.mark.parametrize("shape, axis, dt", [
    ((500, 700), 0, "float32"), ((500, 700), -1, "int64"), ((3, 100000, 2), 1, "float16"),
    ((40000,), 0, "bfloat16"), ((300, 3), 0, "complex128"),
])
def test_iota_large(shape, axis, dt):
    got, want = run_both("iota", [], {"shape": shape, "axis": axis, "dtype": dt}, None)
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("value, dt", [
    (0.1, "float16"), (-7.0, "int8"), (1.0, "bool"), (3.5, "complex64"), (1e300, "float64"),
    (1.8e19, "uint64"), (0.3, "bfloat16"),
])
def test_full_large(value, dt):
    got, want = run_both("full", [], {"shape": (300, 1001), "value": value, "dtype": dt}, None)
    np.testing.assert_array_equal(got[0], want[0])


def test_constant_large():
    value = np.random.default_rng(1).standard_normal((300, 301))
    got, want = run_both("constant", [], {"value": value}, None)
    np.testing.assert_array_equal(got[0], want[0])
