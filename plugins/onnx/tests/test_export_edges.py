"""Edge cases the op samples touch only lightly, checked across their whole range: Python's
slice rules (any start, stop and step, in or past range) and NumPy's padding modes with pads
past the axis, each exported and run under ONNX Runtime against the reference."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from mskernel_onnx.export import to_onnx
from mskernel_sdk import GraphBuilder, run_reference, tensor_type
from onnx_checks import run_ort

BOUND = st.integers(-9, 9) | st.sampled_from([2**63 - 1, -(2**63)])


def _run(op, shape, **attrs):
    b = GraphBuilder(op)
    x = b.input(tensor_type("f32", shape), name="x")
    graph = b.build([b.op(op, x, **attrs)])
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    (got,) = run_ort(to_onnx(graph), [data])
    np.testing.assert_array_equal(got, run_reference(graph, [data])[0])


@settings(max_examples=60, deadline=None)
@given(start=BOUND, stop=BOUND, step=st.integers(-4, 4).filter(bool), size=st.integers(1, 6))
def test_slices_follow_pythons_rules(start, stop, step, size):
    _run("slice", (size, 2), starts=(start,), stops=(stop,), steps=(step,), axes=(0,))


@settings(max_examples=40, deadline=None)
@given(mode=st.sampled_from(["constant", "reflect", "edge"]), size=st.integers(2, 4),
       lo=st.integers(-1, 9), hi=st.integers(-1, 9))
def test_pads_of_every_mode_and_width(mode, size, lo, hi):
    _run("pad", (size, 3), pads=(lo, hi, 0, 1), mode=mode, value=-1.5)
