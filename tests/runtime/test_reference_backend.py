"""The reference backend runs every core op through the full compile path (passes,
partitioning, device arrays) and agrees with the interpreter."""

import numpy as np
import pytest

from mskernel.ir.types import TensorType
from mskernel.runtime import CompileOptions, DeviceArray, RefCell, compile_graph
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import all_samples, assert_close, sample_graph

SAMPLES = list(all_samples(seed=1, owner="mskernel"))


def fresh(args):
    """Copies of the sample's arguments (refs are mutated by running)."""
    return [RefCell(a.type, np.copy(a.value)) if isinstance(a, RefCell) else a for a in args]


@pytest.mark.parametrize("sample", SAMPLES, ids=str)
def test_compiled_reference_run_equals_interpreter(sample):
    graph = sample_graph(sample)
    expected_args = fresh(sample.args)
    expected = run_graph(graph, expected_args)
    compiled = compile_graph(graph, backends=["reference"],
                             options=CompileOptions(opt_level=0, fallback="deny"))
    actual_args = fresh(sample.args)
    actual = compiled.run(actual_args)
    for value, got, want in zip(graph.outputs, actual, expected):
        if isinstance(value.type, TensorType):
            assert isinstance(got, DeviceArray) and got.backend.name == "reference"
            assert_close(got.to_host(), want, value.type.dtype, what=str(sample))
    for got, want in zip(actual_args, expected_args):
        if isinstance(got, RefCell):
            assert_close(got.value.to_host(), want.value, got.type.dtype, what=str(sample))
