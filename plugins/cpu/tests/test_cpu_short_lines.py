"""argmax/argmin along short contiguous lines (a pooling window, as the max_pool gradient
reads them): the branch-free scan agrees with the reference, ties and NaNs included, on both
sides of the short-line limit."""

from __future__ import annotations

import numpy as np
import pytest

from mskernel_sdk import GraphBuilder, run_reference, tensor_type


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("dt", ["f32", "f64", "bf16", "i32"])
@pytest.mark.parametrize("shape", [(300, 4), (50, 7), (10, 32), (10, 33), (0, 4), (5, 1)])
def test_short_lines_match_the_reference(cpu, executable, op, dt, shape):
    b = GraphBuilder("short")
    x = b.input(tensor_type(dt, shape))
    graph = b.build([b.op(op, x, axis=-1, keepdims=True)])
    rng = np.random.default_rng(shape[0])
    values = rng.integers(0, 3, shape).astype(np.float64)  # many ties
    if dt != "i32" and values.size:
        values[rng.random(shape) < 0.05] = np.nan
    host = values.astype(np.int32) if dt == "i32" else values.astype(
        np.float32 if dt in ("f32", "bf16") else np.float64)
    got = executable(graph).run([cpu.to_device(host, x.type)])[0].to_host()
    np.testing.assert_array_equal(got, run_reference(graph, [host])[0])
